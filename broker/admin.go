package broker

import (
	"time"
)

// The admin API: what broker/web serves as upstream's REST v2, as methods on *Broker, one
// admin_<resource>.go file per resource. Names are fully qualified topic names
// ("persistent://tenant/ns/topic") or "tenant/ns" namespaces. The admin files call into the
// core; the core never calls back into them (layering_test.go holds it): what both need (the
// error kinds, the metadata state, the policies in effect) lives in the core's files.
//
// Locking: the admin methods take locks in the order broker.go's package comment gives; the
// admin state's own mutex (adminState.mu) is a leaf there, held only around the store's
// metadata writes besides the state itself.

// MessageID is a position as the admin API shows it: upstream's JSON
// {"ledgerId","entryId","partitionIndex"} plus batchIndex when inside a batch.
type MessageID struct {
	LedgerID       int64 `json:"ledgerId"`
	EntryID        int64 `json:"entryId"`
	PartitionIndex int   `json:"partitionIndex"`
	BatchIndex     int   `json:"batchIndex,omitempty"`
}

// Earliest and latest as upstream's admin clients send them.
func (m MessageID) isEarliest() bool { return m.LedgerID == -1 && m.EntryID == -1 }
func (m MessageID) isLatest() bool {
	return m.LedgerID == 1<<63-1 && m.EntryID == 1<<63-1
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
