package wire

import (
	"bytes"
	"testing"
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

	// A kept buffer is never reused.
	k := p.Get(64 << 10)
	k.Keep()
	k.Release()
	if p.Get(64<<10) == k {
		t.Fatal("a kept buffer was reused")
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
