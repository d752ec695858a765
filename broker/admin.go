package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
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

// isEarliest and isLatest read the positions upstream's admin clients send for the earliest
// and the latest message.
func isEarliest(m adminapi.MessageID) bool { return m.LedgerID == -1 && m.EntryID == -1 }
func isLatest(m adminapi.MessageID) bool {
	return m.LedgerID == 1<<63-1 && m.EntryID == 1<<63-1
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
