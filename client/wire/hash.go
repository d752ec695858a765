package wire

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
)

// KeySharedRangeSize is the number of Key_Shared hash slots: IntRange bounds in
// KeySharedMeta.hashRanges are inclusive and lie in 0..KeySharedRangeSize-1.
const KeySharedRangeSize = 1 << 16

// Murmur3_32 is MurmurHash3 x86_32 of data with the given seed, as Austin Appleby's reference
// implementation computes it (the 32-bit value, unsigned). The underscore follows upstream's
// Murmur3_32Hash.
func Murmur3_32(data []byte, seed uint32) uint32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	h := seed
	n := len(data)
	for ; len(data) >= 4; data = data[4:] {
		k := binary.LittleEndian.Uint32(data)
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	var k uint32
	switch len(data) {
	case 3:
		k ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(data[0])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	// The reference mixes in the length as a 32-bit value.
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// KeySharedHash returns the Key_Shared hash slot (1..65535) of a sticky key, as an upstream
// broker computes it to pick the consumer whose hash ranges hold it: Murmur3_32Hash.makeHash
// (Murmur3_32 with seed 0, sign bit cleared) modulo 65536, with slot 0 moved to 1.
//
// Upstream's sticky key is the entry's ordering_key if set, else its partition_key
// (base64-decoded when partition_key_b64_encoded, its UTF-8 bytes otherwise), else "NONE_KEY".
//
// Clearing the sign bit cannot change the result, because 65536 divides 2^31. The move from 0
// to 1 is upstream's since 4.0 (PIP-379: 0 means "no hash" in its dispatchers); 3.x brokers
// leave such keys in slot 0, so only a consumer whose ranges hold slot 0 but not slot 1 would
// see a difference.
func KeySharedHash(key []byte) uint32 {
	slot := (Murmur3_32(key, 0) & 0x7fffffff) % KeySharedRangeSize
	if slot == 0 {
		slot = 1
	}
	return slot
}

// JavaStringHash is Java's String.hashCode of s: h = 31*h + c over its UTF-16 code units, so a
// character outside the BMP counts as its two surrogates. Each byte of invalid UTF-8 counts as
// U+FFFD, the way Go's range over a string decodes it.
//
// Java clients route a keyed message to partition (hash & 0x7fffffff) % partitions. The
// official Go client (v0.19.0) differs twice: its JavaStringHash sums the UTF-8 bytes rather
// than UTF-16 units, and it routes with uint32(hash) % partitions, keeping the sign bit. The two
// therefore agree only on ASCII keys, and then only when the hash is non-negative or the
// partition count is a power of two.
func JavaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + int32(hi)
			h = 31*h + int32(lo)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}
