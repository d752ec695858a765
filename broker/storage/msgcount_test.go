package storage

import (
	"os"
	"strings"
	"testing"
)

// wantMessages counts, entry by entry, the messages testMeta gives the entries of ps at or
// after from and before to (to's zero value: to the end).
func wantMessages(ps []Position, from, to Position) int64 {
	var n int64
	for i, p := range ps {
		if p.Less(from) || (to != (Position{}) && !p.Less(to)) {
			continue
		}
		n += int64(testMeta(i).NumMessages)
	}
	return n
}

// checkMessages compares MessagesFrom and MessagesBetween of l, which holds testMeta's entries
// first… of ps, with counting them one by one, at every stored position and around them.
func checkMessages(t *testing.T, l Log, ps []Position, first int) {
	t.Helper()
	stored := ps[first:]
	end := l.Next(l.Last())
	if got, want := l.MessagesFrom(Position{}), wantMessages(ps, ps[first], Position{}); got != want {
		t.Errorf("MessagesFrom(before everything) = %d, want %d", got, want)
	}
	if got := l.MessagesFrom(end); got != 0 {
		t.Errorf("MessagesFrom(end %v) = %d, want 0", end, got)
	}
	for i, p := range stored {
		if got, want := l.MessagesFrom(p), wantMessages(ps, p, Position{}); got != want {
			t.Fatalf("MessagesFrom(%v) = %d, want %d", p, got, want)
		}
		for _, j := range []int{i, i + 1, i + 7, i + 64, i + 130, len(stored) - 1} {
			if j >= len(stored) {
				continue
			}
			q := l.Next(stored[j])
			if got, want := l.MessagesBetween(p, q), wantMessages(ps, p, q); got != want {
				t.Fatalf("MessagesBetween(%v, %v) = %d, want %d", p, q, got, want)
			}
			if got := l.MessagesBetween(q, p); got != 0 {
				t.Fatalf("MessagesBetween(%v, %v) = %d, want 0", q, p, got)
			}
		}
	}
	if got, want := l.MessagesBetween(stored[0], end), wantMessages(ps, ps[first], Position{}); got != want {
		t.Errorf("MessagesBetween(first, end) = %d, want %d", got, want)
	}
}

// Both logs count the messages of any span of entries, across ledgers, before and after the
// oldest ledgers are trimmed.
func TestConformanceMessages(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, _ := s.OpenLog("persistent://public/default/messages")
		if got := l.MessagesFrom(Position{}); got != 0 {
			t.Errorf("empty log: MessagesFrom = %d", got)
		}
		var ps []Position
		for k := range 4 {
			ps = append(ps, fill(t, l, len(ps), 150+k*40)...)
			l.Roll()
		}
		if len(l.Ledgers()) < 4 {
			t.Fatalf("ledgers %+v", l.Ledgers())
		}
		checkMessages(t, l, ps, 0)
		l.TrimBefore(ps[200])
		first := 0
		for first < len(ps) && ps[first].Ledger < l.First().Ledger {
			first++
		}
		if first == 0 {
			t.Fatalf("nothing trimmed before %v: first %v", ps[200], l.First())
		}
		checkMessages(t, l, ps, first)
	})
}

// A log that drops entries inside its open ledger (non-persistent topics) counts only what it
// still holds.
func TestMemoryMessagesAfterDrop(t *testing.T) {
	l, err := NewMemoryStore().OpenLog("non-persistent://public/default/dropped")
	if err != nil {
		t.Fatal(err)
	}
	ps := fill(t, l, 0, 3000)
	for _, cut := range []int{10, 64, 1030, 2999} {
		l.DropBefore(ps[cut])
		checkMessages(t, l, ps, cut)
	}
}

// Segments opened from their indexes, scanned because their index is of the older format that
// counted no messages, or cut at a damaged record count their messages as they were written;
// the old index is written again in the new format.
func TestFileMessagesAcrossReopen(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096})
	l := e.log(testTopic)
	ps := fill(t, l, 0, 400)
	e.reopen()
	e.log(testTopic)
	e.reopen()
	checkMessages(t, e.log(testTopic), ps, 0)
	e.s.Close()
	idx := e.indexes(testTopic)
	if len(idx) < 3 {
		t.Fatalf("%d indexes", len(idx))
	}
	raw, err := os.ReadFile(idx[1])
	if err != nil {
		t.Fatal(err)
	}
	copy(raw, idxMagicV1)
	if err := os.WriteFile(idx[1], raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e.open()
	checkMessages(t, e.log(testTopic), ps, 0)
	if !strings.Contains(e.logs.String(), "older format") || strings.Contains(e.logs.String(), "does not match") {
		t.Errorf("log:\n%s", e.logs)
	}
	e.s.Close()
	if raw, err = os.ReadFile(idx[1]); err != nil || string(raw[:8]) != idxMagic {
		t.Fatalf("old index not rewritten: %q, %v", raw[:min(8, len(raw))], err)
	}
}

// A segment cut at a damaged record counts only the messages it still serves.
func TestFileMessagesAfterCut(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 1 << 16})
	l := e.log(testTopic)
	ps := fill(t, l, 0, 300)
	e.reopen()
	fl := e.log(testTopic).(*FileLog)
	fl.mu.RLock()
	s := fl.segs[0]
	fl.mu.RUnlock()
	if s.count() < 200 {
		t.Fatalf("first segment holds %d entries", s.count())
	}
	fl.cutDamaged(s, 150)
	var want int64
	for i, p := range ps {
		if p.Ledger != s.ledger || p.Entry < 150 {
			want += int64(testMeta(i).NumMessages)
		}
	}
	if got := fl.MessagesFrom(Position{}); got != want {
		t.Errorf("after the cut: MessagesFrom = %d, want %d", got, want)
	}
	if got, want := fl.MessagesBetween(ps[100], ps[160]), wantMessages(ps, ps[100], ps[150]); got != want {
		t.Errorf("MessagesBetween across the cut = %d, want %d", got, want)
	}
}
