package triage

import (
	"hash/maphash"
	"slices"
)

// How a facet keeps a value per letter: a dictionary, then hashes with a summary of the
// values seen most often (see Facets).

// facetColumn is one facet: a value per letter, first in a dictionary, then hashed.
type facetColumn struct {
	name string
	// Dictionary mode: ids[i] is letter i's value: 0 absent, 1 past the cap, k ≥ 2 values[k-2].
	ids    letterIDs
	values []string
	index  map[string]uint16
	// Hash mode: hashes[i] is letter i's value's hash, 0 when absent; heavy names the values
	// seen most often.
	hashes chunked[uint64]
	heavy  *heavyValues
	// capped: no new value gets an id; letters with one count as past the cap.
	capped bool
	// last is the value set last and its id: most letters have the value of the letter
	// before (a payload kind, a content type, an hour), which a comparison finds for less than
	// a lookup, and for nothing when it is the same string.
	last   string
	lastID uint16
	// counted is what count last found, for the letters there were then (countedAt): a scan's
	// summary and its causes read the column once between them.
	counted   *valueCounts
	countedAt int64
}

const (
	idAbsent = 0
	idPast   = 1
	idFirst  = 2
)

func (c *facetColumn) hashed() bool { return c.heavy != nil }

// set records letter i's value v.
func (c *facetColumn) set(f *Facets, i int64, v string) {
	if c.hashed() {
		h := f.hash(v)
		c.hashes.set(i, h)
		c.heavy.add(h, v)
		return
	}
	if c.lastID != 0 && v == c.last {
		c.ids.set(i, c.lastID)
		return
	}
	id, ok := c.index[v]
	switch {
	case ok:
	case c.capped:
		id = idPast
	case len(c.values) < FacetDictionaryCap:
		id = uint16(idFirst + len(c.values))
		c.index[v] = id
		c.values = append(c.values, v)
	case f.hashed < FacetHashedCap:
		f.hashed++
		c.toHashes(f, i)
		c.set(f, i, v)
		return
	default:
		c.capped = true
		id = idPast
	}
	c.last, c.lastID = v, id
	c.ids.set(i, id)
}

// toHashes moves c from its dictionary to hashes; letters from n on have no value yet.
func (c *facetColumn) toHashes(f *Facets, n int64) {
	byID := make([]uint64, len(c.values)+idFirst)
	for k, v := range c.values {
		byID[k+idFirst] = f.hash(v)
	}
	counts := make([]int64, len(c.values)+idFirst)
	for i := range n {
		id := c.ids.at(i)
		counts[id]++
		if id >= idFirst {
			c.hashes.set(i, byID[id])
		}
	}
	c.heavy = newHeavyValues(FacetHeavyCap)
	for k, v := range c.values {
		c.heavy.addN(byID[k+idFirst], v, counts[k+idFirst])
	}
	c.ids, c.values, c.index, c.last, c.lastID = letterIDs{}, nil, nil, "", 0
}

// hash is v's hash, never 0 (0 marks an absent value).
func (f *Facets) hash(v string) uint64 {
	h := maphash.String(f.seed, v)
	if h == 0 {
		h = 1
	}
	return h
}

// heavyValues is a summary of the values seen most often, Misra and Gries' frequent items with
// their counters cut in batches: every value seen more than n/k times, of n, is among them
// (each cut takes δ from at least k counters, so the cuts add up to at most n/k, and a value's
// counter is its count less at most that). A letter costs one lookup, and a new value an
// insertion, whereas a space-saving summary replaced its least counted value on every letter
// whose value it did not hold, which for values that never repeat (a trace id per letter) is
// every letter. The counts it keeps are lower bounds; summaries count the values it names
// exactly, from the column.
//
// The counters are found by their value's hash in a table of their own (open addressing,
// at most half full): the hashes are already uniform, and a map would hash them again.
type heavyValues struct {
	k       int
	entries []heavyValue // fewer than 2k
	slots   []int32      // 1 + the index in entries of the value whose hash starts there, 0 empty
	scratch []int64
}

type heavyValue struct {
	hash uint64
	n    int64
	name string
}

func newHeavyValues(k int) *heavyValues {
	size := 1
	for size < 4*k {
		size <<= 1
	}
	return &heavyValues{k: k, slots: make([]int32, size)}
}

// find is the slot of hash: the one that holds it (found), else the empty one it would take.
func (h *heavyValues) find(hash uint64) (slot int, found bool) {
	mask := len(h.slots) - 1
	for s := int(hash) & mask; ; s = (s + 1) & mask {
		e := h.slots[s]
		if e == 0 {
			return s, false
		}
		if h.entries[e-1].hash == hash {
			return s, true
		}
	}
}

func (h *heavyValues) add(hash uint64, v string) { h.addN(hash, v, 1) }

func (h *heavyValues) addN(hash uint64, v string, n int64) {
	s, found := h.find(hash)
	if found {
		h.entries[h.slots[s]-1].n += n
		return
	}
	h.entries = append(h.entries, heavyValue{hash: hash, n: n, name: v})
	h.slots[s] = int32(len(h.entries))
	if len(h.entries) >= 2*h.k {
		h.cut()
	}
}

// cut takes δ, the k-th largest count, from every counter and drops those it empties: fewer
// than k are left.
func (h *heavyValues) cut() {
	h.scratch = h.scratch[:0]
	for _, e := range h.entries {
		h.scratch = append(h.scratch, e.n)
	}
	slices.Sort(h.scratch)
	delta := h.scratch[len(h.scratch)-h.k]
	kept := h.entries[:0]
	for _, e := range h.entries {
		if e.n > delta {
			e.n -= delta
			kept = append(kept, e)
		}
	}
	clear(h.entries[len(kept):]) // the names dropped are not kept alive
	h.entries = kept
	clear(h.slots)
	for i, e := range h.entries {
		s, _ := h.find(e.hash)
		h.slots[s] = int32(i + 1)
	}
}

// name is the value whose hash is hash, when the summary holds it.
func (h *heavyValues) name(hash uint64) (string, bool) {
	s, found := h.find(hash)
	if !found {
		return "", false
	}
	return h.entries[h.slots[s]-1].name, true
}
