package compress

import (
	"bytes"
	"errors"
	"testing"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

var codecs = []pb.CompressionType{
	pb.CompressionType_NONE, pb.CompressionType_LZ4, pb.CompressionType_ZLIB,
	pb.CompressionType_ZSTD, pb.CompressionType_SNAPPY,
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	inputs := [][]byte{{}, []byte("x"), bytes.Repeat([]byte("letterbox dead letters "), 1000)}
	for _, c := range codecs {
		for _, in := range inputs {
			z, err := Compress(c, in)
			if err != nil {
				t.Fatalf("%s: compress: %v", c, err)
			}
			out, err := Decompress(c, z, len(in))
			if err != nil {
				t.Fatalf("%s: decompress %d bytes: %v", c, len(in), err)
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("%s: round trip of %d bytes differs", c, len(in))
			}
		}
	}
}

func TestCorrupt(t *testing.T) {
	t.Parallel()
	in := bytes.Repeat([]byte("abc"), 100)
	for _, c := range codecs[1:] {
		z, err := Compress(c, in)
		if err != nil {
			t.Fatal(err)
		}
		// A wrong announced size, a truncated stream and garbage all fail cleanly.
		for name, tc := range map[string]struct {
			src  []byte
			size int
		}{
			"size":      {z, len(in) + 1},
			"truncated": {z[:len(z)/2], len(in)},
			"garbage":   {[]byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb}, len(in)},
			"huge":      {z, MaxSize + 1},
			"negative":  {z, -1},
		} {
			if _, err := Decompress(c, tc.src, tc.size); err == nil {
				t.Errorf("%s %s: want an error", c, name)
			} else if name != "huge" && name != "negative" && !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s %s: %v, want ErrCorrupt", c, name, err)
			}
		}
	}
	if _, err := Decompress(pb.CompressionType(99), []byte{1}, 1); err == nil {
		t.Error("unknown codec: want an error")
	}
}
