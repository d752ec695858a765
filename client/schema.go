package client

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// SchemaType is the protocol's Schema.Type.
type SchemaType = pb.Schema_Type

// Schema encodes and decodes message values and describes itself to the broker.
type Schema interface {
	// Type is the schema type announced to the broker.
	Type() SchemaType
	// Encode turns a value into a payload.
	Encode(v any) ([]byte, error)
	// Decode fills v (a pointer) from a payload.
	Decode(data []byte, v any) error
	// info is what PRODUCER/SUBSCRIBE carry; nil sends no schema.
	info() *pb.Schema
}

// BytesSchema passes []byte through; it is what a nil schema means.
type BytesSchema struct{}

func (BytesSchema) Type() SchemaType { return pb.Schema_None }
func (BytesSchema) info() *pb.Schema { return nil }
func (BytesSchema) Encode(v any) ([]byte, error) {
	switch b := v.(type) {
	case []byte:
		return b, nil
	case string:
		return []byte(b), nil
	}
	return nil, fmt.Errorf("%w: bytes schema cannot encode %T", ErrSchema, v)
}
func (BytesSchema) Decode(data []byte, v any) error {
	switch p := v.(type) {
	case *[]byte:
		*p = append([]byte(nil), data...)
	case *any:
		*p = append([]byte(nil), data...)
	default:
		return fmt.Errorf("%w: bytes schema cannot decode into %T", ErrSchema, v)
	}
	return nil
}

// StringSchema is UTF-8 text.
type StringSchema struct{}

func (StringSchema) Type() SchemaType { return pb.Schema_String }
func (StringSchema) info() *pb.Schema {
	return &pb.Schema{Name: proto.String("String"), Type: pb.Schema_String.Enum(), SchemaData: []byte{}}
}
func (StringSchema) Encode(v any) ([]byte, error) {
	switch s := v.(type) {
	case string:
		return []byte(s), nil
	case []byte:
		return s, nil
	}
	return nil, fmt.Errorf("%w: string schema cannot encode %T", ErrSchema, v)
}
func (StringSchema) Decode(data []byte, v any) error {
	switch p := v.(type) {
	case *string:
		*p = string(data)
	case *any:
		*p = string(data)
	default:
		return fmt.Errorf("%w: string schema cannot decode into %T", ErrSchema, v)
	}
	return nil
}

// JSONSchema encodes values with encoding/json. Definition is the Avro-style schema JSON
// that upstream registers for JSON schemas (it may be empty).
type JSONSchema struct{ Definition string }

func (JSONSchema) Type() SchemaType { return pb.Schema_Json }
func (s JSONSchema) info() *pb.Schema {
	return &pb.Schema{Name: proto.String("JSON"), Type: pb.Schema_Json.Enum(), SchemaData: []byte(s.Definition)}
}
func (JSONSchema) Encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return b, nil
}
func (JSONSchema) Decode(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return nil
}

// AutoConsumeSchema decodes each message with the schema its producer wrote it with,
// fetched from the broker by version (and cached). Consumers with it announce AUTO_CONSUME
// on SUBSCRIBE when the broker speaks protocol v21 or later, so the broker records it and
// does not treat it as a schema of its own. Use Message.DecodeGeneric to decode.
type AutoConsumeSchema struct{}

func (AutoConsumeSchema) Type() SchemaType { return pb.Schema_AutoConsume }
func (AutoConsumeSchema) info() *pb.Schema {
	return &pb.Schema{Name: proto.String("AutoConsume"), Type: pb.Schema_AutoConsume.Enum(), SchemaData: []byte{}}
}
func (AutoConsumeSchema) Encode(any) ([]byte, error) {
	return nil, fmt.Errorf("%w: AUTO_CONSUME cannot encode", ErrSchema)
}
func (AutoConsumeSchema) Decode(data []byte, v any) error {
	return fmt.Errorf("%w: AUTO_CONSUME decodes through Message.DecodeGeneric", ErrSchema)
}

// schemaCache keeps writer schemas by topic and version.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*pb.Schema
}

func newSchemaCache() *schemaCache { return &schemaCache{m: make(map[string]*pb.Schema)} }

func (cl *Client) schemaAt(ctx context.Context, topic string, version []byte) (*pb.Schema, error) {
	key := topic + "\x00" + string(version)
	cl.schemas.mu.Lock()
	s, ok := cl.schemas.m[key]
	cl.schemas.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := cl.fetchSchema(ctx, topic, version)
	if err != nil {
		return nil, err
	}
	cl.schemas.mu.Lock()
	cl.schemas.m[key] = s
	cl.schemas.mu.Unlock()
	return s, nil
}

// DecodeGeneric decodes the message into a generic value: with a typed consumer schema, through it;
// with AUTO_CONSUME, through the writer's schema fetched by the message's schema version:
// JSON becomes map[string]any (or any JSON value), String a string, Avro a generic
// map[string]any, and anything else (or no schema) the raw []byte.
func (m *Message) DecodeGeneric(ctx context.Context) (any, error) {
	var s *pb.Schema
	switch m.schema.(type) {
	case nil, BytesSchema:
		return m.Payload, nil
	case AutoConsumeSchema:
		if m.consumer == nil {
			return m.Payload, nil
		}
		var err error
		topic := m.Topic
		if tn, perr := parseTopic(topic); perr == nil {
			topic = tn.Base().String()
		}
		if m.SchemaVersion == nil {
			s, err = m.consumer.cl.fetchSchema(ctx, topic, nil)
			if err != nil {
				return m.Payload, nil // no schema registered: bytes
			}
		} else if s, err = m.consumer.cl.schemaAt(ctx, topic, m.SchemaVersion); err != nil {
			return nil, err
		}
	default:
		var v any
		err := m.schema.Decode(m.Payload, &v)
		return v, err
	}
	return decodeGeneric(s, m.Payload)
}

// Decode fills v from the payload with the consumer's schema (BYTES when none).
func (m *Message) Decode(v any) error {
	s := m.schema
	if s == nil {
		s = BytesSchema{}
	}
	return s.Decode(m.Payload, v)
}

func decodeGeneric(s *pb.Schema, payload []byte) (any, error) {
	switch s.GetType() {
	case pb.Schema_String:
		return string(payload), nil
	case pb.Schema_Json:
		var v any
		if err := json.Unmarshal(payload, &v); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSchema, err)
		}
		return v, nil
	case pb.Schema_Avro:
		return decodeAvro(s.GetSchemaData(), payload)
	case pb.Schema_Bool:
		if len(payload) != 1 {
			return nil, fmt.Errorf("%w: boolean of %d bytes", ErrSchema, len(payload))
		}
		return payload[0] != 0, nil
	case pb.Schema_Int8:
		if len(payload) == 1 {
			return int8(payload[0]), nil
		}
	case pb.Schema_Int16:
		if len(payload) == 2 {
			return int16(binary.BigEndian.Uint16(payload)), nil
		}
	case pb.Schema_Int32:
		if len(payload) == 4 {
			return int32(binary.BigEndian.Uint32(payload)), nil
		}
	case pb.Schema_Int64:
		if len(payload) == 8 {
			return int64(binary.BigEndian.Uint64(payload)), nil
		}
	default:
		return payload, nil
	}
	return nil, fmt.Errorf("%w: %v value of %d bytes", ErrSchema, s.GetType(), len(payload))
}
