package storage

import "errors"

// Store is where a broker keeps everything: one Log per topic (per partition) and a small
// key-value metadata store. The broker owns the meaning of the metadata (it stores JSON under
// the buckets below); the store only has to keep it, atomically per Update.
//
// Two implementations: NewMemoryStore (nothing survives the process) and the durable one
// (segment files per topic plus a bbolt metadata file, in one data directory).
type Store interface {
	// OpenLog returns topic's log, creating an empty one if there is none. topic is the fully
	// qualified name; the store maps it to files as it likes.
	OpenLog(topic string) (Log, error)
	// DeleteLog removes topic's log and its data. The Log must be closed first.
	DeleteLog(topic string) error
	// Logs lists the topics that have a log, for recovery on start.
	Logs() ([]string, error)
	// Metadata is the metadata store.
	Metadata() Metadata
	Close() error
}

// Bucket names the broker uses; a store creates them on demand.
const (
	BucketTenants     = "tenants"     // tenant → TenantInfo JSON
	BucketNamespaces  = "namespaces"  // "tenant/ns" → policies JSON
	BucketPartitioned = "partitioned" // base topic → {"partitions":N}
	BucketTopics      = "topics"      // topic → topic metadata JSON (properties, …)
	BucketCursors     = "cursors"     // topic + "\x00" + subscription → cursor JSON
	BucketSchemas     = "schemas"     // base topic → schema versions JSON
	BucketDedup       = "dedup"       // topic + "\x00" + producer name → highest sequence id
)

// Metadata is a bucketed key-value store. Values returned alias nothing the caller must not keep.
type Metadata interface {
	Get(bucket, key string) ([]byte, bool, error)
	// Scan calls fn for every key with prefix in bucket, in key order; returning false stops.
	Scan(bucket, prefix string, fn func(key string, value []byte) bool) error
	// Update applies puts and deletes atomically and durably (one transaction, one fsync).
	Update(fn func(tx MetadataTx) error) error
}

// MetadataTx is one Update's view: writes are visible to the same transaction's reads.
type MetadataTx interface {
	Get(bucket, key string) ([]byte, bool)
	Put(bucket, key string, value []byte) error
	Delete(bucket, key string) error
	// DeletePrefix removes every key with prefix from bucket.
	DeletePrefix(bucket, prefix string) error
}

// Errors a store reports.
var (
	// ErrLocked: another process holds the data directory.
	ErrLocked = errors.New("storage: data directory is in use by another process")
	// ErrNoSpace wraps write failures caused by a full disk, so the broker can say so.
	ErrNoSpace = errors.New("storage: no space left on device")
)
