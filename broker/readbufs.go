package broker

import (
	"sync"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// entryBufs lends dispatch rounds the slices they read new entries into (subscription.dispatch):
// a fresh slice for each read was, after the SEND itself, the largest allocation per message of
// an unbatched stream.
type entryBufs struct{ p sync.Pool }

// get returns a slice to read into, empty, with room for the largest read a round makes
// (maxReadEntries), so that no read grows it: a consumer that keeps up with a fast stream reads
// dozens of entries at a time, and slices sized to the first read were outgrown and dropped.
func (eb *entryBufs) get() *[]storage.Entry {
	if b, ok := eb.p.Get().(*[]storage.Entry); ok {
		return b
	}
	b := make([]storage.Entry, 0, maxReadEntries)
	return &b
}

// put takes b back with read, what was read into it, once nothing refers to those entries:
// they are cleared, so that an idle slice keeps no data alive. A slice that some read grew
// anyway is left to the garbage collector.
func (eb *entryBufs) put(b *[]storage.Entry, read []storage.Entry) {
	clear(read)
	if cap(read) <= maxReadEntries {
		*b = read[:0]
		eb.p.Put(b)
	}
}
