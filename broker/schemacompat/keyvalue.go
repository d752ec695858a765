package schemacompat

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// A KEY_VALUE schema's definition holds both halves' definitions, each behind a 4-byte
// big-endian length (-1 for none); its properties name each half's type ("key.schema.type",
// "value.schema.type", BYTES when absent) and hold each half's properties as a JSON object
// ("key.schema.properties", "value.schema.properties"), as upstream's KeyValueSchemaInfo.

type kvHalf struct {
	role     string // "key" or "value"
	typeName string // upstream's name, BYTES kept apart from NONE
	schema   Schema
}

type keyValue struct {
	key, value kvHalf
}

func decodeKeyValue(s Schema) (keyValue, error) {
	data := s.Data
	next := func(role string) ([]byte, error) {
		if len(data) < 4 {
			return nil, fmt.Errorf("%s definition length missing", role)
		}
		n := int32(binary.BigEndian.Uint32(data))
		data = data[4:]
		if n == -1 {
			return nil, nil
		}
		if n < 0 || int(n) > len(data) {
			return nil, fmt.Errorf("%s definition length %d out of range", role, n)
		}
		part := data[:n]
		data = data[n:]
		return part, nil
	}
	half := func(role string) (kvHalf, error) {
		def, err := next(role)
		if err != nil {
			return kvHalf{}, err
		}
		name := s.Properties[role+".schema.type"]
		if name == "" {
			name = "BYTES"
		}
		t, ok := typeByName(name)
		if !ok {
			return kvHalf{}, fmt.Errorf("%s schema type %q unknown", role, name)
		}
		var props map[string]string
		if raw := s.Properties[role+".schema.properties"]; raw != "" {
			if err := json.Unmarshal([]byte(raw), &props); err != nil {
				return kvHalf{}, fmt.Errorf("%s schema properties: %v", role, err)
			}
		}
		return kvHalf{role: role, typeName: name, schema: Schema{Type: t, Data: def, Properties: props}}, nil
	}
	var kv keyValue
	var err error
	if kv.key, err = half("key"); err != nil {
		return keyValue{}, err
	}
	if kv.value, err = half("value"); err != nil {
		return keyValue{}, err
	}
	return kv, nil
}

// checkKeyValue is upstream's KeyValueSchemaCompatibilityCheck: the halves' types may not
// change, then each half is checked by its own type's checker over every given schema.
func checkKeyValue(s Strategy, from []Schema, candidate Schema) error {
	cand, err := decodeKeyValue(candidate)
	if err != nil {
		return invalid(candidate.Type, "%v", err) // Validate has already refused this
	}
	keys := make([]Schema, len(from))
	values := make([]Schema, len(from))
	for i, f := range from {
		kv, err := decodeKeyValue(f)
		if err != nil {
			return storedInvalid(label(s, i, len(from)), err)
		}
		if kv.key.typeName != cand.key.typeName || kv.value.typeName != cand.value.typeName {
			return incompatible("key or value schema type changed: %s has key %s and value %s, "+
				"the new schema key %s and value %s", label(s, i, len(from)),
				kv.key.typeName, kv.value.typeName, cand.key.typeName, cand.value.typeName)
		}
		keys[i], values[i] = kv.key.schema, kv.value.schema
	}
	if err := checkAll(s, keys, cand.key.schema); err != nil {
		return fmt.Errorf("%w (in the key schema)", err)
	}
	if err := checkAll(s, values, cand.value.schema); err != nil {
		return fmt.Errorf("%w (in the value schema)", err)
	}
	return nil
}
