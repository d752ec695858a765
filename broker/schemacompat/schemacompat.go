package schemacompat

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// The errors Check and Validate wrap; test for them with errors.Is.
var (
	// ErrIncompatible: the candidate may not follow the existing schemas under the strategy
	// (upstream's IncompatibleSchemaException; the protocol's IncompatibleSchema).
	ErrIncompatible = errors.New("incompatible schema")
	// ErrInvalidSchema: a definition cannot be read (upstream's InvalidSchemaDataException).
	// A stored definition that cannot be read makes Check wrap both this and ErrIncompatible.
	ErrInvalidSchema = errors.New("invalid schema")
	// ErrInvalidStrategy: not one of upstream's strategy names.
	ErrInvalidStrategy = errors.New("invalid schema compatibility strategy")
)

// Schema is one schema as the protocol carries it.
type Schema struct {
	Type       pb.Schema_Type
	Data       []byte
	Properties map[string]string
}

// FromPB converts a protocol schema; nil gives the NONE schema.
func FromPB(s *pb.Schema) Schema {
	if s == nil {
		return Schema{}
	}
	out := Schema{Type: s.GetType(), Data: s.GetSchemaData()}
	if len(s.GetProperties()) > 0 {
		out.Properties = make(map[string]string, len(s.GetProperties()))
		for _, kv := range s.GetProperties() {
			out.Properties[kv.GetKey()] = kv.GetValue()
		}
	}
	return out
}

// Check reports whether candidate may be registered after existing (oldest first) under
// strategy: nil if so, else an error wrapping ErrIncompatible, ErrInvalidSchema or
// ErrInvalidStrategy. The package comment lists the rules.
func Check(strategy Strategy, existing []Schema, candidate Schema) error {
	if err := Validate(candidate); err != nil {
		return err
	}
	if strategy == "" || strategy == Undefined {
		strategy = DefaultStrategy
	}
	if !strategy.Valid() {
		return fmt.Errorf("%w %q", ErrInvalidStrategy, string(strategy))
	}
	if len(existing) == 0 || strategy == AlwaysCompatible {
		return nil
	}
	if !strategy.Transitive() {
		latest := existing[len(existing)-1]
		if latest.Type != candidate.Type {
			return incompatible("existing schema type %s, new schema type %s",
				TypeName(latest.Type), TypeName(candidate.Type))
		}
		if bytes.Equal(latest.Data, candidate.Data) {
			return nil
		}
		return checkLatest(strategy, latest, candidate)
	}
	for i, e := range existing {
		if e.Type != candidate.Type {
			return incompatible("existing schema %d (of %d, oldest first) has type %s, new schema type %s",
				i, len(existing), TypeName(e.Type), TypeName(candidate.Type))
		}
	}
	return checkAll(strategy, existing, candidate)
}

// checkLatest is upstream's single-schema checker entry point, used by non-transitive
// strategies; it differs from checkAll only for JSON.
func checkLatest(s Strategy, latest, candidate Schema) error {
	if candidate.Type == pb.Schema_Json {
		return checkJSONLatest(s, latest, candidate)
	}
	return checkAll(s, []Schema{latest}, candidate)
}

// checkAll runs the candidate type's checker over from (already known to share its type).
func checkAll(s Strategy, from []Schema, candidate Schema) error {
	switch candidate.Type {
	case pb.Schema_Avro, pb.Schema_Json:
		return checkAvro(s, from, candidate)
	case pb.Schema_ProtobufNative:
		return checkProtobufNative(s, from, candidate)
	case pb.Schema_KeyValue:
		return checkKeyValue(s, from, candidate)
	default:
		return checkDefault(s)
	}
}

// checkDefault is upstream's SchemaCompatibilityCheck.DEFAULT: no schema evolution rules.
func checkDefault(s Strategy) error {
	if s == AlwaysIncompatible {
		return incompatible("schema compatibility strategy is %s", AlwaysIncompatible)
	}
	return nil
}

// Validate reports whether s is well formed for its type (upstream's SchemaDataValidator); an
// error wraps ErrInvalidSchema.
func Validate(s Schema) error {
	switch s.Type {
	case pb.Schema_Avro:
		schema, err := parseAvro(s.Data)
		if err != nil {
			return invalid(s.Type, "%v", err)
		}
		if schema.union {
			return invalid(s.Type, "a top-level Avro union is not supported")
		}
	case pb.Schema_Protobuf:
		if _, err := parseAvro(s.Data); err != nil {
			return invalid(s.Type, "%v", err)
		}
	case pb.Schema_Json:
		if _, err := parseAvro(s.Data); err != nil && !isJSONSchemaDocument(s.Data) {
			return invalid(s.Type, "neither an Avro definition (%v) nor a JSON-Schema document", err)
		}
	case pb.Schema_ProtobufNative:
		if _, err := protobufNativeRoot(s.Data); err != nil {
			return invalid(s.Type, "%v", err)
		}
	case pb.Schema_String:
		// The Python client sends "null" as a string schema's definition.
		if len(s.Data) > 0 && string(s.Data) != "null" {
			return invalid(s.Type, "definition must be empty, got %d bytes", len(s.Data))
		}
	case pb.Schema_Bool, pb.Schema_Int8, pb.Schema_Int16, pb.Schema_Int32, pb.Schema_Int64,
		pb.Schema_Float, pb.Schema_Double, pb.Schema_Date, pb.Schema_Time, pb.Schema_Timestamp,
		pb.Schema_Instant, pb.Schema_LocalDate, pb.Schema_LocalTime, pb.Schema_LocalDateTime:
		if len(s.Data) > 0 {
			return invalid(s.Type, "a primitive schema's definition must be empty, got %d bytes", len(s.Data))
		}
	case pb.Schema_None:
		// NONE (and BYTES) schemas are not stored upstream; nothing to check.
	case pb.Schema_KeyValue:
		kv, err := decodeKeyValue(s)
		if err != nil {
			return invalid(s.Type, "%v", err)
		}
		for _, half := range []kvHalf{kv.key, kv.value} {
			if half.typeName == "BYTES" {
				continue
			}
			if err := Validate(half.schema); err != nil {
				return fmt.Errorf("%s %s: %w", TypeName(s.Type), half.role, err)
			}
		}
	case pb.Schema_AutoConsume:
		return invalid(s.Type, "a client-side schema type is never registered")
	default:
		return invalid(s.Type, "unknown schema type")
	}
	return nil
}

// typeNames are upstream's SchemaType names, as admin responses and messages spell them.
var typeNames = map[pb.Schema_Type]string{
	pb.Schema_None: "NONE", pb.Schema_String: "STRING", pb.Schema_Json: "JSON",
	pb.Schema_Protobuf: "PROTOBUF", pb.Schema_Avro: "AVRO", pb.Schema_Bool: "BOOLEAN",
	pb.Schema_Int8: "INT8", pb.Schema_Int16: "INT16", pb.Schema_Int32: "INT32",
	pb.Schema_Int64: "INT64", pb.Schema_Float: "FLOAT", pb.Schema_Double: "DOUBLE",
	pb.Schema_Date: "DATE", pb.Schema_Time: "TIME", pb.Schema_Timestamp: "TIMESTAMP",
	pb.Schema_KeyValue: "KEY_VALUE", pb.Schema_Instant: "INSTANT",
	pb.Schema_LocalDate: "LOCAL_DATE", pb.Schema_LocalTime: "LOCAL_TIME",
	pb.Schema_LocalDateTime: "LOCAL_DATE_TIME", pb.Schema_ProtobufNative: "PROTOBUF_NATIVE",
	pb.Schema_AutoConsume: "AUTO_CONSUME",
}

// TypeName is upstream's name for t (AVRO, KEY_VALUE, …), or its number if unknown.
func TypeName(t pb.Schema_Type) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("TYPE(%d)", int32(t))
}

// typeByName maps upstream's names back; BYTES, which the protocol sends as NONE, maps to NONE.
func typeByName(name string) (pb.Schema_Type, bool) {
	if name == "BYTES" {
		return pb.Schema_None, true
	}
	for t, n := range typeNames {
		if n == name {
			return t, true
		}
	}
	return 0, false
}

func incompatible(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrIncompatible, fmt.Sprintf(format, args...))
}

func invalid(t pb.Schema_Type, format string, args ...any) error {
	return fmt.Errorf("%w: %s definition: %s", ErrInvalidSchema, TypeName(t), fmt.Sprintf(format, args...))
}

// storedInvalid reports an existing definition that cannot be read: nothing can be shown
// compatible with it.
func storedInvalid(which string, err error) error {
	return fmt.Errorf("%w: %s cannot be read: %w", ErrIncompatible, which,
		unwrapInvalid(err))
}

// unwrapInvalid makes sure err wraps ErrInvalidSchema.
func unwrapInvalid(err error) error {
	if errors.Is(err, ErrInvalidSchema) {
		return err
	}
	return fmt.Errorf("%w: %s", ErrInvalidSchema, strings.TrimSpace(err.Error()))
}
