package storage

import (
	"bytes"
	"testing"
	"time"
)

// newClockedMemory returns a Memory whose clock the test moves.
func newClockedMemory(policy Rollover) (*Memory, *time.Time) {
	now := time.Unix(1_000_000, 0)
	var id int64
	m := newMemory(policy, func() int64 { id++; return id }, nil)
	m.now = func() time.Time { return now }
	m.ledgers[0].created = now
	return m, &now
}

func appendN(t *testing.T, l Log, n int) []Position {
	t.Helper()
	var ps []Position
	for i := range n {
		ps = append(ps, mustAppend(t, l, testMeta(i), testData(i)))
	}
	return ps
}

// A ledger is closed once full and past the minimum age, or past the maximum age; trimming
// frees closed ledgers only, whole.
func TestMemoryLedgerRollover(t *testing.T) {
	t.Parallel()
	t.Run("full, no minimum age", func(t *testing.T) {
		m, _ := newClockedMemory(Rollover{MaxEntries: 3, MinAge: -1})
		ps := appendN(t, m, 7)
		if ls := m.Ledgers(); len(ls) != 3 || ls[0].Entries != 3 || ls[2].Entries != 1 {
			t.Fatalf("ledgers %+v, want 3, 3 and 1 entries", ls)
		}
		if ps[3] != m.Next(ps[2]) || ps[3].Ledger == ps[2].Ledger || ps[3].Entry != 0 {
			t.Fatalf("the fourth entry is %v after %v", ps[3], ps[2])
		}
		m.TrimBefore(ps[4]) // inside the second ledger: only the first goes
		if m.First() != ps[3] || m.Entries() != 4 {
			t.Fatalf("after trimming before %v: First %v, %d entries", ps[4], m.First(), m.Entries())
		}
		m.TrimBefore(m.Next(ps[6])) // the open ledger stays
		if m.First() != ps[6] || m.Entries() != 1 {
			t.Fatalf("after trimming everything: First %v, %d entries", m.First(), m.Entries())
		}
	})
	t.Run("full but young", func(t *testing.T) {
		m, now := newClockedMemory(Rollover{MaxEntries: 3})
		appendN(t, m, 7)
		if ls := m.Ledgers(); len(ls) != 1 {
			t.Fatalf("%d ledgers before the minimum age, want 1", len(ls))
		}
		*now = now.Add(DefaultMinLedgerAge + time.Second)
		p := mustAppend(t, m, testMeta(7), testData(7))
		if ls := m.Ledgers(); len(ls) != 2 || p.Entry != 0 || ls[0].Entries != 7 {
			t.Fatalf("after the minimum age: ledgers %+v, appended at %v", ls, p)
		}
	})
	t.Run("past the size cap, young", func(t *testing.T) {
		// The cap is the store's (a durable segment's size); three entries fit.
		m, _ := newClockedMemory(Rollover{})
		data := bytes.Repeat([]byte{'x'}, 10)
		m.ledgerCap = int64(3 * len(data))
		var ps []Position
		for i := range 7 {
			ps = append(ps, mustAppend(t, m, testMeta(i), data))
		}
		if ls := m.Ledgers(); len(ls) != 3 || ls[0].Entries != 3 || ls[1].Entries != 3 {
			t.Fatalf("ledgers %+v, want 3, 3 and 1 entries", ls)
		}
		m.TrimBefore(m.Next(ps[6])) // the closed ones go at once, young as they are
		if m.First() != ps[6] || m.Entries() != 1 {
			t.Fatalf("after trimming everything: First %v, %d entries", m.First(), m.Entries())
		}
		// An entry larger than the cap still goes in, alone.
		big := make([]byte, m.ledgerCap+1)
		p := mustAppend(t, m, testMeta(7), big)
		if p.Entry != 0 || len(m.Ledgers()) != 2 {
			t.Fatalf("a larger entry went to %v; ledgers %+v", p, m.Ledgers())
		}
	})
	t.Run("old and idle", func(t *testing.T) {
		m, now := newClockedMemory(Rollover{})
		ps := appendN(t, m, 5)
		m.TrimBefore(m.Next(ps[4]))
		if m.Entries() != 5 {
			t.Fatalf("%d entries after trimming a young open ledger, want 5", m.Entries())
		}
		*now = now.Add(DefaultMaxLedgerAge + time.Second)
		m.TrimBefore(m.Next(ps[4]))
		if m.Entries() != 0 || len(m.Ledgers()) != 1 {
			t.Fatalf("after the maximum age: %d entries, ledgers %+v; want the old ledger closed and freed", m.Entries(), m.Ledgers())
		}
	})
	t.Run("roll", func(t *testing.T) {
		m, _ := newClockedMemory(Rollover{})
		m.Roll() // nothing in it: nothing to close
		ps := appendN(t, m, 2)
		m.Roll()
		m.TrimBefore(m.Next(ps[1]))
		if m.Entries() != 0 || m.Next(ps[1]) != m.First() {
			t.Fatalf("after Roll and trimming: %d entries, First %v", m.Entries(), m.First())
		}
	})
}

// Small entries are copied (the caller may reuse its buffer once Append returns); large ones
// and held ones are kept as they came. Keys and producer names come back as appended.
func TestMemoryCopiesSmallEntries(t *testing.T) {
	t.Parallel()
	m, _ := newClockedMemory(Rollover{})
	buf := []byte("small entry")
	meta := Meta{Key: "k1", ProducerName: "p", PublishTime: 7, SequenceID: 9, NumMessages: 2, Batched: true}
	if !m.Copies(len(buf), len(meta.Key)) || m.Copies(memDirect, 0) {
		t.Fatal("Copies: want small entries copied and large ones not")
	}
	p := mustAppend(t, m, meta, buf)
	copy(buf, "XXXXXXXXXXX")
	big := bytes.Repeat([]byte{'b'}, memDirect)
	q := mustAppend(t, m, Meta{Key: "k2", ProducerName: "p"}, big)
	e, ok := m.Get(p)
	if !ok || string(e.Data) != "small entry" || e.Meta != meta {
		t.Fatalf("Get(%v) = %q %+v, want the entry as appended", p, e.Data, e.Meta)
	}
	if cap(e.Data) != len(e.Data) {
		t.Errorf("entry data has room to append into (cap %d, len %d)", cap(e.Data), len(e.Data))
	}
	if e, _ := m.Get(q); &e.Data[0] != &big[0] || e.Meta.Key != "k2" {
		t.Errorf("a large entry was copied, or lost its key")
	}
}
