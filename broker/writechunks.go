package broker

import "sync"

// writeChunk is the size of the chunks a connection's write queue continues in once it is
// long (conn.nextChunk): a writer that falls behind a fast dispatcher then costs no copy of
// the queue and no fresh memory for each burst, the chunks going from one connection to the
// next through the broker's pool.
const writeChunk = 64 << 10

// chunkPool holds write chunks between uses; the garbage collector empties it when the broker
// is quiet.
type chunkPool struct{ p sync.Pool }

// get returns an empty chunk of writeChunk bytes.
func (cp *chunkPool) get() []byte {
	if b, ok := cp.p.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, writeChunk)
}

// put gives a written chunk back; buffers of other sizes (grown past a chunk by a large
// command, or a connection's first buffer) are left to the garbage collector.
func (cp *chunkPool) put(b *[]byte) {
	if cap(*b) == writeChunk {
		cp.p.Put(b)
	}
}
