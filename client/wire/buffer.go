package wire

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// A BufferPool hands out frame buffers and takes them back for reuse, so that a server storing
// large frames as they arrive does not allocate and zero a fresh buffer for each. Buffers are
// reference-counted (Buffer); only a buffer that nobody holds any more, and that was never
// handed to a holder that does not count (Keep), goes back. Frames under PooledFrameSize are
// left to the garbage collector.
type BufferPool struct {
	maxBytes int64 // bound on the bytes kept idle
	poison   bool

	mu    sync.Mutex
	idle  map[int][]*Buffer // by size class
	bytes int64
	gets  int64 // buffers handed out since the last Trim
	fresh int64 // bytes allocated because no idle buffer fitted, ever
}

// PooledFrameSize is the smallest frame a BufferPool serves: below it Go's allocator is cheap.
const PooledFrameSize = 32 << 10

// bufferClass is the granularity of a pool's size classes.
const bufferClass = 8 << 10

// NewBufferPool keeps at most maxBytes of idle buffers. With poison, a buffer that goes back to
// the pool is overwritten with 0xEE first, so that anything still reading it (a reference-count
// bug) sees garbage that fails the frame checksum, rather than a later frame's bytes: for tests.
func NewBufferPool(maxBytes int64, poison bool) *BufferPool {
	return &BufferPool{maxBytes: maxBytes, poison: poison, idle: make(map[int][]*Buffer)}
}

// Get returns a buffer of n bytes (contents undefined) held once by the caller.
func (p *BufferPool) Get(n int) *Buffer {
	class := (n + bufferClass - 1) / bufferClass
	p.mu.Lock()
	p.gets++
	if list := p.idle[class]; len(list) > 0 {
		b := list[len(list)-1]
		list[len(list)-1] = nil
		p.idle[class] = list[:len(list)-1]
		p.bytes -= int64(cap(b.b))
		p.mu.Unlock()
		b.B = b.b[:n]
		b.refs.Store(1)
		return b
	}
	p.fresh += int64(class * bufferClass)
	p.mu.Unlock()
	b := &Buffer{pool: p, b: make([]byte, class*bufferClass)}
	b.B = b.b[:n]
	b.refs.Store(1)
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
		return // the garbage collector takes it
	}
	p.idle[class] = append(p.idle[class], b)
	p.bytes += int64(cap(b.b))
}

// Trim lets the garbage collector have the idle buffers if none was asked for since the last
// Trim: a broker that has gone quiet gives the memory back. Call it every few seconds.
func (p *BufferPool) Trim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gets == 0 {
		clear(p.idle)
		p.bytes = 0
	}
	p.gets = 0
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
// to its pool. Keep marks it as given to code that does not count: it is never reused.
type Buffer struct {
	B    []byte
	b    []byte // the whole allocation
	refs atomic.Int32
	kept atomic.Bool
	pool *BufferPool
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
		if !b.kept.Load() {
			b.pool.put(b)
		}
	default:
		panic(fmt.Sprintf("wire: Buffer released more often than held (%d)", n))
	}
}

func (b *Buffer) Keep() { b.kept.Store(true) }
