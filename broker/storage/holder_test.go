package storage

import (
	"bytes"
	"sync"
	"testing"
	"unsafe"
)

// countHolder counts holds the way wire.Buffer does.
type countHolder struct {
	mu    sync.Mutex
	t     *testing.T
	refs  int
	freed bool // the count reached zero: a pooled buffer would be reused now
}

func newCountHolder(t *testing.T) *countHolder { return &countHolder{t: t, refs: 1} }

func (h *countHolder) Retain() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		h.t.Error("Retain after the last Release")
	}
	h.refs++
}

func (h *countHolder) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refs--
	switch {
	case h.refs < 0:
		h.t.Error("released more often than held")
	case h.refs == 0:
		h.freed = true
	}
}

func (h *countHolder) state() (refs int, freed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refs, h.freed
}

// appendHeld appends with a holder the log takes over and waits for the result.
func appendHeld(t *testing.T, l Log, meta Meta, data []byte, h Holder) Position {
	t.Helper()
	type res struct {
		p   Position
		err error
	}
	ch := make(chan res, 1)
	l.Append(meta, data, h, func(p Position, err error) { ch <- res{p, err} })
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.p
}

// Both logs hold an appended entry's buffer while they keep it in memory, give callers of
// ReadHeld and GetHeld a hold of their own, hand Read and Get copies, and release their own hold when the entry is trimmed or the log closed.
func TestConformanceHolders(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, err := s.OpenLog(testTopic)
		if err != nil {
			t.Fatal(err)
		}
		const n = 300
		hs := make([]*countHolder, n)
		datas := make([][]byte, n)
		var ps []Position
		for i := range n {
			hs[i] = newCountHolder(t)
			datas[i] = testData(i)
			ps = append(ps, appendHeld(t, l, testMeta(i), datas[i], hs[i]))
		}
		if refs, freed := hs[n-1].state(); refs != 1 || freed {
			t.Fatalf("newest entry: %d holds (freed %v), want the log's one", refs, freed)
		}

		got, err := l.ReadHeld(nil, ps[n-3], 3)
		if err != nil || len(got) != 3 {
			t.Fatalf("ReadHeld: %d entries, %v", len(got), err)
		}
		for k, e := range got {
			if e.Hold != Holder(hs[n-3+k]) {
				t.Fatalf("ReadHeld entry %d carries another holder", k)
			}
			if refs, _ := hs[n-3+k].state(); refs != 2 {
				t.Errorf("after ReadHeld: %d holds, want 2", refs)
			}
			e.Hold.Release()
		}
		if e, ok := l.GetHeld(ps[n-1]); !ok || e.Hold == nil {
			t.Fatal("GetHeld: no holder")
		} else {
			e.Hold.Release()
		}

		// Read and Get count no holder: they hand out copies, which outlive the buffer's reuse.
		got, _ = l.Read(ps[n-2], 1)
		if len(got) != 1 || got[0].Hold != nil {
			t.Fatalf("Read: %v", got)
		}
		e, ok := l.Get(ps[n-1])
		if !ok || e.Hold != nil {
			t.Fatal("Get handed out a holder")
		}
		for k, c := range []Entry{got[0], e} {
			i := n - 2 + k
			if refs, _ := hs[i].state(); refs != 1 {
				t.Errorf("entry %d, read with Read or Get: %d holds, want the log's one", i, refs)
			}
			if unsafe.SliceData(c.Data) == unsafe.SliceData(datas[i]) || !bytes.Equal(c.Data, datas[i]) {
				t.Errorf("entry %d, read with Read or Get, is not a copy of its data", i)
			}
		}

		// Trimming frees nothing of the open ledger; once it is closed, trimming past it
		// releases the log's holds on everything in it.
		l.TrimBefore(l.Next(ps[n-1]))
		if _, memory := s.(*MemoryStore); memory {
			if refs, freed := hs[0].state(); refs != 1 || freed {
				t.Fatalf("oldest entry after trimming the open ledger: %d holds (freed %v), want the log's", refs, freed)
			}
		}
		l.Roll()
		l.TrimBefore(l.Next(ps[n-1]))
		for i := range n {
			if _, freed := hs[i].state(); !freed {
				t.Fatalf("entry %d not released after trimming its closed ledger", i)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		for i, h := range hs {
			if refs, _ := h.state(); refs != 0 {
				t.Fatalf("entry %d: %d holds left after Close", i, refs)
			}
		}
	})
}

// A durable log holds a buffer only while the entry waits to be written or sits in the tail
// cache; an entry evicted from the tail, or appended after Close, is released.
func TestFileHoldsOnlyTheTail(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{TailCache: 3 * 100})
	l := e.log(testTopic)
	hs := make([]*countHolder, 10)
	for i := range hs {
		hs[i] = newCountHolder(t)
		appendHeld(t, l, Meta{}, make([]byte, 100), hs[i])
	}
	for i, h := range hs {
		refs, _ := h.state()
		if want := map[bool]int{true: 1, false: 0}[i >= len(hs)-3]; refs != want {
			t.Errorf("entry %d: %d holds, want %d", i, refs, want)
		}
	}
	l.Close()
	late := newCountHolder(t)
	l.Append(Meta{}, make([]byte, 100), late, func(Position, error) {})
	for i, h := range append(hs, late) {
		if refs, _ := h.state(); refs != 0 {
			t.Errorf("entry %d: %d holds after Close", i, refs)
		}
	}
}
