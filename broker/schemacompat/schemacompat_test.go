package schemacompat

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// record builds an Avro record definition named User from field definitions.
func record(fields ...string) string {
	return `{"type":"record","name":"User","namespace":"example","fields":[` + strings.Join(fields, ",") + `]}`
}

const (
	fName       = `{"name":"name","type":"string"}`
	fEmail      = `{"name":"email","type":"string"}`
	fEmailDef   = `{"name":"email","type":"string","default":""}`
	fAge        = `{"name":"age","type":"int"}`
	fAgeDefault = `{"name":"age","type":"int","default":0}`
	fAgeLong    = `{"name":"age","type":"long"}`
)

var (
	v1           = record(fName)
	v1WithEmail  = record(fName, fEmail)
	v1WithEmailD = record(fName, fEmailDef)
	v2Default    = record(fName, fAgeDefault)
	v2NoDefault  = record(fName, fAge)
	v2Long       = record(fName, fAgeLong)
)

func avroS(def string) Schema { return Schema{Type: pb.Schema_Avro, Data: []byte(def)} }
func jsonS(def string) Schema { return Schema{Type: pb.Schema_Json, Data: []byte(def)} }
func typed(t pb.Schema_Type, def string) Schema {
	return Schema{Type: t, Data: []byte(def)}
}
func hist(s ...Schema) []Schema { return s }

// want is the outcome a case expects: nil for compatible, else the sentinels the error wraps.
type want []error

var (
	ok           = want(nil)
	wantIncompat = want{ErrIncompatible}
	invalidDef   = want{ErrInvalidSchema}
	storedBad    = want{ErrIncompatible, ErrInvalidSchema}
	badStrategy  = want{ErrInvalidStrategy}
)

type checkCase struct {
	name      string
	strategy  Strategy
	existing  []Schema
	candidate Schema
	want      want
	mention   string // text the error must contain, if any
}

func runCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Check(tc.strategy, tc.existing, tc.candidate)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want compatible", tc.strategy, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check(%s) = nil, want an error wrapping %v", tc.strategy, tc.want)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("Check(%s) = %v, want it to wrap %v", tc.strategy, err, w)
				}
			}
			for _, other := range []error{ErrIncompatible, ErrInvalidSchema, ErrInvalidStrategy} {
				if errors.Is(err, other) && !wants(tc.want, other) {
					t.Errorf("Check(%s) = %v, which also wraps %v", tc.strategy, err, other)
				}
			}
			if tc.mention != "" && !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("Check(%s) = %q, want it to mention %q", tc.strategy, err, tc.mention)
			}
		})
	}
}

func wants(w want, e error) bool {
	for _, x := range w {
		if x == e {
			return true
		}
	}
	return false
}

func TestCheckAvroEvolution(t *testing.T) {
	t.Parallel()
	runCases(t, []checkCase{
		{"add field with default/backward", Backward, hist(avroS(v1)), avroS(v2Default), ok, ""},
		{"add field with default/forward", Forward, hist(avroS(v1)), avroS(v2Default), ok, ""},
		{"add field with default/full", Full, hist(avroS(v1)), avroS(v2Default), ok, ""},
		{"add field without default/backward", Backward, hist(avroS(v1)), avroS(v2NoDefault), wantIncompat, "age"},
		{"add field without default/forward", Forward, hist(avroS(v1)), avroS(v2NoDefault), ok, ""},
		{"add field without default/full", Full, hist(avroS(v1)), avroS(v2NoDefault), wantIncompat, "age"},
		{"remove field/backward", Backward, hist(avroS(v1WithEmail)), avroS(v1), ok, ""},
		{"remove field without default/forward", Forward, hist(avroS(v1WithEmail)), avroS(v1), wantIncompat, "email"},
		{"remove field with default/forward", Forward, hist(avroS(v1WithEmailD)), avroS(v1), ok, ""},
		{"remove field with default/full", Full, hist(avroS(v1WithEmailD)), avroS(v1), ok, ""},
		{"promote int to long/backward", Backward, hist(avroS(v2NoDefault)), avroS(v2Long), ok, ""},
		{"promote int to long/forward", Forward, hist(avroS(v2NoDefault)), avroS(v2Long), wantIncompat, "long"},
		{"promote int to long/full", Full, hist(avroS(v2NoDefault)), avroS(v2Long), wantIncompat, ""},
		{"narrow long to int/backward", Backward, hist(avroS(v2Long)), avroS(v2NoDefault), wantIncompat, ""},
		{"rename record/full", Full, hist(avroS(v1)),
			avroS(`{"type":"record","name":"Person","namespace":"example","fields":[` + fName + `]}`), wantIncompat, "names do not match"},
		{"rename record with alias/backward", Backward, hist(avroS(v1)),
			avroS(`{"type":"record","name":"Person","namespace":"example","aliases":["example.User"],"fields":[` + fName + `]}`), ok, ""},
		{"undefined is full", Undefined, hist(avroS(v1)), avroS(v2NoDefault), wantIncompat, "FULL"},
		{"empty strategy is full", "", hist(avroS(v1)), avroS(v2Default), ok, ""},
		{"no existing schema", AlwaysIncompatible, nil, avroS(v2NoDefault), ok, ""},
	})
}

func TestCheckTransitive(t *testing.T) {
	t.Parallel()
	// v1 has no age; v2 adds it with a default; v3 drops the default. v3 reads v2's data but not
	// v1's; v1 reads v3's data.
	three := hist(avroS(v1), avroS(v2Default))
	runCases(t, []checkCase{
		{"backward looks at the latest", Backward, three, avroS(v2NoDefault), ok, ""},
		{"backward transitive looks at all", BackwardTransitive, three, avroS(v2NoDefault), wantIncompat, "existing schema 0 (of 2"},
		{"full looks at the latest", Full, three, avroS(v2NoDefault), ok, ""},
		{"full transitive", FullTransitive, three, avroS(v2NoDefault), wantIncompat, ""},
		{"forward transitive", ForwardTransitive, three, avroS(v2NoDefault), ok, ""},
		// A v4 without age: every older version reads it, but v3's readers lack age's default.
		{"forward: v4 vs v3", Forward, hist(avroS(v1), avroS(v2Default), avroS(v2NoDefault)), avroS(v1), wantIncompat, ""},
		{"forward transitive: v4 vs all", ForwardTransitive, hist(avroS(v1), avroS(v2Default)), avroS(v1), ok, ""},
		{"forward transitive catches an old reader", ForwardTransitive,
			hist(avroS(v2NoDefault), avroS(v2Default)), avroS(v1), wantIncompat, "existing schema 0"},
		{"forward skips an old reader", Forward, hist(avroS(v2NoDefault), avroS(v2Default)), avroS(v1), ok, ""},
	})
}

func TestCheckAlwaysAndTypes(t *testing.T) {
	t.Parallel()
	runCases(t, []checkCase{
		{"always compatible: wantIncompat change", AlwaysCompatible, hist(avroS(v1)), avroS(v2NoDefault), ok, ""},
		{"always compatible: other type", AlwaysCompatible, hist(avroS(v1)), typed(pb.Schema_String, ""), ok, ""},
		{"always compatible transitive history of types", AlwaysCompatible,
			hist(typed(pb.Schema_String, ""), avroS(v1)), jsonS(v1), ok, ""},
		{"always incompatible: compatible change", AlwaysIncompatible, hist(avroS(v1)), avroS(v2Default), wantIncompat, "ALWAYS_INCOMPATIBLE"},
		{"always incompatible: identical definition", AlwaysIncompatible, hist(avroS(v1)), avroS(v1), ok, ""},
		{"always incompatible: primitive", AlwaysIncompatible, hist(typed(pb.Schema_Int32, "")), typed(pb.Schema_Int32, ""), ok, ""},
		{"always incompatible: string vs python null", AlwaysIncompatible,
			hist(typed(pb.Schema_String, "")), typed(pb.Schema_String, "null"), wantIncompat, ""},
		{"always incompatible: other type", AlwaysIncompatible, hist(avroS(v1)), jsonS(v1), wantIncompat, "AVRO"},
		{"type mismatch: avro then json", Full, hist(avroS(v1)), jsonS(v1), wantIncompat, "existing schema type AVRO, new schema type JSON"},
		{"type mismatch: string then avro", Backward, hist(typed(pb.Schema_String, "")), avroS(v1), wantIncompat, "STRING"},
		{"type mismatch: none then int64", Full, hist(typed(pb.Schema_None, "")), typed(pb.Schema_Int64, ""), wantIncompat, "NONE"},
		{"older type only matters transitively", Backward, hist(typed(pb.Schema_String, ""), avroS(v1)), avroS(v2Default), ok, ""},
		{"older type matters transitively", BackwardTransitive, hist(typed(pb.Schema_String, ""), avroS(v1)), avroS(v2Default), wantIncompat, "STRING"},
		{"primitives: same type", FullTransitive, hist(typed(pb.Schema_Int64, ""), typed(pb.Schema_Int64, "")), typed(pb.Schema_Int64, ""), ok, ""},
		{"protobuf has no checker", Full, hist(typed(pb.Schema_Protobuf, v1)), typed(pb.Schema_Protobuf, v2NoDefault), ok, ""},
		{"protobuf always incompatible", AlwaysIncompatible, hist(typed(pb.Schema_Protobuf, v1)), typed(pb.Schema_Protobuf, v2NoDefault), wantIncompat, ""},
		{"unknown strategy", Strategy("NONE"), hist(avroS(v1)), avroS(v1), badStrategy, "NONE"},
	})
}

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	const doc1 = `{"type":"object","id":"urn:jsonschema:example:User","properties":{"name":{"type":"string"}}}`
	const doc1b = `{"type":"object","id":"urn:jsonschema:example:User","properties":{"name":{"type":"string"},"age":{"type":"integer"}}}`
	const doc2 = `{"type":"object","id":"urn:jsonschema:example:Other","properties":{}}`
	runCases(t, []checkCase{
		{"avro definition, compatible", Full, hist(jsonS(v1)), jsonS(v2Default), ok, ""},
		{"avro definition, incompatible", Backward, hist(jsonS(v1)), jsonS(v2NoDefault), wantIncompat, "age"},
		{"avro definition, transitive", BackwardTransitive, hist(jsonS(v1), jsonS(v2Default)), jsonS(v2NoDefault), wantIncompat, ""},
		{"json-schema document after avro", Full, hist(jsonS(v1)), jsonS(doc1), ok, ""},
		{"avro after json-schema document", Full, hist(jsonS(doc1)), jsonS(v2NoDefault), ok, ""},
		{"json-schema documents, same id", Full, hist(jsonS(doc1)), jsonS(doc1b), ok, ""},
		{"json-schema documents, other id", Full, hist(jsonS(doc1)), jsonS(doc2), wantIncompat, "ids"},
		{"json-schema document, transitive", FullTransitive, hist(jsonS(v1)), jsonS(doc1), wantIncompat, "not an Avro definition"},
		{"unreadable stored definition is replaced", Full, hist(jsonS(`[1,2]`)), jsonS(v1), ok, ""},
		{"unreadable stored definition, transitive", FullTransitive, hist(jsonS(`[1,2]`)), jsonS(v1), storedBad, ""},
	})
}

func TestCheckInvalid(t *testing.T) {
	t.Parallel()
	runCases(t, []checkCase{
		{"not json", AlwaysCompatible, nil, avroS(`string`), invalidDef, ""},
		{"empty avro", Full, hist(avroS(v1)), avroS(``), invalidDef, ""},
		{"record without fields", Full, nil, avroS(`{"type":"record","name":"X"}`), invalidDef, "AVRO"},
		{"unknown type name", Full, nil, avroS(`{"type":"record","name":"X","fields":[{"name":"a","type":"example.Nope"}]}`), invalidDef, ""},
		{"bad name", Full, nil, avroS(`{"type":"record","name":"9X","fields":[]}`), invalidDef, ""},
		{"top-level union", Full, nil, avroS(`["null","string"]`), invalidDef, "union"},
		{"top-level union is fine for json", Full, nil, jsonS(`["null","string"]`), ok, ""},
		{"json neither avro nor json-schema", Full, nil, jsonS(`{"type":"nope"}`), invalidDef, "JSON"},
		{"protobuf must be avro", Full, nil, typed(pb.Schema_Protobuf, `{}`), invalidDef, ""},
		{"primitive with a definition", Full, nil, typed(pb.Schema_Int32, `x`), invalidDef, "INT32"},
		{"string with a definition", Full, nil, typed(pb.Schema_String, `x`), invalidDef, ""},
		{"python string", Full, nil, typed(pb.Schema_String, `null`), ok, ""},
		{"auto consume", AlwaysCompatible, nil, typed(pb.Schema_AutoConsume, ``), invalidDef, "client-side"},
		{"unknown type", Full, nil, typed(pb.Schema_Type(99), ``), invalidDef, ""},
		{"stored definition unreadable", Backward, hist(avroS(`{`)), avroS(v1), storedBad, "latest"},
		{"invalid beats always compatible", AlwaysCompatible, hist(avroS(v1)), avroS(`{`), invalidDef, ""},
	})
}

func TestCheckUpstreamNames(t *testing.T) {
	t.Parallel()
	// Java nested classes give namespaces ending in '$'; upstream's broker accepts them.
	outer := func(fields ...string) string {
		return `{"type":"record","name":"Inner","namespace":"com.example.Outer$","fields":[` + strings.Join(fields, ",") + `]}`
	}
	nested := `{"type":"record","name":"Wrap","fields":[{"name":"in","type":` + outer(fName) + `},{"name":"again","type":"com.example.Outer$.Inner"}]}`
	runCases(t, []checkCase{
		{"dollar namespace, compatible", Full, hist(avroS(outer(fName))), avroS(outer(fName, fAgeDefault)), ok, ""},
		{"dollar namespace, incompatible", Backward, hist(avroS(outer(fName))), avroS(outer(fName, fAge)), wantIncompat, "age"},
		{"dollar namespace, renamed", Full, hist(avroS(outer(fName))),
			avroS(strings.Replace(outer(fName), `"Inner"`, `"Inner$1"`, 1)), wantIncompat, "Inner$1"},
		{"dollar reference", Full, hist(avroS(nested)), avroS(nested + " "), ok, ""},
		{"non-ascii letters", Full, hist(avroS(`{"type":"record","name":"Ütf","fields":[]}`)),
			avroS(`{"type":"record","name":"Ütf","fields":[` + fAgeDefault + `]}`), ok, ""},
	})
}

// keyValue builds a KEY_VALUE schema as the clients encode it.
func keyValueS(keyType string, keyDef string, valueType string, valueDef string) Schema {
	var data []byte
	for _, def := range []string{keyDef, valueDef} {
		data = binary.BigEndian.AppendUint32(data, uint32(len(def)))
		data = append(data, def...)
	}
	return Schema{Type: pb.Schema_KeyValue, Data: data, Properties: map[string]string{
		"key.schema.type": keyType, "value.schema.type": valueType,
		"key.schema.properties": "{}", "value.schema.properties": `{"__alwaysAllowNull":"true"}`,
		"kv.encoding.type": "SEPARATED",
	}}
}

func TestCheckKeyValue(t *testing.T) {
	t.Parallel()
	base := keyValueS("STRING", "", "AVRO", v1)
	truncated := Schema{Type: pb.Schema_KeyValue, Data: []byte{0, 0, 0, 9, 'x'}}
	runCases(t, []checkCase{
		{"value compatible", Full, hist(base), keyValueS("STRING", "", "AVRO", v2Default), ok, ""},
		{"value incompatible", Backward, hist(base), keyValueS("STRING", "", "AVRO", v2NoDefault), wantIncompat, "in the value schema"},
		{"value forward", Forward, hist(base), keyValueS("STRING", "", "AVRO", v2NoDefault), ok, ""},
		{"key type changed", Full, hist(base), keyValueS("AVRO", v1, "AVRO", v1), wantIncompat, "key or value schema type changed"},
		{"key type changed, always compatible", AlwaysCompatible, hist(base), keyValueS("AVRO", v1, "AVRO", v1), ok, ""},
		{"always incompatible", AlwaysIncompatible, hist(base), keyValueS("STRING", "", "AVRO", v2Default), wantIncompat, ""},
		{"identical", AlwaysIncompatible, hist(base), keyValueS("STRING", "", "AVRO", v1), ok, ""},
		// Upstream compares data only: properties alone never make a difference.
		{"identical data, other properties", Full, hist(keyValueS("BYTES", "", "AVRO", v1)), keyValueS("NONE", "", "AVRO", v1), ok, ""},
		{"transitive", BackwardTransitive, hist(base, keyValueS("STRING", "", "AVRO", v2Default)),
			keyValueS("STRING", "", "AVRO", v2NoDefault), wantIncompat, "existing schema 0"},
		{"bytes key by default", Full, hist(keyValueS("", "", "AVRO", v1)), keyValueS("", "", "AVRO", v2Default), ok, ""},
		{"bytes is not none", Full, hist(keyValueS("BYTES", "", "AVRO", v1)), keyValueS("NONE", "", "AVRO", v2Default), wantIncompat, "BYTES"},
		{"truncated", Full, nil, truncated, invalidDef, ""},
		{"invalid half", Full, nil, keyValueS("STRING", "", "AVRO", "{"), invalidDef, "value"},
		{"unknown half type", Full, nil, keyValueS("NOPE", "", "AVRO", v1), invalidDef, "NOPE"},
		{"stored truncated", Full, hist(truncated), base, storedBad, ""},
	})
}

// protobufNative builds a PROTOBUF_NATIVE definition whose file holds messages A and B.
func protobufNative(t *testing.T, root string, extraField bool) Schema {
	t.Helper()
	field := func(name string, n int32) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:  descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), JsonName: proto.String(name)}
	}
	a := &descriptorpb.DescriptorProto{Name: proto.String("A"), Field: []*descriptorpb.FieldDescriptorProto{field("x", 1)}}
	if extraField {
		a.Field = append(a.Field, field("y", 2))
	}
	b := &descriptorpb.DescriptorProto{Name: proto.String("B")}
	fds := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{{
		Name: proto.String("a.proto"), Package: proto.String("pkg"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{a, b},
	}}}
	raw, err := proto.Marshal(fds)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(protobufNativeData{FileDescriptorSet: raw, RootMessageTypeName: root, RootFileDescriptorName: "a.proto"})
	if err != nil {
		t.Fatal(err)
	}
	return Schema{Type: pb.Schema_ProtobufNative, Data: data}
}

func TestCheckProtobufNative(t *testing.T) {
	t.Parallel()
	a := protobufNative(t, "pkg.A", false)
	a2 := protobufNative(t, "pkg.A", true)
	b := protobufNative(t, "pkg.B", false)
	runCases(t, []checkCase{
		{"same root, fields changed", Full, hist(a), a2, ok, ""},
		{"root changed", Backward, hist(a), b, wantIncompat, "pkg.B"},
		{"root changed long ago", ForwardTransitive, hist(b, a), a2, wantIncompat, "existing schema 0"},
		{"root changed, always compatible", AlwaysCompatible, hist(a), b, ok, ""},
		{"always incompatible", AlwaysIncompatible, hist(a), a2, wantIncompat, ""},
		{"missing root", Full, nil, protobufNative(t, "pkg.C", false), invalidDef, "pkg.C"},
		{"not json", Full, nil, typed(pb.Schema_ProtobufNative, "x"), invalidDef, ""},
		{"bad descriptor set", Full, nil, typed(pb.Schema_ProtobufNative, `{"fileDescriptorSet":"AAEC","rootMessageTypeName":"pkg.A"}`), invalidDef, ""},
	})
}

func TestParseStrategy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Strategy
		err  bool
	}{
		{"BACKWARD", Backward, false},
		{"backward_transitive", BackwardTransitive, false},
		{" FULL ", Full, false},
		{"ALWAYS_INCOMPATIBLE", AlwaysIncompatible, false},
		{"UNDEFINED", Undefined, false},
		{"", Undefined, false},
		{"NONE", "", true},
		{"FULL_TRANSITIVE_", "", true},
	} {
		got, err := ParseStrategy(tc.in)
		if tc.err {
			if !errors.Is(err, ErrInvalidStrategy) {
				t.Errorf("ParseStrategy(%q) = %q, %v; want ErrInvalidStrategy", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseStrategy(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, s := range Strategies {
		if got, err := ParseStrategy(string(s)); err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %q, %v", s, got, err)
		}
	}
}

func TestEffective(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		levels []Strategy
		want   Strategy
	}{
		{nil, Full},
		{[]Strategy{Undefined, "", Undefined}, Full},
		{[]Strategy{Undefined, Backward, Forward}, Backward},
		{[]Strategy{AlwaysCompatible, Backward}, AlwaysCompatible},
	} {
		if got := Effective(tc.levels...); got != tc.want {
			t.Errorf("Effective(%q) = %q, want %q", tc.levels, got, tc.want)
		}
	}
}

func TestFromPB(t *testing.T) {
	t.Parallel()
	s := FromPB(&pb.Schema{Name: proto.String("n"), Type: pb.Schema_Avro.Enum(), SchemaData: []byte(v1),
		Properties: []*pb.KeyValue{{Key: proto.String("k"), Value: proto.String("v")}}})
	if s.Type != pb.Schema_Avro || string(s.Data) != v1 || s.Properties["k"] != "v" {
		t.Fatalf("FromPB = %+v", s)
	}
	if got := FromPB(nil); got.Type != pb.Schema_None || got.Data != nil {
		t.Fatalf("FromPB(nil) = %+v", got)
	}
}

// FuzzCheck: no definition, however malformed, makes Check panic.
func FuzzCheck(f *testing.F) {
	f.Add(int32(pb.Schema_Avro), []byte(v1), []byte(v2NoDefault))
	f.Add(int32(pb.Schema_Json), []byte(`{"type":"object","id":"x"}`), []byte(v1))
	f.Add(int32(pb.Schema_Avro), []byte(`{"type":"record","name":"a$","fields":[{"name":"é","type":"a$"}]}`), []byte(v1))
	f.Add(int32(pb.Schema_KeyValue), keyValueS("AVRO", v1, "JSON", v1).Data, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, '{'})
	f.Add(int32(pb.Schema_ProtobufNative), []byte(`{"fileDescriptorSet":"CgA=","rootMessageTypeName":"a"}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, typ int32, old, cand []byte) {
		props := map[string]string{"key.schema.type": "AVRO", "value.schema.type": "JSON"}
		for _, s := range Strategies {
			_ = Check(s, []Schema{{Type: pb.Schema_Type(typ), Data: old, Properties: props}},
				Schema{Type: pb.Schema_Type(typ), Data: cand, Properties: props})
		}
	})
}
