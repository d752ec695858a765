package client

import (
	"fmt"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// AvroSchema encodes and decodes Avro binary with github.com/hamba/avro/v2. Definition is
// the Avro schema JSON.
type AvroSchema struct {
	Definition string
	parsed     avro.Schema
}

// NewAvroSchema parses def.
func NewAvroSchema(def string) (*AvroSchema, error) {
	s, err := avro.Parse(def)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return &AvroSchema{Definition: def, parsed: s}, nil
}

func (*AvroSchema) Type() SchemaType { return pb.Schema_Avro }
func (s *AvroSchema) info() *pb.Schema {
	return &pb.Schema{Name: proto.String("Avro"), Type: pb.Schema_Avro.Enum(), SchemaData: []byte(s.Definition)}
}
func (s *AvroSchema) Encode(v any) ([]byte, error) {
	b, err := avro.Marshal(s.parsed, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return b, nil
}
func (s *AvroSchema) Decode(data []byte, v any) error {
	if err := avro.Unmarshal(s.parsed, data, v); err != nil {
		return fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return nil
}

func decodeAvro(def, payload []byte) (any, error) {
	s, err := avro.Parse(string(def))
	if err != nil {
		return nil, fmt.Errorf("%w: writer schema: %w", ErrSchema, err)
	}
	var v any
	if err := avro.Unmarshal(s, payload, &v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return v, nil
}
