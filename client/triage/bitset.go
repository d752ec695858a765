package triage

import "math/bits"

// bitset is a set of letters by their index in the scan.
type bitset []uint64

func newBitset(n int64, full bool) bitset {
	b := make(bitset, (n+63)/64)
	if full {
		b.invert(n)
	}
	return b
}

func (b bitset) set(i int64) { b[i/64] |= 1 << (i % 64) }

// setRange adds the letters from..to-1.
func (b bitset) setRange(from, to int64) {
	for ; from < to && from%64 != 0; from++ {
		b.set(from)
	}
	for ; from+64 <= to; from += 64 {
		b[from/64] = ^uint64(0)
	}
	for ; from < to; from++ {
		b.set(from)
	}
}

// invert makes b the set of the letters, of n, it did not hold.
func (b bitset) invert(n int64) {
	for i := range b {
		b[i] = ^b[i]
	}
	if r := n % 64; r != 0 {
		b[len(b)-1] &= 1<<r - 1
	}
}

func (b bitset) count() int64 {
	var n int
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return int64(n)
}

// andCount is the size of b ∩ o.
func (b bitset) andCount(o bitset) int64 {
	var n int
	for i := range b {
		n += bits.OnesCount64(b[i] & o[i])
	}
	return int64(n)
}

// andCount3 is the size of a ∩ b ∩ c.
func andCount3(a, b, c bitset) int64 {
	var n int
	for i := range a {
		n += bits.OnesCount64(a[i] & b[i] & c[i])
	}
	return int64(n)
}

func (b bitset) and(o bitset) bitset {
	out := make(bitset, len(b))
	for i := range b {
		out[i] = b[i] & o[i]
	}
	return out
}

func (b bitset) or(o bitset) bitset {
	out := make(bitset, len(b))
	for i := range b {
		out[i] = b[i] | o[i]
	}
	return out
}

// clear takes o's letters out of b.
func (b bitset) clear(o bitset) {
	for i := range b {
		b[i] &^= o[i]
	}
}
