package client

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/letterbox-dev/letterbox/client/wire"
)

// frameReader reads frames with wire's codec. Unlike wire.Reader its limit can be raised
// after the handshake (to the broker's max_message_size + padding) without losing buffered
// bytes.
type frameReader struct {
	r        *bufio.Reader
	maxFrame int
	scratch  wire.Scratch // MESSAGE and SEND_RECEIPT: the reader handles each before the next
	mem      readerMemory
}

// readerMemory is what a connection's reader decodes each MESSAGE into, reused from one to
// the next (a consumer of single-message entries allocated per message the metadata's
// scalars, properties and strings, and a list of one): the entry's metadata, and the list of
// its messages, which the consumer's queue copies.
type readerMemory struct {
	meta wire.MetadataScratch
	msgs []*Message
}

// maxReusedMessages bounds the list a reader keeps from one entry to the next.
const maxReusedMessages = 1024

func newFrameReader(r io.Reader, maxFrame int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), maxFrame: maxFrame}
}

// Next returns the next frame, in a buffer of its own: a MESSAGE's payload is kept as it lies
// rather than copied out of a buffer the next frame reuses (most frames a client reads are
// MESSAGEs, and the copy was one more pass over every payload, and one more allocation). The
// command of a MESSAGE or a SEND_RECEIPT is valid only until the next call (wire.Scratch).
func (fr *frameReader) Next() (wire.Frame, error) {
	var size [4]byte
	if _, err := io.ReadFull(fr.r, size[:]); err != nil {
		return wire.Frame{}, err
	}
	n, _, err := wire.FrameLength(size[:], fr.maxFrame)
	if err != nil {
		return wire.Frame{}, err
	}
	buf := make([]byte, n)
	copy(buf, size[:])
	if _, err := io.ReadFull(fr.r, buf[4:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return wire.Frame{}, fmt.Errorf("truncated frame of %d bytes: %w", binary.BigEndian.Uint32(size[:]), err)
	}
	return fr.scratch.DecodeFrame(buf)
}
