package storage

import "testing"

// A MemoryStore counts what its logs hold: the slabs small entries are copied into, the
// buffers of entries kept as they came, the index pages and the producer names; freeing a
// closed ledger and closing give it all back.
func TestMemoryStoreMeter(t *testing.T) {
	t.Parallel()
	s := NewMemoryStore()
	defer s.Close()
	l, err := s.OpenLog("persistent://public/default/metered")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100, 4096) // a frame read into a larger buffer: only its data is copied
	meta := Meta{Key: "key", ProducerName: "producer"}
	const n = 3000
	for range n {
		l.Append(meta, buf[10:], nil, func(Position, error) {})
	}
	data := int64(n * (len(buf[10:]) + len(meta.Key)))
	pages := int64((n+memPage-1)/memPage) * memPage * memEntrySize
	// Slabs grow by doubling: at most half of what they hold is spare room.
	if got, least := s.MemoryInUse(), data+pages+int64(len(meta.ProducerName)); got < least || got > least+data {
		t.Fatalf("MemoryInUse %d after %d entries, want %d plus at most the slabs' spare room", got, n, least)
	}
	big := make([]byte, memDirect)
	l.Append(Meta{}, big, nil, func(Position, error) {})
	before := s.MemoryInUse()
	l.TrimBefore(l.Next(l.Last())) // the open ledger stays
	if got := s.MemoryInUse(); got != before {
		t.Fatalf("MemoryInUse %d after trimming the open ledger, want %d", got, before)
	}
	l.Roll()
	l.TrimBefore(l.Next(l.Last()))
	if got := s.MemoryInUse(); got != 0 {
		t.Fatalf("MemoryInUse %d after freeing the only closed ledger, want 0", got)
	}
	l.Append(meta, buf, nil, func(Position, error) {})
	other, _ := s.OpenLog("persistent://public/default/other")
	other.Append(meta, buf, nil, func(Position, error) {})
	if err := s.DeleteLog("persistent://public/default/metered"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	if got := s.MemoryInUse(); got != 0 {
		t.Fatalf("MemoryInUse %d with every log closed, want 0", got)
	}
}
