package triage

// How Facets keep a number per letter: in chunks of a fixed size rather than one slice grown by
// doubling, so that a column of a million letters never copies itself nor holds, at its peak,
// the old array, the new one and the room the new one has yet to fill (three times what it
// needs); a chunk whose letters all have the same number keeps it once (most letters of a DLQ
// share their payload kind, size, producer, content type, hour); and a dictionary's ids take
// one byte a letter while every id fits, two after (letterIDs).

const (
	chunkBits = 16
	chunkLen  = 1 << chunkBits
	chunkMask = chunkLen - 1
	// firstChunk is the first chunk's room: a selection of a few letters (the TUI's search of
	// one key) costs a few bytes a column, not a whole chunk.
	firstChunk = 256
)

// chunked is a number per letter, 0 for the letters never set.
type chunked[T uint8 | uint16 | uint64] struct {
	chunks []chunk[T]
}

// chunk is chunkLen letters' numbers: vals, or, while vals is nil, same for each of the
// first n letters. The letters past them are 0.
type chunk[T uint8 | uint16 | uint64] struct {
	vals []T
	same T
	n    int
}

func (c *chunk[T]) len() int {
	if c.vals != nil {
		return len(c.vals)
	}
	return c.n
}

// at is the number of the chunk's letter j.
func (c *chunk[T]) at(j int) T {
	switch {
	case c.vals != nil && j < len(c.vals):
		return c.vals[j]
	case c.vals == nil && j < c.n:
		return c.same
	}
	return 0
}

func (c *chunked[T]) set(i int64, v T) {
	k, j := int(i>>chunkBits), int(i&chunkMask)
	for len(c.chunks) <= k {
		c.chunks = append(c.chunks, chunk[T]{})
	}
	ch := &c.chunks[k]
	if ch.vals == nil {
		switch {
		case j == ch.n && (ch.n == 0 || v == ch.same): // the next letter, with the same number
			ch.same, ch.n = v, ch.n+1
			return
		case j < ch.n && v == ch.same:
			return
		}
		// Numbers differ: each letter keeps its own from now on.
		room := chunkLen
		if k == 0 {
			room = min(chunkLen, max(firstChunk, 2*ch.n, j+1))
		}
		ch.vals = make([]T, ch.n, room)
		for x := range ch.vals {
			ch.vals[x] = ch.same
		}
	}
	if j >= len(ch.vals) {
		if j >= cap(ch.vals) {
			grown := make([]T, len(ch.vals), min(chunkLen, max(2*cap(ch.vals), j+1)))
			copy(grown, ch.vals)
			ch.vals = grown
		}
		ch.vals = ch.vals[:j+1] // the room past len is zero: it was never written
	}
	ch.vals[j] = v
}

func (c *chunked[T]) at(i int64) T {
	k := int(i >> chunkBits)
	if k >= len(c.chunks) {
		return 0
	}
	return c.chunks[k].at(int(i & chunkMask))
}

// letterIDs are small numbers per letter (a facet's dictionary ids): one byte each while every
// id set is below 256, two once one is not.
type letterIDs struct {
	narrow chunked[uint8]
	wide   chunked[uint16]
	isWide bool
}

func (l *letterIDs) set(i int64, id uint16) {
	if l.isWide {
		l.wide.set(i, id)
		return
	}
	if id < 1<<8 {
		l.narrow.set(i, uint8(id))
		return
	}
	// Widen every chunk once.
	for k, ch := range l.narrow.chunks {
		w := chunk[uint16]{same: uint16(ch.same), n: ch.n}
		if ch.vals != nil {
			w.vals = make([]uint16, len(ch.vals), cap(ch.vals))
			for j, v := range ch.vals {
				w.vals[j] = uint16(v)
			}
		}
		l.wide.chunks = append(l.wide.chunks, w)
		l.narrow.chunks[k] = chunk[uint8]{}
	}
	l.narrow = chunked[uint8]{}
	l.isWide = true
	l.wide.set(i, id)
}

func (l *letterIDs) at(i int64) uint16 {
	if l.isWide {
		return l.wide.at(i)
	}
	return uint16(l.narrow.at(i))
}

// counts adds to counts[id] the letters of each id among the first n letters (counts must hold
// every id set).
func (l *letterIDs) counts(n int64, counts []int64) {
	if l.isWide {
		countChunks(&l.wide, n, counts)
	} else {
		countChunks(&l.narrow, n, counts)
	}
}

// mark sets in b the letters, of the first n, whose id is one that want says (the letters never
// set have id 0); want holds every id set.
func (l *letterIDs) mark(b bitset, n int64, want []bool) {
	if l.isWide {
		markChunks(&l.wide, b, n, func(id uint16) bool { return want[id] })
	} else {
		markChunks(&l.narrow, b, n, func(id uint8) bool { return want[id] })
	}
}

func countChunks[T uint8 | uint16](c *chunked[T], n int64, counts []int64) {
	covered := int64(0)
	for _, ch := range c.chunks {
		if ch.vals == nil {
			counts[ch.same] += int64(ch.n)
		}
		for _, id := range ch.vals {
			counts[id]++
		}
		covered += int64(ch.len())
	}
	counts[0] += n - covered
}

// markChunks sets in b the letters of the first n whose number in c is one that want says.
// Most chunks are one number or hold few that are wanted: want is asked once per number
// where it can be.
func markChunks[T uint8 | uint16 | uint64](c *chunked[T], b bitset, n int64, want func(T) bool) {
	zero := want(0)
	for k, ch := range c.chunks {
		first := int64(k) << chunkBits
		if ch.vals == nil {
			if want(ch.same) {
				b.setRange(first, first+int64(ch.n))
			}
		}
		for j, v := range ch.vals {
			if v == 0 && zero || v != 0 && want(v) {
				b.set(first + int64(j))
			}
		}
		if zero { // the letters after the chunk's end, up to the next chunk
			b.setRange(first+int64(ch.len()), min(first+chunkLen, n))
		}
	}
	if zero {
		b.setRange(int64(len(c.chunks))<<chunkBits, n)
	}
}

// markHashes sets in b the letters of the first n whose hash in c is want (0: those without).
func markHashes(c *chunked[uint64], b bitset, n int64, want uint64) {
	markChunks(c, b, n, func(h uint64) bool { return h == want })
}
