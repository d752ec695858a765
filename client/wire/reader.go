package wire

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Reader reads frames from a byte stream, refusing any frame above its size limit before
// reading (or allocating for) its body.
type Reader struct {
	r        *bufio.Reader
	maxFrame int
	buf      []byte
	pool     *BufferPool     // for frames of PooledFrameSize and more; nil: none
	pooled   *Buffer         // the frame last returned, when it came from pool
	send     *handledScratch // what SEND commands are decoded into (ReuseSendCommands); nil: new ones
	ack      *handledScratch // what ACK commands are decoded into (ReuseAckCommands); nil: new ones
}

// NewReader reads frames of at most maxFrame bytes (after the size prefix) from r.
func NewReader(r io.Reader, maxFrame int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), maxFrame: maxFrame}
}

// NewPooledReader is NewReader reading frames of PooledFrameSize and more into buffers from
// pool; Detach hands them over with their reference count.
func NewPooledReader(r io.Reader, maxFrame int, pool *BufferPool) *Reader {
	rd := NewReader(r, maxFrame)
	rd.pool = pool
	return rd
}

// Next reads and decodes the next frame. The returned frame's Payload aliases an internal
// buffer that the following call to Next overwrites; copy what must outlive it, or Detach.
func (r *Reader) Next() (Frame, error) {
	if r.pooled != nil {
		r.pooled.Release() // the previous frame was not detached
		r.pooled = nil
	}
	var size [4]byte
	if _, err := io.ReadFull(r.r, size[:]); err != nil {
		return Frame{}, err
	}
	n, _, err := FrameLength(size[:], r.maxFrame)
	if err != nil {
		return Frame{}, err
	}
	var buf []byte
	if r.pool != nil && n >= PooledFrameSize {
		r.pooled = r.pool.Get(n)
		buf = r.pooled.B
	} else {
		if cap(r.buf) < n {
			r.buf = make([]byte, n)
		}
		buf = r.buf[:n]
	}
	copy(buf, size[:])
	if _, err := io.ReadFull(r.r, buf[4:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, fmt.Errorf("wire: truncated frame of %d bytes: %w", binary.BigEndian.Uint32(size[:]), err)
	}
	// Large frames are rare; do not keep a multi-megabyte buffer for the connection's lifetime.
	if n > 1<<20 {
		r.buf = nil
	}
	return decodeFrame(buf, decodeInto{send: r.send, ack: r.ack})
}

// Ready reports whether the next frame is wholly buffered, so that Next returns it without
// waiting for the connection: a server can put off work until it has handled what arrived.
func (r *Reader) Ready() bool {
	if r.r.Buffered() < 4 {
		return false
	}
	size, _ := r.r.Peek(4)
	return uint64(r.r.Buffered()) >= 4+uint64(binary.BigEndian.Uint32(size))
}

// ReuseSendCommands has Next decode every SEND into the same memory, its BaseCommand and
// CommandSend alike, valid until the next call to Next: for a server whose handlers keep
// nothing of a SEND but values copied out of it. A SEND then allocates nothing to decode.
func (r *Reader) ReuseSendCommands() { r.send = r.handled() }

// ReuseAckCommands is ReuseSendCommands for ACK: every ACK, its message ids included, is
// decoded into the same memory, valid until the next call to Next (an ack set is a slice of
// its own all the same).
func (r *Reader) ReuseAckCommands() { r.ack = r.handled() }

// handled is the memory reused SENDs and ACKs are decoded into: one for both, as each is valid
// only until the next frame.
func (r *Reader) handled() *handledScratch {
	switch {
	case r.send != nil:
		return r.send
	case r.ack != nil:
		return r.ack
	}
	return new(handledScratch)
}

// DetachPooled is Detach for a frame read into a pooled buffer, and nil otherwise, leaving such
// a frame's buffer the Reader's: a caller that copies small payloads saves an allocation per
// frame, and calls Detach only for those it keeps.
func (r *Reader) DetachPooled() *Buffer {
	b := r.pooled
	r.pooled = nil
	return b
}

// Detach hands the buffer of the frame last returned by Next to the caller, who may keep its
// Payload: the next frame is read into a new buffer. It saves copying a payload that is to be
// stored. A frame read into a pooled buffer comes with it, held once by the caller, who must
// Release it; otherwise Detach returns nil and the bytes are the garbage collector's.
func (r *Reader) Detach() *Buffer {
	if b := r.pooled; b != nil {
		r.pooled = nil
		return b
	}
	r.buf = nil
	return nil
}
