package wire

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// A BufferPool hands out frame buffers and takes them back for reuse, so that a server storing
// large frames as they arrive does not allocate and zero a fresh buffer for each. Buffers are
// reference-counted (Buffer); a buffer goes back once nobody holds it any more. Frames under
// PooledFrameSize are left to the garbage collector.
type BufferPool struct {
	maxBytes int64 // bound on the bytes kept idle
	poison   bool
	offHeap  *offHeap // nil: buffers are Go's

	mu    sync.Mutex
	idle  map[int][]*Buffer // by size class
	bytes int64
	// released holds off-heap buffers whose pages went back to the system (over maxBytes, or
	// trimmed), by size class: their addresses serve the next buffers of their class.
	released map[int][]*Buffer
	resident int64 // bytes of off-heap buffers not released: held or idle
	gets     int64 // buffers handed out since the last Trim
	fresh    int64 // bytes allocated because no idle buffer fitted, ever
}

// PooledFrameSize is the smallest frame a BufferPool serves: below it Go's allocator is cheap.
const PooledFrameSize = 32 << 10

// bufferClass is the granularity of a pool's size classes.
const bufferClass = 8 << 10

// NewBufferPool keeps at most maxBytes of idle buffers. With poison, a buffer that goes back to
// the pool is overwritten with 0xEE first, so that anything still reading it (a reference-count
// bug) sees garbage that fails the frame checksum, rather than a later frame's bytes: for tests.
func NewBufferPool(maxBytes int64, poison bool) *BufferPool {
	return NewBufferPoolWith(BufferPoolOptions{MaxIdle: maxBytes, Poison: poison})
}

// BufferPoolOptions configure a BufferPool.
type BufferPoolOptions struct {
	MaxIdle int64 // bound on the bytes of idle buffers kept for reuse
	Poison  bool  // see NewBufferPool
	// OffHeap maps the buffers outside Go's heap (on Linux; elsewhere it is ignored). A server
	// that stores its data in them then has a heap of its own objects only: the garbage
	// collector, which starts a cycle each time the heap has grown by as much as was live
	// after the last one, runs as often as the server's garbage needs, not each time the
	// stored data doubles, and its cycles take CPU from every request on a small machine.
	// The memory is never unmapped, so a reference kept past its last Release reads reused
	// or zeroed bytes, as with Go's buffers, and never faults: a buffer beyond MaxIdle, or
	// trimmed, gives its pages back to the system and keeps its address for the next buffer
	// of its size.
	OffHeap bool
}

// NewBufferPoolWith returns a pool configured by o.
func NewBufferPoolWith(o BufferPoolOptions) *BufferPool {
	p := &BufferPool{maxBytes: o.MaxIdle, poison: o.Poison, idle: make(map[int][]*Buffer)}
	if o.OffHeap && offHeapSupported {
		p.offHeap = &offHeap{}
		p.released = make(map[int][]*Buffer)
	}
	return p
}

// Get returns a buffer of n bytes (contents undefined) held once by the caller.
func (p *BufferPool) Get(n int) *Buffer {
	class := (n + bufferClass - 1) / bufferClass
	p.mu.Lock()
	p.gets++
	b := pop(p.idle, class)
	if b != nil {
		p.bytes -= int64(cap(b.b))
	} else if b = pop(p.released, class); b != nil {
		p.resident += int64(cap(b.b))
	}
	if b != nil {
		p.mu.Unlock()
		b.B = b.b[:n]
		b.refs.Store(1)
		return b
	}
	p.fresh += int64(class * bufferClass)
	var mem []byte
	if p.offHeap != nil {
		mem = p.offHeap.take(class * bufferClass) // under p.mu, which guards the arena
		if mem != nil {
			p.resident += int64(len(mem))
		}
	}
	p.mu.Unlock()
	mapped := mem != nil
	if !mapped { // no off-heap memory, or the system refused more
		mem = make([]byte, class*bufferClass)
	}
	b = &Buffer{pool: p, b: mem, offHeap: mapped}
	b.B = b.b[:n]
	b.refs.Store(1)
	return b
}

// pop takes the newest buffer of class out of m, or returns nil.
func pop(m map[int][]*Buffer, class int) *Buffer {
	list := m[class]
	if len(list) == 0 {
		return nil
	}
	b := list[len(list)-1]
	list[len(list)-1] = nil
	m[class] = list[:len(list)-1]
	return b
}

func (p *BufferPool) put(b *Buffer) {
	if p.poison {
		for i := range b.b {
			b.b[i] = 0xEE
		}
	}
	class := cap(b.b) / bufferClass
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+int64(cap(b.b)) > p.maxBytes {
		if b.offHeap {
			p.release(class, b)
		}
		return // a buffer of Go's goes to the garbage collector
	}
	p.idle[class] = append(p.idle[class], b)
	p.bytes += int64(cap(b.b))
}

// Trim gives the idle buffers back if none was asked for since the last Trim, Go's to the
// garbage collector and the off-heap ones' pages to the system: a broker that has gone quiet
// gives the memory back. Call it every few seconds.
func (p *BufferPool) Trim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gets == 0 {
		for class, list := range p.idle {
			for _, b := range list {
				if b.offHeap {
					p.release(class, b)
				}
			}
		}
		clear(p.idle)
		p.bytes = 0
	}
	p.gets = 0
}

// release gives an off-heap buffer's pages back to the system and keeps its address for the next
// buffer of its class. Called with p.mu held.
func (p *BufferPool) release(class int, b *Buffer) {
	dropPages(b.b)
	p.released[class] = append(p.released[class], b)
	p.resident -= int64(cap(b.b))
}

// OffHeap is the number of bytes of off-heap buffers held or idle: memory the process has
// that Go's heap statistics do not count (their pages given back are not).
func (p *BufferPool) OffHeap() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resident
}

// Idle is the number of bytes of buffers waiting for reuse.
func (p *BufferPool) Idle() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes
}

// Allocated is the number of bytes the pool has allocated because no idle buffer fitted: what
// reuse did not save.
func (p *BufferPool) Allocated() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fresh
}

// Buffer is one frame's bytes (B) and the count of those holding them. Whoever gets a Buffer
// holds it once; Retain adds a holder, Release removes one, and the last Release gives it back
// to its pool. Code that does not count holders copies what it keeps.
type Buffer struct {
	B       []byte
	b       []byte // the whole allocation
	refs    atomic.Int32
	offHeap bool // b is the pool's mapped memory, not Go's
	pool    *BufferPool
}

func (b *Buffer) Retain() {
	if b.refs.Add(1) <= 1 {
		panic(fmt.Sprintf("wire: Buffer retained after its last release (%d holders)", b.refs.Load()-1))
	}
}

func (b *Buffer) Release() {
	switch n := b.refs.Add(-1); {
	case n > 0:
	case n == 0:
		b.pool.put(b)
	default:
		panic(fmt.Sprintf("wire: Buffer released more often than held (%d)", n))
	}
}
