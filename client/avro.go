package client

import (
	"errors"
	"fmt"
	"io"

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
	return unmarshalAvro(s.parsed, data, v)
}

func decodeAvro(def, payload []byte) (any, error) {
	s, err := avro.Parse(string(def))
	if err != nil {
		return nil, fmt.Errorf("%w: writer schema: %w", ErrSchema, err)
	}
	var v any
	if err := unmarshalAvro(s, payload, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// unmarshalAvro decodes payload with s into v. Unlike avro.Unmarshal, which takes a payload
// that ends before its value does for an empty value, it refuses one: a truncated letter
// does not decode. Bytes after the value are left unread, as upstream's decoders leave them.
func unmarshalAvro(s avro.Schema, payload []byte, v any) error {
	r := avro.NewReader(nil, 0).Reset(payload)
	r.ReadVal(s, v)
	switch {
	case errors.Is(r.Error, io.EOF) || errors.Is(r.Error, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: the payload (%d bytes) ends before the value does", ErrSchema, len(payload))
	case r.Error != nil:
		return fmt.Errorf("%w: %w", ErrSchema, r.Error)
	}
	return nil
}
