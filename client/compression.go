package client

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Compression is a payload codec, in the formats upstream's clients use: LZ4 raw blocks (no
// frame), zlib streams, zstd frames, snappy blocks.
type Compression int

// The codecs; values match the protocol's CompressionType.
const (
	NoCompression Compression = Compression(pb.CompressionType_NONE)
	LZ4           Compression = Compression(pb.CompressionType_LZ4)
	ZLIB          Compression = Compression(pb.CompressionType_ZLIB)
	ZSTD          Compression = Compression(pb.CompressionType_ZSTD)
	SNAPPY        Compression = Compression(pb.CompressionType_SNAPPY)
)

func (c Compression) String() string { return pb.CompressionType(c).String() }

// The zstd coder keeps no per-call state in EncodeAll/DecodeAll, so one of each is shared
// by all producers and consumers of a codec instance; they are created on first use.
type codecs struct {
	once sync.Once
	enc  *zstd.Encoder
	dec  *zstd.Decoder
	err  error
}

func (z *codecs) zstd() (*zstd.Encoder, *zstd.Decoder, error) {
	z.once.Do(func() {
		z.enc, z.err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if z.err == nil {
			z.dec, z.err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
		}
	})
	return z.enc, z.dec, z.err
}

func (z *codecs) close() {
	if z.enc != nil {
		z.enc.Close()
	}
	if z.dec != nil {
		z.dec.Close()
	}
}

// compress appends the compressed form of src to dst[:0].
func (z *codecs) compress(c Compression, dst, src []byte) ([]byte, error) {
	switch c {
	case NoCompression:
		return append(dst[:0], src...), nil
	case LZ4:
		bound := lz4.CompressBlockBound(len(src))
		if cap(dst) < bound {
			dst = make([]byte, bound)
		}
		dst = dst[:bound]
		var lc lz4.Compressor
		n, err := lc.CompressBlock(src, dst)
		if err != nil {
			return nil, fmt.Errorf("lz4: %w", err)
		}
		if n == 0 {
			// Incompressible: emit one literal-only sequence, which every LZ4 block decoder
			// accepts (upstream's Go client does the same).
			return lz4Literals(dst[:0], src), nil
		}
		return dst[:n], nil
	case ZLIB:
		b := bytes.NewBuffer(dst[:0])
		w := zlib.NewWriter(b)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case ZSTD:
		enc, _, err := z.zstd()
		if err != nil {
			return nil, err
		}
		return enc.EncodeAll(src, dst[:0]), nil
	case SNAPPY:
		return snappy.Encode(dst[:cap(dst)], src), nil
	}
	return nil, fmt.Errorf("%w: compression %d", ErrInvalidConfig, c)
}

// lz4Literals encodes src as a single LZ4 sequence of literals and no match.
func lz4Literals(dst, src []byte) []byte {
	n := len(src)
	if n < 15 {
		dst = append(dst, byte(n<<4))
	} else {
		dst = append(dst, 0xF0)
		for l := n - 15; ; l -= 255 {
			if l < 255 {
				dst = append(dst, byte(l))
				break
			}
			dst = append(dst, 255)
		}
	}
	return append(dst, src...)
}

// decompress returns src decompressed to exactly size bytes.
func (z *codecs) decompress(c pb.CompressionType, src []byte, size int) ([]byte, error) {
	if size < 0 || size > 128<<20 {
		return nil, fmt.Errorf("uncompressed size %d out of range", size)
	}
	var out []byte
	var err error
	switch c {
	case pb.CompressionType_NONE:
		return src, nil
	case pb.CompressionType_LZ4:
		out = make([]byte, size)
		var n int
		n, err = lz4.UncompressBlock(src, out)
		out = out[:max(n, 0)]
	case pb.CompressionType_ZLIB:
		var r io.ReadCloser
		r, err = zlib.NewReader(bytes.NewReader(src))
		if err == nil {
			out = make([]byte, size)
			_, err = io.ReadFull(r, out)
			r.Close()
		}
	case pb.CompressionType_ZSTD:
		var dec *zstd.Decoder
		_, dec, err = z.zstd()
		if err == nil {
			out, err = dec.DecodeAll(src, make([]byte, 0, size))
		}
	case pb.CompressionType_SNAPPY:
		out, err = snappy.Decode(make([]byte, size), src)
	default:
		return nil, fmt.Errorf("unsupported compression %v", c)
	}
	if err != nil {
		return nil, fmt.Errorf("%v: %w", c, err)
	}
	if len(out) != size {
		return nil, fmt.Errorf("%v: %d bytes, metadata says %d", c, len(out), size)
	}
	return out, nil
}
