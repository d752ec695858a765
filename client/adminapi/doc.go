// Package adminapi is upstream Pulsar's admin REST documents as plain Go types, with
// upstream's field and JSON names: what the broker's REST layer (broker, broker/web) writes
// and client/admin reads, defined once so that the two cannot drift apart. Letterbox's
// extensions are marked where they are declared (docs/protocol.md, "Admin JSON extensions")
// and are absent when a broker does not send them.
//
// The package holds types only: no behaviour beyond their JSON, no imports of its own.
package adminapi
