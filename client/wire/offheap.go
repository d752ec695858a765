package wire

// offHeap carves a BufferPool's off-heap buffers out of large mappings (arenaChunk), so that
// the process holds a few mappings rather than one per buffer (the system bounds how many it
// may have). Nothing is ever unmapped: a buffer's address serves its size class for good
// (BufferPool.released). Guarded by its pool's mutex.
type offHeap struct {
	rest []byte // what is left of the newest mapping
}

// arenaChunk is the size of the mappings buffers are carved from; a larger buffer gets a mapping
// of its own. Only what is written takes memory: the rest of a mapping is address space.
const arenaChunk = 64 << 20

// take returns n bytes (a multiple of bufferClass, so that pages are never shared between
// buffers), or nil when the system refuses the mapping.
func (a *offHeap) take(n int) []byte {
	if n > arenaChunk/4 {
		return mapMemory(n)
	}
	if len(a.rest) < n {
		m := mapMemory(arenaChunk)
		if m == nil {
			return nil
		}
		a.rest = m // the old rest, smaller than n, stays unused address space
	}
	b := a.rest[:n:n]
	a.rest = a.rest[n:]
	return b
}
