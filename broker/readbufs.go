package broker

import (
	"sync"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// entryBufs lends dispatch rounds the slices they read new entries into (subscription.dispatch):
// a round reads a few entries at a time, and a fresh slice for each read was, after the SEND
// itself, the largest allocation per message of an unbatched stream.
type entryBufs struct{ p sync.Pool }

// maxPooledRead is the largest slice, in entries, that goes back for reuse: a larger read (a
// consumer catching up on a backlog) is rare, and its slice left to the garbage collector.
const maxPooledRead = 64

// get returns a slice to read into, empty.
func (eb *entryBufs) get() *[]storage.Entry {
	if b, ok := eb.p.Get().(*[]storage.Entry); ok {
		return b
	}
	return new([]storage.Entry)
}

// put takes b back with read, what was read into it, once nothing refers to those entries:
// they are cleared, so that an idle slice keeps no data alive.
func (eb *entryBufs) put(b *[]storage.Entry, read []storage.Entry) {
	clear(read)
	if cap(read) <= maxPooledRead {
		*b = read[:0]
		eb.p.Put(b)
	}
}
