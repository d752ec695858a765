package broker

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"maps"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Schemas, as upstream's /admin/v2/schemas/{tenant}/{ns}/{topic}/...: the versions a topic's
// producers and consumers registered, and the admin's own. Partitions share their base topic's
// schema. Compatibility is not checked yet: every schema is compatible, and the reported
// strategy is the namespace's (FULL when undefined, upstream's default).

// SchemaInfo is one schema version as the admin API shows it.
type SchemaInfo struct {
	Version    int64
	Type       string // upstream's name: STRING, JSON, AVRO, KEY_VALUE, …
	Data       []byte // the definition (for KEY_VALUE, upstream's binary key/value pair)
	Properties map[string]string
	Timestamp  int64 // ms
}

// schemaTypeNames maps protocol schema types to upstream's SchemaType names.
var schemaTypeNames = map[pb.Schema_Type]string{
	pb.Schema_None: "NONE", pb.Schema_String: "STRING", pb.Schema_Json: "JSON",
	pb.Schema_Protobuf: "PROTOBUF", pb.Schema_Avro: "AVRO", pb.Schema_Bool: "BOOLEAN",
	pb.Schema_Int8: "INT8", pb.Schema_Int16: "INT16", pb.Schema_Int32: "INT32",
	pb.Schema_Int64: "INT64", pb.Schema_Float: "FLOAT", pb.Schema_Double: "DOUBLE",
	pb.Schema_Date: "DATE", pb.Schema_Time: "TIME", pb.Schema_Timestamp: "TIMESTAMP",
	pb.Schema_KeyValue: "KEY_VALUE", pb.Schema_Instant: "INSTANT", pb.Schema_LocalDate: "LOCAL_DATE",
	pb.Schema_LocalTime: "LOCAL_TIME", pb.Schema_LocalDateTime: "LOCAL_DATE_TIME",
	pb.Schema_ProtobufNative: "PROTOBUF_NATIVE", pb.Schema_AutoConsume: "AUTO_CONSUME",
}

// SchemaTypeName is upstream's name of a protocol schema type.
func SchemaTypeName(t pb.Schema_Type) string {
	if n, ok := schemaTypeNames[t]; ok {
		return n
	}
	return t.String()
}

// parseSchemaType accepts upstream's names (and KEYVALUE and BYTES, as its clients send).
func parseSchemaType(s string) (pb.Schema_Type, bool) {
	switch s {
	case "KEYVALUE":
		return pb.Schema_KeyValue, true
	case "BYTES":
		return pb.Schema_None, true
	}
	for t, n := range schemaTypeNames {
		if n == s && t != pb.Schema_AutoConsume {
			return t, true
		}
	}
	return 0, false
}

func (b *Broker) schemaTopic(tname string) (naming.Topic, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return name, err
	}
	return name.Base(), nil
}

func toSchemaInfo(v schemaVersion, i int) SchemaInfo {
	props := map[string]string{}
	for _, kv := range v.schema.GetProperties() {
		props[kv.GetKey()] = kv.GetValue()
	}
	return SchemaInfo{
		Version:    int64(i),
		Type:       SchemaTypeName(v.schema.GetType()),
		Data:       v.schema.GetSchemaData(),
		Properties: props,
		Timestamp:  v.created.UnixMilli(),
	}
}

// Schema returns a topic's schema at version (−1: the latest); ErrNotFound if none.
func (b *Broker) Schema(tname string, version int64) (SchemaInfo, error) {
	name, err := b.schemaTopic(tname)
	if err != nil {
		return SchemaInfo{}, err
	}
	r := b.schemas
	r.mu.Lock()
	defer r.mu.Unlock()
	versions := r.byTopic[name.String()]
	if len(versions) == 0 {
		return SchemaInfo{}, adminErr(ErrNotFound, "Schema not found")
	}
	if version < 0 {
		version = int64(len(versions) - 1)
	}
	if version >= int64(len(versions)) {
		return SchemaInfo{}, adminErr(ErrNotFound, "Not found schema for version %d", version)
	}
	return toSchemaInfo(versions[version], int(version)), nil
}

// Schemas returns every version of a topic's schema, oldest first; ErrNotFound if none.
func (b *Broker) Schemas(tname string) ([]SchemaInfo, error) {
	name, err := b.schemaTopic(tname)
	if err != nil {
		return nil, err
	}
	r := b.schemas
	r.mu.Lock()
	defer r.mu.Unlock()
	versions := r.byTopic[name.String()]
	if len(versions) == 0 {
		return nil, adminErr(ErrNotFound, "Schema not found")
	}
	out := make([]SchemaInfo, len(versions))
	for i, v := range versions {
		out[i] = toSchemaInfo(v, i)
	}
	return out, nil
}

func (b *Broker) toPBSchema(name naming.Topic, s SchemaInfo) (*pb.Schema, error) {
	typ, ok := parseSchemaType(s.Type)
	if !ok {
		return nil, adminErr(ErrInvalidArgument, "Invalid schema type %q", s.Type)
	}
	out := &pb.Schema{Name: proto.String(name.Local), Type: typ.Enum(), SchemaData: s.Data}
	if out.SchemaData == nil {
		out.SchemaData = []byte{}
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Properties = append(out.Properties, &pb.KeyValue{Key: proto.String(k), Value: proto.String(s.Properties[k])})
	}
	return out, nil
}

// CreateSchema registers s on topic (a new version unless the same schema exists) and
// returns its version.
func (b *Broker) CreateSchema(tname string, s SchemaInfo) (int64, error) {
	name, err := b.schemaTopic(tname)
	if err != nil {
		return 0, err
	}
	if err := b.checkNamespace(name.NamespaceName()); err != nil {
		return 0, err
	}
	ps, err := b.toPBSchema(name, s)
	if err != nil {
		return 0, err
	}
	ver, serr := b.schemas.add(name, ps, b.schemaStrategy(name), true)
	if serr != nil {
		if serr.code == pb.ServerError_IncompatibleSchema {
			return 0, adminErr(ErrConflict, "%s", serr.msg) // upstream answers 409
		}
		return 0, adminErr(ErrPreconditionFailed, "%s", serr.msg)
	}
	if ver == nil {
		return -1, nil // NONE: nothing stored, as upstream does for BYTES
	}
	return int64(binary.BigEndian.Uint64(ver)), nil
}

// SchemaVersionOf returns the version of s on topic, ErrNotFound if it was never registered.
func (b *Broker) SchemaVersionOf(tname string, s SchemaInfo) (int64, error) {
	name, err := b.schemaTopic(tname)
	if err != nil {
		return 0, err
	}
	if err := b.checkNamespace(name.NamespaceName()); err != nil {
		return 0, err
	}
	ps, err := b.toPBSchema(name, s)
	if err != nil {
		return 0, err
	}
	r := b.schemas
	r.mu.Lock()
	defer r.mu.Unlock()
	versions := r.byTopic[name.String()]
	for i := len(versions) - 1; i >= 0; i-- {
		v := versions[i].schema
		if v.GetType() == ps.GetType() && bytes.Equal(v.GetSchemaData(), ps.GetSchemaData()) &&
			maps.Equal(kvMap(v.GetProperties()), kvMap(ps.GetProperties())) {
			return int64(i), nil
		}
	}
	return 0, adminErr(ErrNotFound, "Not found schema")
}

func kvMap(kvs []*pb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}

// SchemaCompatibility reports whether s could be registered on topic, and the strategy that
// decided.
func (b *Broker) SchemaCompatibility(tname string, s SchemaInfo) (bool, string, error) {
	name, err := b.schemaTopic(tname)
	if err != nil {
		return false, "", err
	}
	if err := b.checkNamespace(name.NamespaceName()); err != nil {
		return false, "", err
	}
	ps, err := b.toPBSchema(name, s)
	if err != nil {
		return false, "", err
	}
	strategy := b.schemaStrategy(name)
	return b.schemas.check(name, ps, strategy) == nil, string(strategy), nil
}

// DeleteSchema deletes every version of a topic's schema; ErrNotFound if it has none.
func (b *Broker) DeleteSchema(tname string) error {
	name, err := b.schemaTopic(tname)
	if err != nil {
		return err
	}
	if !b.schemas.drop(name) {
		return adminErr(ErrNotFound, "Schema not found")
	}
	return nil
}

// KeyValueSchemaJSON renders a KEY_VALUE schema's data as upstream's admin API does:
// {"key": <key schema>, "value": <value schema>}, each embedded as JSON when it is JSON.
func KeyValueSchemaJSON(data []byte) (string, bool) {
	part := func(rest []byte) ([]byte, []byte, bool) {
		if len(rest) < 4 {
			return nil, nil, false
		}
		n := int(int32(binary.BigEndian.Uint32(rest)))
		rest = rest[4:]
		if n < 0 {
			return nil, rest, true
		}
		if n > len(rest) {
			return nil, nil, false
		}
		return rest[:n], rest[n:], true
	}
	k, rest, ok1 := part(data)
	v, _, ok2 := part(rest)
	if !ok1 || !ok2 {
		return "", false
	}
	enc := func(b []byte) json.RawMessage {
		if json.Valid(b) && len(b) > 0 {
			return b
		}
		s, _ := json.Marshal(string(b))
		return s
	}
	out, _ := json.Marshal(map[string]json.RawMessage{"key": enc(k), "value": enc(v)})
	return string(out), true
}
