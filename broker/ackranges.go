package broker

import (
	"container/heap"
	"math/bits"
	"slices"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// ackRanges is the set of entries acknowledged individually after a subscription's mark-delete
// position: upstream's individualDeletedMessages, which upstream keeps (by default) as a bit
// set per ledger. Here the bits come in words of 64 entries, kept only where something was
// acknowledged, so memory follows the acknowledgement ranges a consumer really leaves: a
// consumer acking a million messages slightly out of order costs a few kilobytes, one acking
// every other entry a bit per entry, never a map entry per position. Every operation is
// constant time or logarithmic in the words held, whatever order acks come in, so no order of
// acks can make the broker spend quadratic time either. The ACK handler only lets in entries
// of the log (10_ack.go), so the set can never outgrow the log.
type ackRanges struct {
	words map[wordKey]uint64 // bit i of word k: entry k.index*64+i of k.ledger
	order wordHeap           // the keys of words, lowest first
	n     int64              // entries in the set
}

// wordKey names the word holding entries index*64 … index*64+63 of ledger.
type wordKey struct {
	ledger, index int64
}

func (k wordKey) less(o wordKey) bool {
	if k.ledger != o.ledger {
		return k.ledger < o.ledger
	}
	return k.index < o.index
}

// keyOf returns the word holding p and p's bit in it.
func keyOf(p storage.Position) (wordKey, uint) {
	return wordKey{ledger: p.Ledger, index: p.Entry >> 6}, uint(p.Entry & 63)
}

// wordHeap is a min-heap of word keys.
type wordHeap []wordKey

func (h wordHeap) Len() int           { return len(h) }
func (h wordHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h wordHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wordHeap) Push(x any)        { *h = append(*h, x.(wordKey)) }
func (h *wordHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// entryRange is the entries first…last (inclusive) of one ledger.
type entryRange struct {
	ledger, first, last int64
}

func (a *ackRanges) len() int64 { return a.n }

func (a *ackRanges) clear() {
	a.words, a.order, a.n = nil, nil, 0
}

func (a *ackRanges) contains(p storage.Position) bool {
	if p.Entry < 0 {
		return false
	}
	k, bit := keyOf(p)
	return a.words[k]&(1<<bit) != 0
}

// add puts p in the set; false if it was there.
func (a *ackRanges) add(p storage.Position) bool {
	if p.Entry < 0 {
		return false
	}
	k, bit := keyOf(p)
	w, ok := a.words[k]
	if w&(1<<bit) != 0 {
		return false
	}
	if !ok {
		if a.words == nil {
			a.words = make(map[wordKey]uint64)
		}
		heap.Push(&a.order, k)
	}
	a.words[k] = w | 1<<bit
	a.n++
	return true
}

// addRange puts first…last of one ledger in the set (a stored cursor coming back).
func (a *ackRanges) addRange(ledger, first, last int64) {
	for e := max(first, 0); e <= last; e++ {
		a.add(storage.Position{Ledger: ledger, Entry: e})
	}
}

// dropThrough removes every entry at or before p (the mark-delete position moved to p).
func (a *ackRanges) dropThrough(p storage.Position) {
	pk, bit := keyOf(p)
	if p.Entry < 0 {
		pk, bit = wordKey{ledger: p.Ledger, index: -1}, 63 // nothing of p.Ledger goes
	}
	for len(a.order) > 0 && a.order[0].less(pk) {
		k := heap.Pop(&a.order).(wordKey)
		a.n -= int64(bits.OnesCount64(a.words[k]))
		delete(a.words, k)
	}
	if len(a.order) == 0 || a.order[0] != pk {
		return
	}
	w := a.words[pk]
	keep := w &^ (uint64(2)<<bit - 1) // the bits after p's
	a.n -= int64(bits.OnesCount64(w) - bits.OnesCount64(keep))
	if keep == 0 {
		heap.Pop(&a.order)
		delete(a.words, pk)
		return
	}
	a.words[pk] = keep
}

// takeFrom removes the run of entries starting at p, when p is in the set, and returns its
// last entry: the mark-delete position, just before p, moves there. The caller guarantees that
// nothing before p is in the set. ok is false when p is not in the set.
func (a *ackRanges) takeFrom(p storage.Position) (last storage.Position, ok bool) {
	if !a.contains(p) {
		return storage.Position{}, false
	}
	k, bit := keyOf(p)
	for {
		run := bits.TrailingZeros64(^(a.words[k] >> bit)) // set bits from bit on
		if int(bit)+run < 64 {
			last = storage.Position{Ledger: k.ledger, Entry: k.index<<6 + int64(bit) + int64(run) - 1}
			break
		}
		next := wordKey{ledger: k.ledger, index: k.index + 1}
		if a.words[next]&1 == 0 {
			last = storage.Position{Ledger: k.ledger, Entry: k.index<<6 + 63}
			break
		}
		k, bit = next, 0
	}
	a.dropThrough(last)
	return last, true
}

// each calls fn for every range of consecutive entries, in order; at most limit ranges when
// limit > 0.
func (a *ackRanges) each(limit int, fn func(r entryRange)) {
	keys := slices.Clone(a.order)
	slices.SortFunc(keys, func(x, y wordKey) int {
		switch {
		case x.less(y):
			return -1
		case y.less(x):
			return 1
		}
		return 0
	})
	var cur entryRange
	open, count := false, 0
	emit := func() bool {
		if !open {
			return true
		}
		open = false
		fn(cur)
		count++
		return limit <= 0 || count < limit
	}
	for _, k := range keys {
		w := a.words[k]
		for w != 0 {
			start := bits.TrailingZeros64(w)
			length := bits.TrailingZeros64(^(w >> start))
			first := k.index<<6 + int64(start)
			last := first + int64(length) - 1
			if open && cur.ledger == k.ledger && cur.last+1 == first {
				cur.last = last
			} else {
				if !emit() {
					return
				}
				cur, open = entryRange{ledger: k.ledger, first: first, last: last}, true
			}
			if start+length == 64 {
				break
			}
			w &^= (uint64(1)<<length - 1) << start
		}
	}
	emit()
}

// ranges is the number of ranges the set holds (stats).
func (a *ackRanges) ranges() int {
	n := 0
	a.each(0, func(entryRange) { n++ })
	return n
}
