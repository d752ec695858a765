package client

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/hamba/avro/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// PayloadDecoder tells whether payloads decode with the schemas a broker holds: what a
// reader of raw bytes (a DLQ scan, a replay) needs for a filter's "payload decodes". It
// fetches each topic's schema at each version once (GET_SCHEMA, as the clients do) and keeps
// it, the answer "no schema" included, for its own life: make one per scan or run, so that a
// schema registered since is seen by the next. Safe for concurrent use.
type PayloadDecoder struct {
	cl    *Client
	mu    sync.Mutex
	known map[schemaKey]*payloadSchema // nil: the topic has no schema at that version
	// unschemed are the last (topic, REAL_TOPIC) of letters without a schema version that
	// CheckLetter found no schema for, as they came: a scan of a DLQ without schemas asks for
	// every letter, and comparing its names costs less than reading them and looking both up.
	unschemed [8][2]string
	next      int
}

type schemaKey struct{ topic, version string }

// payloadSchema is a schema ready to decode with.
type payloadSchema struct {
	typ  pb.Schema_Type
	avro avro.Schema // AVRO: the definition, parsed once
	err  error       // the definition itself does not parse: nothing can be told
}

// ErrNoSchema is what PayloadDecoder.Decode answers for a topic without a schema at the
// version asked.
var ErrNoSchema = errors.New("pulsar: no schema")

// NewPayloadDecoder makes a PayloadDecoder that asks through cl.
func (cl *Client) NewPayloadDecoder() *PayloadDecoder {
	return &PayloadDecoder{cl: cl, known: map[schemaKey]*payloadSchema{}}
}

// Decode decodes payload with the schema topic holds at version (nil: its newest). It
// returns nil when the payload decodes, ErrNoSchema when topic has no schema at that version,
// an error wrapping ErrSchema (the decoder's) when the payload does not decode, and any other
// error when it cannot tell: the broker did not answer, or the schema is of a type letterbox
// does not decode (PROTOBUF, PROTOBUF_NATIVE, KEY_VALUE).
func (d *PayloadDecoder) Decode(ctx context.Context, topic string, version []byte, payload []byte) error {
	s, err := d.schema(ctx, topic, version)
	if err != nil {
		return err
	}
	if s == nil {
		return ErrNoSchema
	}
	return s.check(payload)
}

// DecodeLetter decodes a dead letter's payload with the schema it was written with, by
// this rule (docs/dead-letters.md states it for users):
//   - a letter with a schema version: the DLQ's schema at that version, which the DLQ
//     router registered for the consumer that failed (the official clients' routers produce
//     with that consumer's schema); when the DLQ has no such version, the origin's
//     (REAL_TOPIC) at it; when neither has it, the payload does not decode (an error
//     wrapping ErrSchema);
//   - a letter without one (its router produced bytes): the origin's newest schema, else
//     the DLQ's newest, else none, and without a schema every payload decodes.
//
// It answers as Decode does, never ErrNoSchema.
func (d *PayloadDecoder) DecodeLetter(ctx context.Context, m *Message) error {
	_, err := d.CheckLetter(ctx, m)
	return err
}

// CheckLetter is DecodeLetter that also says whether a schema applied: schema is false when
// neither the DLQ nor the origin has one for the letter, so that it decodes because there is
// nothing to decode with.
func (d *PayloadDecoder) CheckLetter(ctx context.Context, m *Message) (schema bool, err error) {
	realTopic := m.Properties[PropertyRealTopic]
	if m.SchemaVersion == nil && d.knownUnschemed(m.Topic, realTopic) {
		return false, nil
	}
	dlq := naming.BaseName(m.Topic)
	origin := naming.BaseName(realTopic)
	topics := []string{dlq, origin}
	if m.SchemaVersion == nil {
		topics = []string{origin, dlq}
	}
	for _, t := range topics {
		if t == "" {
			continue
		}
		if err := d.Decode(ctx, t, m.SchemaVersion, m.Payload); !errors.Is(err, ErrNoSchema) {
			return true, err
		}
	}
	if m.SchemaVersion == nil {
		d.mu.Lock()
		d.unschemed[d.next] = [2]string{m.Topic, realTopic}
		d.next = (d.next + 1) % len(d.unschemed)
		d.mu.Unlock()
		return false, nil
	}
	return true, fmt.Errorf("%w: schema version %s is neither the DLQ's nor its origin's", ErrSchema, schemaVersionText(m.SchemaVersion))
}

// knownUnschemed reports whether CheckLetter found no schema for a letter of topic from
// realTopic without a schema version lately: the answer it keeps for its life (known).
func (d *PayloadDecoder) knownUnschemed(topic, realTopic string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, u := range d.unschemed {
		if u[0] == topic && u[1] == realTopic && topic != "" {
			return true
		}
	}
	return false
}

// schemaVersionText is a schema version as the admin API numbers it (8 bytes, big endian).
func schemaVersionText(v []byte) string {
	if len(v) == 8 {
		return fmt.Sprint(binary.BigEndian.Uint64(v))
	}
	return fmt.Sprintf("%x", v)
}

// schema is topic's schema at version, fetched once; nil when it has none.
func (d *PayloadDecoder) schema(ctx context.Context, topic string, version []byte) (*payloadSchema, error) {
	key := schemaKey{topic, string(version)}
	d.mu.Lock()
	s, ok := d.known[key]
	d.mu.Unlock()
	if ok {
		return s, nil
	}
	info, err := d.cl.fetchSchema(ctx, topic, version)
	switch {
	case errors.Is(err, ErrTopicNotFound) || errors.Is(err, ErrSchema):
		// Upstream answers TopicNotFound ("Topic not found or no-schema") for a topic
		// without a schema at that version; an answer without a schema means as much.
		s = nil
	case err != nil:
		return nil, fmt.Errorf("schema of %s: %w", topic, err)
	default:
		s = newPayloadSchema(info)
	}
	d.mu.Lock()
	d.known[key] = s
	d.mu.Unlock()
	return s, nil
}

func newPayloadSchema(info *pb.Schema) *payloadSchema {
	s := &payloadSchema{typ: info.GetType()}
	if s.typ == pb.Schema_Avro {
		if s.avro, s.err = avro.Parse(string(info.GetSchemaData())); s.err != nil {
			// Not ErrSchema: the payload is not known to be wrong, the schema is.
			s.err = fmt.Errorf("cannot tell whether payloads decode: the AVRO schema's definition does not parse: %w", s.err)
		}
	}
	return s
}

// fixedSizes are the payload sizes of the primitive schemas, as upstream's encode them (an
// Instant is seconds and nanoseconds; a LocalDateTime its day and its nanosecond of day).
var fixedSizes = map[pb.Schema_Type]int{
	pb.Schema_Bool: 1, pb.Schema_Int8: 1, pb.Schema_Int16: 2, pb.Schema_Int32: 4, pb.Schema_Int64: 8,
	pb.Schema_Float: 4, pb.Schema_Double: 8, pb.Schema_Date: 8, pb.Schema_Time: 8, pb.Schema_Timestamp: 8,
	pb.Schema_Instant: 12, pb.Schema_LocalDate: 8, pb.Schema_LocalTime: 8, pb.Schema_LocalDateTime: 16,
}

// check decodes payload, keeping nothing of it.
func (s *payloadSchema) check(payload []byte) error {
	if n, ok := fixedSizes[s.typ]; ok {
		if len(payload) != n {
			return fmt.Errorf("%w: a %v value is %d bytes, not %d", ErrSchema, s.typ, n, len(payload))
		}
		return nil
	}
	switch s.typ {
	case pb.Schema_None, pb.Schema_String:
		return nil // bytes, and text as upstream reads it (never refused)
	case pb.Schema_Json:
		var v json.RawMessage
		if err := json.Unmarshal(payload, &v); err != nil {
			return fmt.Errorf("%w: not JSON: %w", ErrSchema, err)
		}
		return nil
	case pb.Schema_Avro:
		if s.err != nil {
			return s.err
		}
		var v any
		return unmarshalAvro(s.avro, payload, &v)
	}
	return fmt.Errorf("cannot tell whether a payload decodes with a %v schema: letterbox does not decode them", s.typ)
}
