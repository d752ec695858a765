// Package compress decompresses (and, for tests and producers, compresses) message payloads
// in the codecs the Pulsar protocol names in MessageMetadata.compression: LZ4 (a raw block, no
// frame), ZLIB, ZSTD and SNAPPY (a raw block, no framing), exactly as the official clients
// produce them. The broker uses it to show peeked messages; the client to read them.
package compress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// MaxSize bounds the uncompressed size Decompress accepts: a peer-controlled size must not
// make us allocate without limit. Pulsar's own limit on a message is 5 MiB by default; batches
// and chunks stay under it too, so 64 MiB leaves room for any broker setting.
const MaxSize = 64 << 20

// ErrCorrupt means the data does not decompress to the announced size.
var ErrCorrupt = errors.New("compress: corrupt or truncated data")

// Decompress returns src decompressed with codec c. size is MessageMetadata.uncompressed_size,
// which the result must match. NONE returns src itself.
func Decompress(c pb.CompressionType, src []byte, size int) ([]byte, error) {
	if c == pb.CompressionType_NONE {
		return src, nil
	}
	if size < 0 || size > MaxSize {
		return nil, fmt.Errorf("compress: uncompressed size %d out of range", size)
	}
	var out []byte
	var err error
	switch c {
	case pb.CompressionType_LZ4:
		out = make([]byte, size)
		var n int
		n, err = lz4.UncompressBlock(src, out)
		if err == nil && n != size {
			err = ErrCorrupt
		}
	case pb.CompressionType_ZLIB:
		var zr io.ReadCloser
		if zr, err = zlib.NewReader(bytes.NewReader(src)); err == nil {
			out, err = readAll(zr, size)
		}
	case pb.CompressionType_ZSTD:
		dec := zstdDecoder()
		out, err = dec.DecodeAll(src, make([]byte, 0, size))
		if err == nil && len(out) != size {
			err = ErrCorrupt
		}
	case pb.CompressionType_SNAPPY:
		var n int
		n, err = snappy.DecodedLen(src)
		if err == nil && n != size {
			err = ErrCorrupt
		}
		if err == nil {
			out, err = snappy.Decode(make([]byte, size), src)
		}
	default:
		return nil, fmt.Errorf("compress: unknown compression type %d", c)
	}
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return nil, fmt.Errorf("compress: %s: %w", c, err)
		}
		return nil, fmt.Errorf("compress: %s: %w: %v", c, ErrCorrupt, err)
	}
	return out, nil
}

// readAll reads exactly size bytes from a zlib stream and requires it to end there.
func readAll(r io.ReadCloser, size int) ([]byte, error) {
	defer r.Close()
	out := make([]byte, size)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, err
	}
	var one [1]byte
	if n, _ := r.Read(one[:]); n != 0 {
		return nil, ErrCorrupt
	}
	return out, nil
}

// Compress returns src compressed with codec c, in the form the official clients send.
func Compress(c pb.CompressionType, src []byte) ([]byte, error) {
	switch c {
	case pb.CompressionType_NONE:
		return src, nil
	case pb.CompressionType_LZ4:
		dst := make([]byte, lz4.CompressBlockBound(len(src)))
		var comp lz4.Compressor
		n, err := comp.CompressBlock(src, dst)
		if err != nil {
			return nil, err
		}
		return dst[:n], nil
	case pb.CompressionType_ZLIB:
		var buf bytes.Buffer
		w := zlib.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case pb.CompressionType_ZSTD:
		return zstdEncoder().EncodeAll(src, nil), nil
	case pb.CompressionType_SNAPPY:
		return snappy.Encode(nil, src), nil
	}
	return nil, fmt.Errorf("compress: unknown compression type %d", c)
}

var (
	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdEnc  *zstd.Encoder
)

// The zstd coders are safe for concurrent DecodeAll/EncodeAll and costly to build: share one.
func zstdInit() {
	zstdOnce.Do(func() {
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(MaxSize))
		zstdEnc, _ = zstd.NewWriter(nil)
	})
}

func zstdDecoder() *zstd.Decoder { zstdInit(); return zstdDec }
func zstdEncoder() *zstd.Encoder { zstdInit(); return zstdEnc }
