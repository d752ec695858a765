package triage

import "hash/maphash"

// How a facet keeps a value per letter: a dictionary, then hashes with a summary of the
// values seen most often (see Facets).

// facetColumn is one facet: a value per letter, first in a dictionary, then hashed.
type facetColumn struct {
	name string
	// Dictionary mode: ids[i] is letter i's value: 0 absent, 1 past the cap, k ≥ 2 values[k-2].
	ids    []uint16
	values []string
	index  map[string]uint16
	// Hash mode: hashes[i] is letter i's value's hash, 0 when absent; heavy names the values
	// seen most often (a space-saving summary).
	hashes []uint64
	heavy  *heavyValues
	// capped: no new value gets an id; letters with one count as past the cap.
	capped bool
}

const (
	idAbsent = 0
	idPast   = 1
	idFirst  = 2
)

func (c *facetColumn) hashed() bool { return c.hashes != nil }

// set records letter i's value v.
func (c *facetColumn) set(f *Facets, i int64, v string) {
	if c.hashed() {
		for int64(len(c.hashes)) < i {
			c.hashes = append(c.hashes, 0)
		}
		h := f.hash(v)
		c.hashes = append(c.hashes, h)
		c.heavy.add(h, v)
		return
	}
	for int64(len(c.ids)) < i {
		c.ids = append(c.ids, idAbsent)
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
		c.toHashes(f)
		c.set(f, i, v)
		return
	default:
		c.capped = true
		id = idPast
	}
	c.ids = append(c.ids, id)
}

// toHashes moves c from its dictionary to hashes.
func (c *facetColumn) toHashes(f *Facets) {
	byID := make([]uint64, len(c.values))
	for k, v := range c.values {
		byID[k] = f.hash(v)
	}
	c.hashes = make([]uint64, len(c.ids), max(2*len(c.ids), 1024))
	c.heavy = newHeavyValues(FacetHeavyCap)
	counts := make([]int64, len(c.values))
	for i, id := range c.ids {
		if id >= idFirst {
			c.hashes[i] = byID[id-idFirst]
			counts[id-idFirst]++
		}
	}
	for k, v := range c.values {
		c.heavy.addN(byID[k], v, counts[k])
	}
	c.ids, c.values, c.index = nil, nil, nil
}

// hash is v's hash, never 0 (0 marks an absent value).
func (f *Facets) hash(v string) uint64 {
	h := maphash.String(f.seed, v)
	if h == 0 {
		h = 1
	}
	return h
}

// heavyValues is a space-saving summary: the values seen most often, each with an upper bound of
// its count. Every value seen more than n/cap times, of n, is among them. The counters are a
// min-heap, so that a newcomer replaces the least counted value in O(log cap): with values
// that never repeat (a trace id per letter), every letter is a newcomer.
type heavyValues struct {
	cap   int
	heap  []heavyValue   // a min-heap by n
	index map[uint64]int // hash → position in heap
}

type heavyValue struct {
	hash uint64
	n    int64
	name string
}

func newHeavyValues(capacity int) *heavyValues {
	return &heavyValues{cap: capacity, index: map[uint64]int{}}
}

func (h *heavyValues) add(hash uint64, v string) { h.addN(hash, v, 1) }

func (h *heavyValues) addN(hash uint64, v string, n int64) {
	if i, ok := h.index[hash]; ok {
		h.heap[i].n += n
		h.down(i)
		return
	}
	if len(h.heap) < h.cap {
		h.heap = append(h.heap, heavyValue{hash: hash, n: n, name: v})
		h.index[hash] = len(h.heap) - 1
		h.up(len(h.heap) - 1)
		return
	}
	// Replace the least counted value: the newcomer inherits its count as an upper bound.
	least := h.heap[0]
	delete(h.index, least.hash)
	h.heap[0] = heavyValue{hash: hash, n: least.n + n, name: v}
	h.index[hash] = 0
	h.down(0)
}

func (h *heavyValues) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.index[h.heap[i].hash], h.index[h.heap[j].hash] = i, j
}

func (h *heavyValues) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h.heap[parent].n <= h.heap[i].n {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *heavyValues) down(i int) {
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h.heap) && h.heap[l].n < h.heap[least].n {
			least = l
		}
		if r < len(h.heap) && h.heap[r].n < h.heap[least].n {
			least = r
		}
		if least == i {
			return
		}
		h.swap(i, least)
		i = least
	}
}
