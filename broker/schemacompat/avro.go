package schemacompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/hamba/avro/v2"
)

// avroDef is a parsed Avro definition.
type avroDef struct {
	schema avro.Schema
	union  bool
	names  map[string]string // rewritten name part → the definition's own spelling
}

// parseAvro parses an Avro definition as upstream's broker does, within what hamba/avro allows
// (see the package comment on names and defaults). Each parse gets its own name cache, so that
// one definition's named types never leak into another's.
func parseAvro(data []byte) (*avroDef, error) {
	if !json.Valid(data) {
		// hamba/avro would take bare text such as `string` as a type name; upstream's parser
		// wants JSON.
		return nil, errors.New("not a JSON document")
	}
	def := &avroDef{}
	if needsRename(data) {
		renamed, names, err := renameNames(data)
		if err != nil {
			return nil, err
		}
		data, def.names = renamed, names
	}
	s, err := avro.ParseBytesWithCache(data, "", &avro.SchemaCache{})
	if err != nil {
		return nil, errors.New(restoreNames(err.Error(), def.names))
	}
	def.schema = s
	def.union = s.Type() == avro.Union
	return def, nil
}

// checkAvro is upstream's AvroSchemaBasedCompatibilityCheck over from (oldest first).
func checkAvro(s Strategy, from []Schema, candidate Schema) error {
	cand, err := parseAvro(candidate.Data)
	if err != nil {
		// Only a JSON-Schema document gets here (Validate let it through): upstream's Avro
		// checker cannot read it.
		return incompatible("the new %s schema is not an Avro definition: %v", TypeName(candidate.Type), err)
	}
	defs := make([]*avroDef, len(from))
	names := map[string]string{}
	for k, v := range cand.names {
		names[k] = v
	}
	for i, f := range from {
		d, err := parseAvro(f.Data)
		if err != nil {
			return storedInvalid(label(s, i, len(from)), err)
		}
		defs[i] = d
		for k, v := range d.names {
			names[k] = v
		}
	}
	if s == AlwaysIncompatible {
		return incompatible("schema compatibility strategy is %s", AlwaysIncompatible)
	}
	// A fresh checker per call: hamba/avro caches every pair it has seen, without bound.
	compat := avro.NewSchemaCompatibility()
	for i, d := range defs {
		if s.backward() {
			if err := compat.Compatible(cand.schema, d.schema); err != nil {
				return incompatible("%s: the new schema cannot read data written with %s: %s",
					s, label(s, i, len(defs)), restoreNames(err.Error(), names))
			}
		}
		if s.forward() {
			if err := compat.Compatible(d.schema, cand.schema); err != nil {
				return incompatible("%s: %s cannot read data written with the new schema: %s",
					s, label(s, i, len(defs)), restoreNames(err.Error(), names))
			}
		}
	}
	return nil
}

// checkJSONLatest is upstream's JsonSchemaCompatibilityCheck for a single existing schema:
// brokers once stored JSON-Schema documents, and upstream lets a topic move between the two
// formats.
func checkJSONLatest(s Strategy, latest, candidate Schema) error {
	_, errFrom := parseAvro(latest.Data)
	_, errTo := parseAvro(candidate.Data)
	fromAvro, toAvro := errFrom == nil, errTo == nil
	fromDoc := !fromAvro && isJSONSchemaDocument(latest.Data)
	switch {
	case fromAvro && toAvro:
		return checkAvro(s, []Schema{latest}, candidate)
	case fromAvro, fromDoc && toAvro:
		// A move between the two formats (Validate guarantees the candidate is one or the
		// other): upstream allows it either way.
		return nil
	case fromDoc:
		from, to := jsonSchemaID(latest.Data), jsonSchemaID(candidate.Data)
		if from == "" || from != to {
			return incompatible("JSON-Schema documents with different ids (%q, %q)", from, to)
		}
		return nil
	default:
		// The stored definition cannot be read at all: upstream lets the new one replace it.
		return nil
	}
}

// jsonSchemaTypes are the "type" values the JSON-Schema library upstream used accepts.
var jsonSchemaTypes = map[string]bool{"object": true, "array": true, "string": true,
	"number": true, "integer": true, "boolean": true, "null": true, "any": true}

// isJSONSchemaDocument reports whether data looks like the JSON-Schema document very old Java
// clients sent for JSON schemas.
func isJSONSchemaDocument(data []byte) bool {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return false
	}
	t, _ := doc["type"].(string)
	return jsonSchemaTypes[t]
}

func jsonSchemaID(data []byte) string {
	var doc struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(data, &doc)
	return doc.ID
}

// label names an existing schema in a message.
func label(s Strategy, i, n int) string {
	if !s.Transitive() {
		return "the latest existing schema"
	}
	return fmt.Sprintf("existing schema %d (of %d, oldest first)", i, n)
}

// --- names upstream accepts and hamba/avro does not ---

// needsRename reports whether data may hold a name hamba/avro refuses but upstream accepts:
// one with '$' or a non-ASCII letter (possibly JSON-escaped).
func needsRename(data []byte) bool {
	if bytes.ContainsAny(data, "$") || bytes.Contains(data, []byte(`\u`)) {
		return true
	}
	for _, b := range data {
		if b >= 0x80 {
			return true
		}
	}
	return false
}

// renameNames rewrites every name in an Avro definition that upstream's name rule accepts
// (letters, digits, '_' and '$', not starting with a digit) but the Avro spec's does not, into
// an ASCII spelling that keeps distinct names distinct. It returns the new definition and the
// reverse mapping.
func renameNames(data []byte) ([]byte, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep long defaults exact
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, err
	}
	r := &renamer{back: map[string]string{}}
	out, err := json.Marshal(r.schema(v))
	if err != nil {
		return nil, nil, err
	}
	return out, r.back, nil
}

var avroPrimitives = map[string]bool{"null": true, "boolean": true, "int": true, "long": true,
	"float": true, "double": true, "bytes": true, "string": true}

type renamer struct {
	back map[string]string
}

// schema rewrites the names in one schema position (a type name, a union, or a schema object).
func (r *renamer) schema(v any) any {
	switch t := v.(type) {
	case string:
		if avroPrimitives[t] {
			return t
		}
		return r.full(t)
	case []any:
		for i := range t {
			t[i] = r.schema(t[i])
		}
		return t
	case map[string]any:
		typ, _ := t["type"].(string)
		switch typ {
		case "record", "error", "enum", "fixed":
			r.str(t, "name", r.full)
			r.str(t, "namespace", r.full)
			r.list(t, "aliases", r.full)
			if typ == "enum" {
				r.list(t, "symbols", r.part)
				r.str(t, "default", r.part)
			}
			fields, _ := t["fields"].([]any)
			for _, f := range fields {
				fm, ok := f.(map[string]any)
				if !ok {
					continue
				}
				r.str(fm, "name", r.part)
				r.list(fm, "aliases", r.full)
				if ft, ok := fm["type"]; ok {
					fm["type"] = r.schema(ft)
				}
			}
		case "array":
			if items, ok := t["items"]; ok {
				t["items"] = r.schema(items)
			}
		case "map":
			if values, ok := t["values"]; ok {
				t["values"] = r.schema(values)
			}
		default:
			if inner, ok := t["type"]; ok {
				t["type"] = r.schema(inner)
			}
		}
		return t
	}
	return v
}

func (r *renamer) str(m map[string]any, key string, f func(string) string) {
	if s, ok := m[key].(string); ok {
		m[key] = f(s)
	}
}

func (r *renamer) list(m map[string]any, key string, f func(string) string) {
	l, _ := m[key].([]any)
	for i, e := range l {
		if s, ok := e.(string); ok {
			l[i] = f(s)
		}
	}
}

// full rewrites a dotted name part by part.
func (r *renamer) full(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = r.part(p)
	}
	return strings.Join(parts, ".")
}

// part rewrites one name part if upstream accepts it and the Avro spec does not; anything else
// is left for the parser to judge.
func (r *renamer) part(p string) string {
	if p == "" || specName(p) || !upstreamName(p) {
		return p
	}
	var b strings.Builder
	for _, c := range p {
		if c < 0x80 && (c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c)) {
			b.WriteRune(c)
		} else {
			fmt.Fprintf(&b, "_x%X_", c)
		}
	}
	enc := b.String()
	r.back[enc] = p
	return enc
}

// specName is the Avro spec's rule, which hamba/avro enforces: [A-Za-z_][A-Za-z0-9_]*.
func specName(p string) bool {
	for i, c := range p {
		ok := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return p != ""
}

// upstreamName is upstream's broker rule (its CompatibleNameValidator): a letter, '_' or '$',
// then letters, digits, '_' or '$'.
func upstreamName(p string) bool {
	for i, c := range p {
		ok := c == '_' || c == '$' || unicode.IsLetter(c) || (i > 0 && unicode.IsDigit(c))
		if !ok {
			return false
		}
	}
	return p != ""
}

// restoreNames puts the definitions' own spelling of rewritten names back into a message.
func restoreNames(msg string, names map[string]string) string {
	if len(names) == 0 {
		return msg
	}
	pairs := make([]string, 0, 2*len(names))
	for enc, orig := range names {
		pairs = append(pairs, enc, orig)
	}
	return strings.NewReplacer(pairs...).Replace(msg)
}
