// Package wire is the Pulsar binary protocol as letterbox speaks it: the generated protobuf
// messages (package pb) and the frame codec that the client and the embedded broker share.
//
// A frame is
//
//	[totalSize u32][cmdSize u32][BaseCommand]                                    simple command
//	[totalSize u32][cmdSize u32][BaseCommand][0x0e01][crc32c u32][metaSize u32][MessageMetadata][payload]
//
// where totalSize counts every byte after itself and the CRC32C covers metaSize to the end. A
// broker may put [0x0e02][size u32][BrokerEntryMetadata] before the 0x0e01 magic of a MESSAGE.
// Everything here is a pure function over bytes, so it can be fuzzed and tested without sockets.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

const (
	// DefaultMaxMessageSize is upstream's maxMessageSize default (5 MiB).
	DefaultMaxMessageSize = 5 << 20
	// FramePadding is what a frame may carry beyond the message size limit (command, metadata),
	// as upstream allows.
	FramePadding = 10 << 10

	magicCRC32C      = 0x0e01
	magicBrokerEntry = 0x0e02
)

// Errors returned by the codec. A caller that sees any of them on a connection must close it:
// the byte stream can no longer be trusted to be aligned on frame boundaries.
var (
	ErrFrameTooLarge    = errors.New("wire: frame exceeds the maximum size")
	ErrFrameTooSmall    = errors.New("wire: frame too small")
	ErrBadCommandSize   = errors.New("wire: command size exceeds frame")
	ErrMissingMagic     = errors.New("wire: payload without the 0x0e01 checksum magic")
	ErrChecksumMismatch = errors.New("wire: payload checksum mismatch")
	ErrBadMetadataSize  = errors.New("wire: metadata size exceeds payload")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MaxFrameSize is the largest frame a peer accepts when messages may be maxMessageSize bytes.
func MaxFrameSize(maxMessageSize int) int { return maxMessageSize + FramePadding }

// Frame is one decoded frame.
type Frame struct {
	Cmd *pb.BaseCommand
	// Payload is set for SEND and MESSAGE: the bytes from the 0x0e01 magic to the end of the
	// frame (checksum, metadata size, metadata, payload), with any broker entry metadata removed.
	// It aliases the buffer the frame was decoded from.
	Payload []byte
	// BrokerEntry is the raw BrokerEntryMetadata that preceded the payload, if any.
	BrokerEntry []byte
}

// FrameLength reports the length of the frame at the start of buf, including its 4-byte size
// prefix, once at least 4 bytes are there. It fails when the declared size is impossible or
// above maxFrame (which bounds totalSize, as upstream's limit does).
func FrameLength(buf []byte, maxFrame int) (int, bool, error) {
	if len(buf) < 4 {
		return 0, false, nil
	}
	total := binary.BigEndian.Uint32(buf)
	if total < 4 {
		return 0, false, fmt.Errorf("%w: declares %d bytes", ErrFrameTooSmall, total)
	}
	if uint64(total) > uint64(maxFrame) {
		return 0, false, fmt.Errorf("%w: declares %d bytes, limit %d", ErrFrameTooLarge, total, maxFrame)
	}
	return int(total) + 4, true, nil
}

// DecodeFrame decodes one whole frame, size prefix included. The payload checksum of a payload
// command is verified; when only the payload is bad (ErrMissingMagic, ErrChecksumMismatch,
// ErrBadMetadataSize) the decoded command is returned alongside the error.
func DecodeFrame(frame []byte) (Frame, error) { return decodeFrame(frame, decodeInto{}) }

// A Scratch is where a client decodes the commands it reads once per entry, MESSAGE and
// SEND_RECEIPT, so that reading them allocates nothing but the frame: those commands (a
// BaseCommand, a pointer for each command type, and a block of the command's fields) were an
// eighth of what a client producing and consuming unbatched messages allocated per message.
// Its reader must be done with each such command before it decodes the next frame.
type Scratch struct {
	cmd     pb.BaseCommand
	message messageBlock
	receipt receiptBlock
}

// DecodeFrame is DecodeFrame decoding a MESSAGE or a SEND_RECEIPT into s: the command, its
// message and their message id are valid until the next call (a MESSAGE's ack set is a slice
// of its own, as is the payload, in frame). Other commands are new, as DecodeFrame's.
func (s *Scratch) DecodeFrame(frame []byte) (Frame, error) {
	return decodeFrame(frame, decodeInto{scratch: s})
}

// decodeInto says where decodeFrame decodes the commands it may reuse memory for: SEND and ACK
// into a broker's reader's (whose handlers keep nothing of them), MESSAGE and SEND_RECEIPT into
// scratch; any nil means new memory.
type decodeInto struct {
	send    *handledScratch
	ack     *handledScratch
	scratch *Scratch
}

// handledScratch is where a Reader decodes every SEND and every ACK (ReuseSendCommands,
// ReuseAckCommands).
type handledScratch struct {
	cmd  pb.BaseCommand
	send sendBlock
	ack  ackBlock
}

// command returns the BaseCommand to decode raw into, zero, and the blocks for the rest.
func (d decodeInto) command(raw []byte) (*pb.BaseCommand, fastBlocks) {
	if d.send == nil && d.ack == nil && d.scratch == nil {
		return &pb.BaseCommand{}, fastBlocks{} // nothing to reuse: no need to read the type twice
	}
	if t, _, ok := leadingType(raw); ok {
		switch {
		case t == uint64(pb.BaseCommand_SEND) && d.send != nil:
			d.send.cmd = pb.BaseCommand{}
			return &d.send.cmd, fastBlocks{send: &d.send.send}
		case t == uint64(pb.BaseCommand_ACK) && d.ack != nil:
			d.ack.cmd = pb.BaseCommand{}
			return &d.ack.cmd, fastBlocks{ack: &d.ack.ack}
		case (t == uint64(pb.BaseCommand_MESSAGE) || t == uint64(pb.BaseCommand_SEND_RECEIPT)) && d.scratch != nil:
			d.scratch.cmd = pb.BaseCommand{}
			return &d.scratch.cmd, fastBlocks{scratch: d.scratch}
		}
	}
	return &pb.BaseCommand{}, fastBlocks{}
}

// decodeFrame is DecodeFrame decoding the commands into says into the storage it gives.
func decodeFrame(frame []byte, into decodeInto) (Frame, error) {
	if len(frame) < 8 {
		return Frame{}, ErrFrameTooSmall
	}
	total := binary.BigEndian.Uint32(frame)
	if int(total) != len(frame)-4 {
		return Frame{}, fmt.Errorf("%w: declares %d bytes, has %d", ErrFrameTooSmall, total, len(frame)-4)
	}
	cmdSize := binary.BigEndian.Uint32(frame[4:])
	if uint64(cmdSize) > uint64(total)-4 {
		return Frame{}, fmt.Errorf("%w: %d > %d", ErrBadCommandSize, cmdSize, total-4)
	}
	raw := frame[8 : 8+cmdSize]
	cmd, blocks := into.command(raw)
	if !decodeFastCommand(raw, cmd, blocks) {
		if err := proto.Unmarshal(raw, cmd); err != nil {
			return Frame{}, fmt.Errorf("wire: decode command: %w", err)
		}
	}
	f := Frame{Cmd: cmd}
	rest := frame[8+cmdSize:]
	if len(rest) == 0 {
		return f, nil
	}
	if len(rest) >= 6 && binary.BigEndian.Uint16(rest) == magicBrokerEntry {
		size := binary.BigEndian.Uint32(rest[2:])
		if uint64(size) > uint64(len(rest)-6) {
			// Like the payload errors below: the frame boundary is intact, so keep the command.
			return f, fmt.Errorf("%w: broker entry metadata of %d bytes, %d left", ErrBadMetadataSize, size, len(rest)-6)
		}
		f.BrokerEntry = rest[6 : 6+size]
		rest = rest[6+size:]
	}
	f.Payload = rest
	if err := VerifyPayload(rest); err != nil {
		// The frame boundary is intact, so the command is returned too: a broker answers a
		// corrupt SEND with SEND_ERROR ChecksumError rather than dropping the connection.
		return f, err
	}
	return f, nil
}

// VerifyPayload checks the magic and checksum of headersAndPayload (magic first) and that the
// metadata size fits.
func VerifyPayload(p []byte) error {
	if len(p) < 10 || binary.BigEndian.Uint16(p) != magicCRC32C {
		return ErrMissingMagic
	}
	want := binary.BigEndian.Uint32(p[2:])
	if got := crc32.Checksum(p[6:], castagnoli); got != want {
		return fmt.Errorf("%w: got %08x, frame says %08x", ErrChecksumMismatch, got, want)
	}
	if metaSize := binary.BigEndian.Uint32(p[6:]); uint64(metaSize) > uint64(len(p)-10) {
		return fmt.Errorf("%w: %d > %d", ErrBadMetadataSize, metaSize, len(p)-10)
	}
	return nil
}

// SplitPayload returns the raw metadata and the message payload of a verified headersAndPayload.
func SplitPayload(p []byte) (meta, payload []byte, err error) {
	if err := VerifyPayload(p); err != nil {
		return nil, nil, err
	}
	metaSize := binary.BigEndian.Uint32(p[6:])
	return p[10 : 10+metaSize], p[10+metaSize:], nil
}

// ParsePayload decodes the MessageMetadata of headersAndPayload and returns it with the payload.
func ParsePayload(p []byte) (*pb.MessageMetadata, []byte, error) {
	rawMeta, payload, err := SplitPayload(p)
	if err != nil {
		return nil, nil, err
	}
	meta := &pb.MessageMetadata{}
	if err := unmarshalMetadata(rawMeta, meta); err != nil {
		return nil, nil, fmt.Errorf("wire: decode message metadata: %w", err)
	}
	return meta, payload, nil
}

// AppendPayload appends headersAndPayload (magic, checksum, metadata, payload) to dst. The
// metadata is encoded in place: with dst's room from PayloadSize, nothing is allocated.
func AppendPayload(dst []byte, meta *pb.MessageMetadata, payload []byte) ([]byte, error) {
	return appendPayload(dst, meta, payload, proto.MarshalOptions{})
}

// PayloadSize is the length of the headersAndPayload AppendPayload would write. It leaves the
// metadata's size cached, which AppendSend relies on.
func PayloadSize(meta *pb.MessageMetadata, payload []byte) int {
	return 2 + 4 + 4 + proto.Size(meta) + len(payload)
}

// AppendSend appends a whole SEND frame: cmd, then meta and payload as AppendPayload writes
// them, into one buffer sized once. hpLen is PayloadSize(meta, payload), called right before
// with meta unchanged since.
func AppendSend(dst []byte, cmd *pb.BaseCommand, meta *pb.MessageMetadata, payload []byte, hpLen int) ([]byte, error) {
	start := len(dst)
	dst, err := AppendCommandHeader(dst, cmd, hpLen)
	if err != nil {
		return dst, err
	}
	from := len(dst)
	dst, err = appendPayload(dst, meta, payload, proto.MarshalOptions{UseCachedSize: true})
	if err == nil && len(dst)-from != hpLen {
		err = fmt.Errorf("wire: SEND payload of %d bytes, %d announced", len(dst)-from, hpLen)
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

func appendPayload(dst []byte, meta *pb.MessageMetadata, payload []byte, opts proto.MarshalOptions) ([]byte, error) {
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, magicCRC32C)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // checksum and metadata size, filled in below
	metaStart := len(dst)
	dst, err := opts.MarshalAppend(dst, meta)
	if err != nil {
		return dst[:start], fmt.Errorf("wire: encode message metadata: %w", err)
	}
	binary.BigEndian.PutUint32(dst[start+6:], uint32(len(dst)-metaStart))
	dst = append(dst, payload...)
	binary.BigEndian.PutUint32(dst[start+2:], crc32.Checksum(dst[start+6:], castagnoli))
	return dst, nil
}

// AppendCommand appends a frame holding cmd and, when headersAndPayload is not nil, that payload
// verbatim (it must start with the 0x0e01 magic, as ParsePayload/AppendPayload produce).
func AppendCommand(dst []byte, cmd *pb.BaseCommand, headersAndPayload []byte) ([]byte, error) {
	dst, err := AppendCommandHeader(dst, cmd, len(headersAndPayload))
	if err != nil {
		return dst, err
	}
	return append(dst, headersAndPayload...), nil
}

// AppendCommandHeader appends the part of a frame before its payload: sizes and cmd, for a
// payload of payloadLen bytes that the caller writes right after (a writer can then send a
// stored payload from where it lies instead of copying it).
//
// A MESSAGE, SEND or SEND_RECEIPT is written as its type and its own message, which is all it
// carries (command_fast.go).
func AppendCommandHeader(dst []byte, cmd *pb.BaseCommand, payloadLen int) ([]byte, error) {
	start := len(dst)
	if out, ok := appendFastCommand(append(dst, make([]byte, 8)...), cmd); ok {
		size := len(out) - start - 8
		binary.BigEndian.PutUint32(out[start:], uint32(4+size+payloadLen))
		binary.BigEndian.PutUint32(out[start+4:], uint32(size))
		return out, nil
	}
	dst = dst[:start]
	opts := proto.MarshalOptions{}
	size := opts.Size(cmd)
	dst = binary.BigEndian.AppendUint32(dst, uint32(4+size+payloadLen))
	dst = binary.BigEndian.AppendUint32(dst, uint32(size))
	dst, err := opts.MarshalAppend(dst, cmd)
	if err != nil {
		return dst[:start], fmt.Errorf("wire: encode %v: %w", cmd.GetType(), err)
	}
	return dst, nil
}

// DecodeMetadataWithoutProperties decodes the MessageMetadata of a headersAndPayload whose
// checksum was already verified (DecodeFrame does), for a reader that does not look at the
// properties (a broker, which stores them as they came): they and replicate_to are checked as
// MetadataScratch.ParseVerifiedPayload checks them, but not decoded, and are nil in what it
// returns, unless the metadata holds what only proto decodes (then everything is decoded).
func DecodeMetadataWithoutProperties(p []byte) (*pb.MessageMetadata, error) {
	return new(MetadataScratch).DecodeWithoutProperties(p)
}

// MetadataScratch is the memory of one decoded message metadata, for a caller that decodes
// one at a time and keeps none (a broker taking SENDs in, a client's reader handing messages
// on): each decoding overwrites the last. Its strings are shared (Strings) and are the
// caller's to keep, as are its byte slices. Not safe for concurrent use.
type MetadataScratch struct {
	m    pb.MessageMetadata
	mem  metaMemory
	strs Strings
}

// DecodeWithoutProperties is DecodeMetadataWithoutProperties into s: the metadata returned is
// valid until the next call.
func (s *MetadataScratch) DecodeWithoutProperties(p []byte) (*pb.MessageMetadata, error) {
	raw, err := verifiedMetadata(p)
	if err != nil {
		return nil, err
	}
	if err := s.decode(raw, false); err != nil {
		return nil, err
	}
	return &s.m, nil
}

// ParseVerifiedPayload is ParsePayload into s for a headersAndPayload whose checksum was
// already verified (DecodeFrame does): it returns the decoded metadata, valid until the next
// call, and the payload, without computing the checksum again.
func (s *MetadataScratch) ParseVerifiedPayload(p []byte) (*pb.MessageMetadata, []byte, error) {
	raw, err := verifiedMetadata(p)
	if err != nil {
		return nil, nil, err
	}
	if err := s.decode(raw, true); err != nil {
		return nil, nil, err
	}
	return &s.m, p[10+len(raw):], nil
}

// ParseBatch is ParseBatch with the strings of the messages' metadata shared by s.
func (s *MetadataScratch) ParseBatch(payload []byte, n int) ([]BatchMessage, error) {
	return parseBatch(payload, n, &s.strs)
}

func (s *MetadataScratch) decode(raw []byte, keepProps bool) error {
	s.m, s.mem.sc = pb.MessageMetadata{}, metaScalars{}
	s.mem.strs, s.mem.reuse = &s.strs, true
	if !decodeMetadata(raw, &s.m, &s.mem, keepProps) {
		if err := proto.Unmarshal(raw, &s.m); err != nil {
			return fmt.Errorf("wire: decode message metadata: %w", err)
		}
	}
	return nil
}

// verifiedMetadata returns the encoded metadata of a headersAndPayload whose checksum was
// already verified.
func verifiedMetadata(p []byte) ([]byte, error) {
	if len(p) < 10 || binary.BigEndian.Uint16(p) != magicCRC32C {
		return nil, ErrMissingMagic
	}
	metaSize := binary.BigEndian.Uint32(p[6:])
	if uint64(metaSize) > uint64(len(p)-10) {
		return nil, fmt.Errorf("%w: %d > %d", ErrBadMetadataSize, metaSize, len(p)-10)
	}
	return p[10 : 10+metaSize], nil
}
