package broker

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker/schemacompat"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// schemaRegistry keeps each topic's schema versions, oldest first (version i at index i). The
// partitions of a partitioned topic share their base topic's schemas, as upstream. Versions
// travel as 8-byte big-endian integers, as upstream encodes them.
// A new schema becomes a new version only when it is compatible with the existing ones under the
// topic's strategy (schemaStrategy; the checks are broker/schemacompat's); otherwise it is
// refused with IncompatibleSchema.
type schemaRegistry struct {
	meta    storage.Metadata
	mu      sync.Mutex
	byTopic map[string][]schemaVersion // base topic full name → versions
}

type schemaVersion struct {
	schema  *pb.Schema
	created time.Time
}

func newSchemaRegistry(meta storage.Metadata) *schemaRegistry {
	return &schemaRegistry{meta: meta, byTopic: make(map[string][]schemaVersion)}
}

// storedSchema is one version as kept in the metadata store.
type storedSchema struct {
	Schema  []byte `json:"schema"` // pb.Schema, protobuf-encoded
	Created int64  `json:"created"`
}

// load reads every topic's schema versions from the store.
func (r *schemaRegistry) load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var bad error
	err := r.meta.Scan(storage.BucketSchemas, "", func(key string, v []byte) bool {
		var stored []storedSchema
		if err := json.Unmarshal(v, &stored); err != nil {
			bad = fmt.Errorf("schemas of %s: %w", key, err)
			return false
		}
		versions := make([]schemaVersion, 0, len(stored))
		for _, st := range stored {
			s := &pb.Schema{}
			if err := proto.Unmarshal(st.Schema, s); err != nil {
				bad = fmt.Errorf("schema of %s: %w", key, err)
				return false
			}
			versions = append(versions, schemaVersion{schema: s, created: time.UnixMilli(st.Created)})
		}
		r.byTopic[key] = versions
		return true
	})
	if err != nil {
		return err
	}
	return bad
}

// persist writes key's versions. Called with r.mu held.
func (r *schemaRegistry) persist(key string, versions []schemaVersion) error {
	stored := make([]storedSchema, 0, len(versions))
	for _, v := range versions {
		b, err := proto.Marshal(v.schema)
		if err != nil {
			return err
		}
		stored = append(stored, storedSchema{Schema: b, Created: v.created.UnixMilli()})
	}
	data, err := json.Marshal(stored)
	if err != nil {
		return err
	}
	return r.meta.Update(func(tx storage.MetadataTx) error {
		if len(versions) == 0 {
			return tx.Delete(storage.BucketSchemas, key)
		}
		return tx.Put(storage.BucketSchemas, key, data)
	})
}

func encodeSchemaVersion(v int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// sameSchema compares what makes two schemas the same version: type, definition, properties.
func sameSchema(a, b *pb.Schema) bool {
	return a.GetType() == b.GetType() && string(a.GetSchemaData()) == string(b.GetSchemaData()) &&
		proto.Equal(&pb.Schema{Properties: a.GetProperties()}, &pb.Schema{Properties: b.GetProperties()})
}

// add returns the version of s on topic, adding it as the newest version if it is new and
// compatible with the existing versions under strategy (the topic's, resolved by the caller with
// schemaStrategy) and new versions may be added (the namespace's isAllowAutoUpdateSchema, for
// clients; the admin API always may). AUTO_CONSUME and NONE are never stored: they describe a
// client, not data (PIP-236).
func (r *schemaRegistry) add(topic naming.Topic, s *pb.Schema, strategy schemacompat.Strategy, allowNew bool) ([]byte, *serverError) {
	key := topic.Base().String()
	r.mu.Lock()
	defer r.mu.Unlock()
	versions := r.byTopic[key]
	if s.GetType() == pb.Schema_AutoConsume || s.GetType() == pb.Schema_None {
		if len(versions) == 0 {
			return nil, nil
		}
		return encodeSchemaVersion(len(versions) - 1), nil
	}
	i, err := admit(versions, s, strategy)
	if err != nil {
		return nil, errorf(pb.ServerError_IncompatibleSchema, "%v", err)
	}
	if i >= 0 {
		return encodeSchemaVersion(i), nil
	}
	if !allowNew {
		return nil, errorf(pb.ServerError_IncompatibleSchema, "Schema not found and schema auto updating is disabled.")
	}
	next := append(versions[:len(versions):len(versions)], schemaVersion{schema: proto.Clone(s).(*pb.Schema), created: time.Now()})
	if err := r.persist(key, next); err != nil {
		return nil, errorf(pb.ServerError_MetadataError, "cannot store the schema of %s: %v", key, err)
	}
	r.byTopic[key] = next
	return encodeSchemaVersion(len(versions)), nil
}

// check reports whether s could be added to topic under strategy, without adding it.
func (r *schemaRegistry) check(topic naming.Topic, s *pb.Schema, strategy schemacompat.Strategy) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := admit(r.byTopic[topic.Base().String()], s, strategy)
	return err
}

// admit returns the version of s among versions (an already registered schema is its version
// whatever the strategy, as upstream), or −1 when s is new and compatible under strategy.
func admit(versions []schemaVersion, s *pb.Schema, strategy schemacompat.Strategy) (int, error) {
	for i := len(versions) - 1; i >= 0; i-- {
		if sameSchema(versions[i].schema, s) {
			return i, nil
		}
	}
	existing := make([]schemacompat.Schema, len(versions))
	for i, v := range versions {
		existing[i] = schemacompat.FromPB(v.schema)
	}
	return -1, schemacompat.Check(strategy, existing, schemacompat.FromPB(s))
}

// has reports whether topic has a schema.
func (r *schemaRegistry) has(topic naming.Topic) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byTopic[topic.Base().String()]) > 0
}

// get returns topic's schema at version v (the newest when v is nil).
func (r *schemaRegistry) get(topic naming.Topic, v []byte) (*pb.Schema, []byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	versions := r.byTopic[topic.Base().String()]
	if len(versions) == 0 {
		return nil, nil, false
	}
	i := len(versions) - 1
	if v != nil {
		if len(v) != 8 {
			return nil, nil, false
		}
		n := int64(binary.BigEndian.Uint64(v))
		if n < 0 || n >= int64(len(versions)) {
			return nil, nil, false
		}
		i = int(n)
	}
	return versions[i].schema, encodeSchemaVersion(i), true
}

// clientSchema registers (or finds) the schema a producer or GET_OR_CREATE_SCHEMA brings, as
// upstream's addSchema: under the topic's compatibility strategy, and adding a new version
// only when its namespace allows schemas to be updated automatically (isAllowAutoUpdateSchema,
// else isAllowAutoUpdateSchemaEnabled). A producer without a schema (s nil) is refused on a
// topic with one when schema validation is enforced (the topic's schemaValidationEnforced, else
// its namespace's or isSchemaValidationEnforced).
func (b *Broker) clientSchema(name naming.Topic, s *pb.Schema) ([]byte, *serverError) {
	l := b.layers(name)
	if s == nil {
		if l.SchemaValidationEnforced() && b.schemas.has(name) {
			return nil, errorf(pb.ServerError_IncompatibleSchema,
				"Producers cannot connect or send message without a schema to topics with a schema if SchemaValidationEnforced is enabled")
		}
		return nil, nil
	}
	return b.schemas.add(name, s, b.schemaStrategy(name), l.AllowAutoUpdateSchema())
}

// schemaStrategy is a topic's compatibility strategy: its topic-level policy, else its
// namespace's, else upstream's default (FULL).
func (b *Broker) schemaStrategy(name naming.Topic) schemacompat.Strategy {
	level, _ := schemacompat.ParseStrategy(b.layers(name).SchemaCompatibilityStrategy())
	return schemacompat.Effective(level)
}

// drop deletes a topic's schema versions, reporting whether it had any.
func (r *schemaRegistry) drop(topic naming.Topic) bool {
	key := topic.Base().String()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.byTopic[key]) == 0 {
		return false
	}
	delete(r.byTopic, key)
	r.persist(key, nil)
	return true
}
