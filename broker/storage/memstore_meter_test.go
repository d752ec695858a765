package storage

import "testing"

// A MemoryStore counts what its logs hold: every entry's buffer to the end of its allocation,
// the strings decoded from its metadata and the array indexing it; trimming and closing give
// it all back.
func TestMemoryStoreMeter(t *testing.T) {
	t.Parallel()
	s := NewMemoryStore()
	defer s.Close()
	l, err := s.OpenLog("persistent://public/default/metered")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100, 4096) // a frame read into a larger buffer: it holds all of it
	meta := Meta{Key: "key", ProducerName: "producer"}
	const n = 3000
	for range n {
		l.Append(meta, buf[10:], nil, func(Position, error) {})
	}
	perEntry := int64(cap(buf[10:])) + int64(len(meta.Key)+len(meta.ProducerName))
	if got, least := s.MemoryInUse(), n*(perEntry+entrySize); got < least || got > least+n*entrySize {
		t.Fatalf("MemoryInUse %d after %d entries, want %d plus at most the array's spare room", got, n, least)
	}
	l.TrimBefore(Position{Ledger: l.Last().Ledger, Entry: 2000})
	if got := s.MemoryInUse(); got >= (n-1000)*(perEntry+entrySize)+n*entrySize {
		t.Fatalf("MemoryInUse %d after trimming 2000 of %d entries", got, n)
	}
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
