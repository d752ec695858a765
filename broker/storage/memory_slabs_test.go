package storage

import (
	"bytes"
	"slices"
	"sync"
	"testing"
)

// testBlocks lends slabs as the broker's frame buffer pool does, each with a countHolder, and
// keeps them all so that a test can see which came back.
type testBlocks struct {
	t      *testing.T
	mu     sync.Mutex
	lent   []*countHolder
	blocks [][]byte
}

func (b *testBlocks) Block(n int) ([]byte, Holder) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := newCountHolder(b.t)
	blk := make([]byte, 0, n)
	b.lent = append(b.lent, h)
	b.blocks = append(b.blocks, blk)
	return blk, h
}

// scribble overwrites every slab lent whose holders all let go, as its reuse would.
func (b *testBlocks) scribble() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, h := range b.lent {
		if _, freed := h.state(); freed {
			blk := b.blocks[i][:cap(b.blocks[i])]
			for k := range blk {
				blk[k] = 0xEE
			}
		}
	}
}

// back counts the slabs that would be reused now (released by all), and those lent.
func (b *testBlocks) back() (reusable, lent int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range b.lent {
		if _, freed := h.state(); freed {
			reusable++
		}
	}
	return reusable, len(b.lent)
}

// Slabs and index pages borrowed from Blocks go back once their ledger is freed and every entry
// read from them with ReadHeld is released; an entry read with Read (which does not count) is a
// copy, and holds nothing back.
func TestMemorySlabsGoBack(t *testing.T) {
	t.Parallel()
	blocks := &testBlocks{t: t}
	s := NewMemoryStoreWith(MemoryStoreOptions{Rollover: Rollover{MaxEntries: 100}, Blocks: blocks})
	l, err := s.OpenLog(testTopic)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte{'d'}, 1000)
	var ps []Position
	var lent [2]int // slabs lent once the first ledger, then the second, was full
	for i := range 250 {
		ps = append(ps, mustAppend(t, l, testMeta(i), data))
		if i == 99 || i == 199 {
			_, lent[i/100] = blocks.back()
		}
	}
	// Three ledgers: 100, 100 and 50 entries. A reader holds an entry of the first; another
	// read one of the second without counting.
	held, err := l.ReadHeld(nil, ps[10], 1)
	if err != nil || len(held) != 1 || held[0].Hold == nil {
		t.Fatalf("ReadHeld: %v, %v", held, err)
	}
	copied, err := l.Read(ps[150], 1)
	if err != nil || len(copied) != 1 {
		t.Fatalf("Read: %v, %v", copied, err)
	}
	if n, _ := blocks.back(); n != 0 {
		t.Fatalf("%d slabs back before anything was freed", n)
	}
	l.TrimBefore(ps[200]) // frees the two closed ledgers
	if n, _ := blocks.back(); n != lent[1]-1 {
		t.Errorf("after freeing two ledgers of %d slabs: %d back, want all but the held one", lent[1], n)
	}
	held[0].Hold.Release()
	if n, _ := blocks.back(); n != lent[1] {
		t.Errorf("after the reader let go: %d slabs back, want all %d", n, lent[1])
	}
	if !bytes.Equal(held[0].Data, data) {
		t.Error("the held entry changed while held")
	}
	blocks.scribble()
	if !bytes.Equal(copied[0].Data, data) {
		t.Error("an entry read with Read changed when its slab was reused")
	}
	if lent[0] < 2 {
		t.Errorf("the first ledger took %d slabs: the test needs more than one", lent[0])
	}
	blocks.mu.Lock()
	pages := 0
	for _, b := range blocks.blocks {
		if cap(b) == memPage*int(memEntrySize) {
			pages++
		}
	}
	blocks.mu.Unlock()
	if pages != 3 {
		t.Errorf("%d index pages borrowed for three ledgers of at most 100 entries, want 3", pages)
	}
}

// A MemoryStore's ledgers are full at DefaultMemoryLedgerBytes and close at once, young as they
// are; with MinAge set (upstream's ten minutes), a full ledger stays open as upstream's does.
func TestMemoryStoreLedgerDefaults(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte{'x'}, 64<<10)
	perLedger := DefaultMemoryLedgerBytes / len(data)
	for _, tc := range []struct {
		name    string
		opts    MemoryStoreOptions
		ledgers int
	}{
		{"defaults", MemoryStoreOptions{}, 3},
		{"upstream's minimum age", MemoryStoreOptions{Rollover: Rollover{MinAge: DefaultMinLedgerAge}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewMemoryStoreWith(tc.opts)
			l, err := s.OpenLog(testTopic)
			if err != nil {
				t.Fatal(err)
			}
			var last Position
			for i := range 2*perLedger + 1 {
				last = mustAppend(t, l, testMeta(i), data)
			}
			if got := len(l.Ledgers()); got != tc.ledgers {
				t.Fatalf("%d ledgers after %d entries of %d bytes, want %d", got, 2*perLedger+1, len(data), tc.ledgers)
			}
			l.TrimBefore(l.Next(last))
			if tc.ledgers > 1 && l.Entries() != 1 {
				t.Errorf("%d entries after trimming everything, want the open ledger's one", l.Entries())
			}
		})
	}
}

// A ledger closed at its size does not end on a slab it barely used: ten ledgers' worth of
// 1 KiB entries take little more memory than their data and index.
func TestMemoryLedgersEndOnFullSlabs(t *testing.T) {
	t.Parallel()
	s := NewMemoryStore()
	l, err := s.OpenLog(testTopic)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte{'k'}, 1000)
	n := 10 * DefaultMemoryLedgerBytes / len(data)
	for range n {
		mustAppend(t, l, Meta{NumMessages: 1, ProducerName: "p"}, data)
	}
	index := int64(n/memPage+len(l.Ledgers())) * memPage * memEntrySize
	if used, want := s.MemoryInUse(), int64(n*len(data))*105/100+index; used > want {
		t.Errorf("%d entries of %d bytes in %d ledgers take %d bytes of memory, more than %d (5 %% over the data, and the index)",
			n, len(data), len(l.Ledgers()), used, want)
	}
}

// Every slab a ledger borrows is a power of two in size, and a full ledger borrows the same
// sizes as the one before it: what a freed ledger gives back fits the next one's requests, as
// a pool that reuses a buffer for its own size only needs.
func TestMemorySlabSizesRepeat(t *testing.T) {
	t.Parallel()
	blocks := &testBlocks{t: t}
	s := NewMemoryStoreWith(MemoryStoreOptions{Blocks: blocks})
	l, err := s.OpenLog(testTopic)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte{'s'}, 1000)
	sizes := map[int64][]int{} // by ledger
	lent := 0
	for i := 0; len(l.Ledgers()) < 4; i++ {
		p := mustAppend(t, l, testMeta(i), data)
		blocks.mu.Lock()
		for _, b := range blocks.blocks[lent:] {
			if cap(b) != memPage*int(memEntrySize) { // an index page, borrowed too
				sizes[p.Ledger] = append(sizes[p.Ledger], cap(b))
			}
		}
		lent = len(blocks.blocks)
		blocks.mu.Unlock()
	}
	ledgers := l.Ledgers()
	first, second := sizes[ledgers[0].ID], sizes[ledgers[1].ID]
	for _, n := range append(first, second...) {
		if n&(n-1) != 0 {
			t.Fatalf("a slab of %d bytes: not a power of two", n)
		}
	}
	if len(first) < 2 || !slices.Equal(first, second) {
		t.Errorf("two full ledgers borrowed slabs of %v and %v bytes: want the same sizes", first, second)
	}
}
