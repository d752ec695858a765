package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Request bodies are read as upstream's admin API reads them, with Jackson's ObjectMapper as
// Pulsar configures it: unknown fields are ignored, field names match exactly (Go's decoder
// alone would also take "LIMIT" for "limit"), and scalars are coerced as Jackson's defaults
// coerce them: a number or boolean written as a JSON string ("10240", "true") is read as one, a
// number with a fraction given for an integer field is truncated, 0 and 1 are read as
// booleans, a number or boolean is read as a string, and an empty string or null leaves the
// field at its zero value. pulsar-admin, pulsarctl and scripts written against upstream send
// such bodies (the official Go client's own tests post {"limit": "10240"}).

// unmarshal decodes exactly one JSON value from body into v (a pointer) with Jackson's
// leniency.
func unmarshal(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("cannot decode into %T", v)
	}
	tree, err := coerce(tree, t.Elem(), "")
	if err != nil {
		return err
	}
	data, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// coerce rewrites the decoded JSON value v (json.Number for numbers) into the shape Go's decoder
// reads as type t, as Jackson would read it; path names the field for errors.
func coerce(v any, t reflect.Type, path string) (any, error) {
	if v == nil {
		return nil, nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return v, nil // the type reads its own JSON
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return coerceInt(v, t, path)
	case reflect.Float32, reflect.Float64:
		return coerceFloat(v, t, path)
	case reflect.Bool:
		return coerceBool(v, t, path)
	case reflect.String:
		switch x := v.(type) {
		case json.Number:
			return x.String(), nil
		case bool:
			return strconv.FormatBool(x), nil
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil // Go's decoder refuses it with the field's name
		}
		return coerceStruct(m, t, path)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			c, err := coerce(e, t.Elem(), join(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return v, nil
		}
		out := make([]any, len(list))
		for i, e := range list {
			c, err := coerce(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// coerceStruct keeps the members of m that name a field of t exactly, each coerced to its
// field's type; the rest are dropped, as Jackson ignores unknown properties.
func coerceStruct(m map[string]any, t reflect.Type, path string) (any, error) {
	fields := jsonFields(t)
	out := make(map[string]any, len(m))
	for k, e := range m {
		ft, ok := fields[k]
		if !ok {
			continue
		}
		c, err := coerce(e, ft, join(path, k))
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	return out, nil
}

// jsonFields maps the JSON names of t's fields (embedded structs' included) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && tag == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func coerceInt(v any, t reflect.Type, path string) (any, error) {
	var text string
	switch x := v.(type) {
	case json.Number:
		text = x.String()
	case string:
		text = strings.TrimSpace(x)
		if text == "" {
			return nil, nil
		}
	default:
		return v, nil
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return json.Number(strconv.FormatInt(n, 10)), nil
	}
	if n, err := strconv.ParseUint(text, 10, 64); err == nil {
		return json.Number(strconv.FormatUint(n, 10)), nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%s: cannot read %q as %s", fieldName(path), text, t.Kind())
	}
	return json.Number(strconv.FormatFloat(math.Trunc(f), 'f', 0, 64)), nil
}

func coerceFloat(v any, t reflect.Type, path string) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return nil, fmt.Errorf("%s: cannot read %q as %s", fieldName(path), s, t.Kind())
	}
	return json.Number(s), nil
}

func coerceBool(v any, t reflect.Type, path string) (any, error) {
	switch x := v.(type) {
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "":
			return nil, nil
		}
		return nil, fmt.Errorf("%s: cannot read %q as %s", fieldName(path), x, t.Kind())
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read %s as %s", fieldName(path), x, t.Kind())
		}
		return f != 0, nil
	}
	return v, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func fieldName(path string) string {
	if path == "" {
		return "the body"
	}
	return "field " + path
}
