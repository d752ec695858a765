package wire

import (
	"bytes"
	"runtime"
	"testing"
	"unsafe"
)

func TestBufferPool(t *testing.T) {
	p := NewBufferPool(1<<20, true)
	b := p.Get(40 << 10)
	if len(b.B) != 40<<10 {
		t.Fatalf("len %d", len(b.B))
	}
	b.B[0] = 1
	b.Retain()
	b.Release()
	if p.Idle() != 0 {
		t.Fatal("a buffer still held went back to the pool")
	}
	b.Release()
	if p.Idle() == 0 {
		t.Fatal("the last release did not give the buffer back")
	}
	if !bytes.Equal(b.b, bytes.Repeat([]byte{0xEE}, len(b.b))) {
		t.Fatal("a poisoned pool did not overwrite the buffer")
	}
	// The same size class comes back; another does not.
	if c := p.Get(40<<10 - 100); c != b || c.refs.Load() != 1 || len(c.B) != 40<<10-100 {
		t.Fatal("the pooled buffer was not reused for a frame of its class")
	}
	if d := p.Get(100 << 10); d == b {
		t.Fatal("a buffer was reused for a larger frame")
	}

	// The pool keeps no more than its bound idle.
	small := NewBufferPool(100<<10, false)
	x, y := small.Get(64<<10), small.Get(64<<10)
	x.Release()
	y.Release()
	if small.Idle() > 100<<10 {
		t.Fatalf("%d bytes idle over a bound of %d", small.Idle(), 100<<10)
	}
}

func TestBufferOverRelease(t *testing.T) {
	b := NewBufferPool(1<<20, false).Get(PooledFrameSize)
	b.Release()
	defer func() {
		if recover() == nil {
			t.Fatal("releasing more often than held did not panic")
		}
	}()
	b.Release()
}

// An idle pool gives its buffers back after two Trims with no Get between them.
func TestBufferPoolTrim(t *testing.T) {
	p := NewBufferPool(1<<20, false)
	p.Get(64 << 10).Release()
	p.Trim() // a Get happened since the last Trim: kept
	if p.Idle() == 0 {
		t.Fatal("a pool in use was trimmed")
	}
	p.Trim()
	if p.Idle() != 0 {
		t.Fatalf("%d bytes still idle after a quiet interval", p.Idle())
	}
}

// An off-heap pool serves buffers outside Go's heap that work as any other: reused once
// released, given back to the system beyond its bound and when trimmed (their address kept for
// the next buffer of their size, reading zeros), never unmapped.
func TestBufferPoolOffHeap(t *testing.T) {
	if !offHeapSupported {
		t.Skip("off-heap buffers are Linux's")
	}
	p := NewBufferPoolWith(BufferPoolOptions{MaxIdle: 100 << 10, OffHeap: true})
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var held []*Buffer
	for range 64 {
		b := p.Get(1 << 20)
		if !b.offHeap || len(b.B) != 1<<20 {
			t.Fatalf("a buffer of %d bytes, off-heap %v", len(b.B), b.offHeap)
		}
		for i := range b.B {
			b.B[i] = 7
		}
		held = append(held, b)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc); grown > 16<<20 {
		t.Errorf("64 MiB of off-heap buffers grew Go's heap by %d bytes", grown)
	}
	if p.OffHeap() != 64<<20 {
		t.Errorf("OffHeap says %d bytes with 64 MiB held", p.OffHeap())
	}
	// Over the bound: the pages go back, the address stays for the next buffer of the size.
	for _, b := range held {
		b.Release()
	}
	if p.Idle() > 100<<10 || p.OffHeap() != p.Idle() {
		t.Fatalf("%d bytes idle over a bound of %d, %d off-heap", p.Idle(), 100<<10, p.OffHeap())
	}
	again := p.Get(1<<20 - 5)
	if !again.offHeap || len(again.B) != 1<<20-5 {
		t.Fatal("a released buffer's class did not serve the next buffer of its size")
	}
	if again.B[0] != 0 {
		t.Fatal("a buffer whose pages went back still reads its old bytes")
	}
	again.Release()

	// Small buffers are carved out of one mapping, each with pages of its own.
	x, y := p.Get(PooledFrameSize), p.Get(PooledFrameSize)
	if !x.offHeap || !y.offHeap {
		t.Fatal("small buffers not off-heap")
	}
	for _, b := range []*Buffer{x, y} {
		if uintptr(unsafe.Pointer(unsafe.SliceData(b.b)))%4096 != 0 || cap(b.b)%4096 != 0 {
			t.Fatal("a small buffer does not have whole pages of its own")
		}
	}
	x.Release()
	y.Release()
	p.Get(64 << 10).Release()
	p.Trim()
	p.Trim()
	if p.Idle() != 0 || p.OffHeap() != 0 {
		t.Fatalf("%d bytes still idle, %d off-heap, after a quiet interval", p.Idle(), p.OffHeap())
	}
}
