package replay

// What of the DLQ subscription's backlog a run holds: the entries it received and left
// unacknowledged (skipped, failed, or any message of a dry run), and everything still on its
// way to the completer. The reader needs it twice: to tell a redelivered letter that moved
// (its acknowledgement was lost with a connection: send it again) from one it must leave
// alone, and to subtract from the broker's backlog what is not still to come.
//
// Items reach the completer in read order, with ascending ids, so "on its way" is whatever
// comes after the last item it finished: the completer records only that, and the letters it
// leaves, rather than the reader and the completer both counting every letter under one lock.

import (
	"sync"

	"github.com/letterbox-dev/letterbox/client"
)

type held struct {
	mu   sync.Mutex
	left map[client.MessageID]int // per entry, the letters left unacknowledged
	last client.MessageID         // the last item the completer finished
	any  bool                     // it has finished one
}

// finish records that the completer is done with it: acknowledged (moved, discarded), or
// left in the DLQ.
func (h *held) finish(it item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if it.action != Moved && it.action != Discarded {
		h.left[entryOf(it.m.ID)]++
	}
	h.last, h.any = it.m.ID, true
}

// holds reports whether the run must leave id alone: its entry holds a letter left in the
// DLQ, or id is still on its way.
func (h *held) holds(id client.MessageID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.left[entryOf(id)] > 0 || !h.any || id.Compare(h.last) > 0
}

// entries counts the entries holding letters the run left in the DLQ. Once the completer has
// finished everything handed to it, that is all the run holds.
func (h *held) entries() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return int64(len(h.left))
}

// entryOf is the id of the entry that holds id's message: the key of left.
func entryOf(id client.MessageID) client.MessageID {
	id.BatchIndex, id.BatchSize = -1, 0
	return id
}
