package wire

import (
	"strconv"
	"testing"
)

func TestMurmur3_32(t *testing.T) {
	t.Parallel()
	// Published MurmurHash3 x86_32 vectors (SMHasher's reference implementation). Together they
	// cover every tail length (0-3 bytes), the seed, and bytes with the high bit set.
	tests := []struct {
		data string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514e28b7},
		{"", 0xffffffff, 0x81f16f39},
		{"\x00\x00\x00\x00", 0, 0x2362f9de},
		{"\xff\xff\xff\xff", 0, 0x76293b50},
		{"\x21\x43\x65\x87", 0, 0xf55b516b},
		{"\x21\x43\x65\x87", 0x5082edee, 0x2362f9de},
		{"\x21\x43\x65", 0, 0x7e4a8634},
		{"\x21\x43", 0, 0xa0f7b07a},
		{"\x21", 0, 0x72661cf4},
		{"a", 0x9747b28c, 0x7fa09ea6},
		{"ab", 0x9747b28c, 0x74875592},
		{"abc", 0x9747b28c, 0xc84a62dd},
		{"abcd", 0x9747b28c, 0xf0478627},
		{"aaaa", 0x9747b28c, 0x5a97808a},
		{"Hello, world!", 0x9747b28c, 0x24884cba},
		{"The quick brown fox jumps over the lazy dog", 0x9747b28c, 0x2fa826cd},
		{"hello", 0, 0x248bfa47},
		{"The quick brown fox jumps over the lazy dog", 0, 0x2e4ff723},
	}
	for _, tt := range tests {
		if got := Murmur3_32([]byte(tt.data), tt.seed); got != tt.want {
			t.Errorf("Murmur3_32(%q, %#x) = %#08x, want %#08x", tt.data, tt.seed, got, tt.want)
		}
	}
}

func TestKeySharedHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		want uint32
	}{
		{"hello", 64071},    // murmur 0x248bfa47
		{"key-1", 5536},     // murmur 0x98b115a0: sign bit set, upstream clears it first
		{"NONE_KEY", 48803}, // upstream's key for messages without one; murmur 0x9e15bea3
		{"key-30884", 1},    // murmur 0x512f0000: slot 0, which upstream moves to 1
	}
	for _, tt := range tests {
		if got := KeySharedHash([]byte(tt.key)); got != tt.want {
			t.Errorf("KeySharedHash(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
	for i := range 10000 {
		key := []byte("k" + strconv.Itoa(i))
		got := KeySharedHash(key)
		if got == 0 || got >= KeySharedRangeSize {
			t.Fatalf("KeySharedHash(%q) = %d, outside 1..65535", key, got)
		}
		if low := Murmur3_32(key, 0) & 0xffff; low != 0 && got != low {
			t.Fatalf("KeySharedHash(%q) = %d, want the low 16 bits %d", key, got, low)
		}
	}
}

func TestJavaStringHash(t *testing.T) {
	t.Parallel()
	// Values of Java's "...".hashCode().
	tests := []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"a", 97},
		{"hello", 99162322},
		{"Aa", 2112}, // the textbook collision with "BB"
		{"BB", 2112},
		{"polygenelubricants", -2147483648}, // overflows to Integer.MIN_VALUE
		{"The quick brown fox jumps over the lazy dog", -609428141},
		{"héllo", 103094734}, // é is one UTF-16 unit (U+00E9), two UTF-8 bytes
		{"😀", 1772899},       // U+1F600 = surrogates D83D DE00: 0xD83D*31 + 0xDE00
		{"\xff", 0xfffd},     // invalid UTF-8 decodes as U+FFFD
	}
	for _, tt := range tests {
		if got := JavaStringHash(tt.s); got != tt.want {
			t.Errorf("JavaStringHash(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}
