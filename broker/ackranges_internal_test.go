package broker

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// The ack ranges against a plain set of positions, through random adds, range adds, takes
// from the front and drops up to a position: same members, same count, ranges sorted,
// disjoint and never adjacent within a ledger.
func TestAckRangesAgainstASet(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var a ackRanges
		model := map[storage.Position]bool{}
		pos := func() storage.Position {
			return storage.Position{Ledger: int64(rng.IntN(3)), Entry: int64(rng.IntN(60))}
		}
		for range 300 {
			switch op := rng.IntN(10); {
			case op < 6:
				p := pos()
				if got, want := a.add(p), !model[p]; got != want {
					t.Fatalf("round %d: add(%v) = %v, want %v", round, p, got, want)
				}
				model[p] = true
			case op < 7:
				p := pos()
				last := p.Entry + int64(rng.IntN(8))
				a.addRange(p.Ledger, p.Entry, last)
				for e := p.Entry; e <= last; e++ {
					model[storage.Position{Ledger: p.Ledger, Entry: e}] = true
				}
			case op < 8:
				p := pos()
				a.dropThrough(p)
				for q := range model {
					if !p.Less(q) {
						delete(model, q)
					}
				}
			default:
				// The mark-delete position moves to just before the first entry held.
				var first storage.Position
				found := false
				a.each(1, func(r entryRange) { first, found = storage.Position{Ledger: r.ledger, Entry: r.first}, true })
				if !found {
					continue
				}
				last, ok := a.takeFrom(first)
				if !ok {
					t.Fatalf("takeFrom(%v): not there", first)
				}
				for q := range model {
					if q.Ledger == first.Ledger && q.Entry <= last.Entry || q.Ledger < first.Ledger {
						delete(model, q)
					}
				}
				if model[storage.Position{Ledger: last.Ledger, Entry: last.Entry + 1}] {
					t.Fatalf("takeFrom(%v) stopped at %v, before the run's end", first, last)
				}
			}
			checkAckRanges(t, &a, model)
		}
	}
}

func checkAckRanges(t *testing.T, a *ackRanges, model map[storage.Position]bool) {
	t.Helper()
	if a.len() != int64(len(model)) {
		t.Fatalf("len %d, want %d", a.len(), len(model))
	}
	for p := range model {
		if !a.contains(p) {
			t.Fatalf("%v missing", p)
		}
	}
	var prev *entryRange
	a.each(0, func(r entryRange) {
		if r.first > r.last {
			t.Fatalf("empty range %v", r)
		}
		for e := r.first; e <= r.last; e++ {
			if !model[storage.Position{Ledger: r.ledger, Entry: e}] {
				t.Fatalf("%d:%d in range %v but not in the set", r.ledger, e, r)
			}
		}
		if prev != nil && (prev.ledger > r.ledger || prev.ledger == r.ledger && prev.last+1 >= r.first) {
			t.Fatalf("ranges %v and %v out of order, overlapping or adjacent", *prev, r)
		}
		prev = &r
	})
}

// A million entries acknowledged in random order, all but every thousandth, make a thousand
// ranges in 15625 words of 64 entries, not a million positions; acknowledging the holes
// leaves one range, which the mark-delete position then swallows whole.
func TestAckRangesFollowHoles(t *testing.T) {
	t.Parallel()
	var a ackRanges
	const n = 1_000_000
	order := rand.New(rand.NewPCG(3, 4)).Perm(n)
	for _, e := range order {
		if e%1000 != 0 {
			a.add(storage.Position{Ledger: 7, Entry: int64(e)})
		}
	}
	if a.ranges() != n/1000 || a.len() != n-n/1000 || len(a.words) != (n+63)/64 {
		t.Fatalf("%d ranges holding %d entries in %d words, want %d holding %d in %d", a.ranges(), a.len(), len(a.words),
			n/1000, n-n/1000, (n+63)/64)
	}
	holes := slices.Collect(func(yield func(int) bool) {
		for e := 0; e < n; e += 1000 {
			if !yield(e) {
				return
			}
		}
	})
	for _, e := range holes[1:] {
		a.add(storage.Position{Ledger: 7, Entry: int64(e)})
	}
	if a.ranges() != 1 {
		t.Fatalf("%d ranges after the holes were acknowledged, want 1", a.ranges())
	}
	last, ok := a.takeFrom(storage.Position{Ledger: 7, Entry: 1})
	if !ok || last != (storage.Position{Ledger: 7, Entry: n - 1}) || a.len() != 0 {
		t.Fatalf("takeFrom = %v, %v; %d left", last, ok, a.len())
	}
}
