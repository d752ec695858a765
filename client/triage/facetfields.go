package triage

// The json.NAME facets: which of the first FacetJSONFieldCap top-level field names each
// letter's payload has, as a set of bits (bit k: fieldNames[k]). Payloads of one kind of
// document share a set, so a letter keeps the id of its set in a dictionary of the sets seen
// (one or two bytes); past fieldSetCap different sets, the sets themselves (eight bytes).

// fieldSetCap is how many different sets of fields the dictionary holds.
const fieldSetCap = 1<<16 - 1

type fieldSets struct {
	ids   letterIDs // 0: no field
	sets  []uint64  // id k ≥ 1 is sets[k-1]
	index map[uint64]uint16
	// masks, once the dictionary is full: each letter's set itself.
	masks chunked[uint64]
	full  bool
}

// set records the fields of letter i's payload.
func (s *fieldSets) set(i int64, mask uint64) {
	if mask == 0 {
		return
	}
	if s.full {
		s.masks.set(i, mask)
		return
	}
	id, ok := s.index[mask]
	if !ok {
		if len(s.sets) == fieldSetCap {
			s.toMasks(i)
			s.masks.set(i, mask)
			return
		}
		if s.index == nil {
			s.index = map[uint64]uint16{}
		}
		s.sets = append(s.sets, mask)
		id = uint16(len(s.sets))
		s.index[mask] = id
	}
	s.ids.set(i, id)
}

// toMasks moves every letter before n from its id to its set.
func (s *fieldSets) toMasks(n int64) {
	for i := range n {
		if id := s.ids.at(i); id != 0 {
			s.masks.set(i, s.sets[id-1])
		}
	}
	s.ids, s.sets, s.index, s.full = letterIDs{}, nil, nil, true
}

// has counts the letters, of the first n, whose payload has field bit.
func (s *fieldSets) has(n int64, bit int) int64 {
	if s.full {
		b := newBitset(n, false)
		s.mark(b, n, bit)
		return b.count()
	}
	counts := make([]int64, len(s.sets)+1)
	s.ids.counts(n, counts)
	var k int64
	for id, set := range s.sets {
		if set&(1<<bit) != 0 {
			k += counts[id+1]
		}
	}
	return k
}

// mark sets in b the letters, of the first n, whose payload has field bit.
func (s *fieldSets) mark(b bitset, n int64, bit int) {
	if s.full {
		markChunks(&s.masks, b, n, func(m uint64) bool { return m&(1<<bit) != 0 })
		return
	}
	want := make([]bool, len(s.sets)+1)
	for id, set := range s.sets {
		want[id+1] = set&(1<<bit) != 0
	}
	s.ids.mark(b, n, want)
}
