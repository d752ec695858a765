package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

func TestReaderSequence(t *testing.T) {
	t.Parallel()
	frames := validFrames(t)
	var stream []byte
	for _, f := range frames {
		stream = append(stream, f.frame...)
	}
	readers := map[string]func() io.Reader{
		"whole":         func() io.Reader { return bytes.NewReader(stream) },
		"one byte":      func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"half":          func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
		"data with EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(stream)) },
	}
	for name, open := range readers {
		r := NewReader(open(), DefaultMaxMessageSize)
		for _, f := range frames {
			got, err := r.Next()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.name, err)
			}
			checkFrame(t, name+": "+f.name, got, f)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("%s: after the last frame: %v, want io.EOF", name, err)
		}
	}
}

// A corrupt payload leaves the stream aligned: the reader reports the error with the command
// and the next frame reads normally.
func TestReaderContinuesAfterPayloadError(t *testing.T) {
	t.Parallel()
	bad := bytes.Clone(singlePayload(t))
	bad[len(bad)-1] ^= 1
	stream := mustFrame(t, sendCmd(), bad)
	stream = append(stream, mustFrame(t, pingCmd(), nil)...)

	r := NewReader(bytes.NewReader(stream), DefaultMaxMessageSize)
	got, err := r.Next()
	if !errors.Is(err, ErrChecksumMismatch) || !proto.Equal(got.Cmd, sendCmd()) {
		t.Fatalf("corrupt SEND: %v, %v; want the command and ErrChecksumMismatch", got.Cmd, err)
	}
	if got, err := r.Next(); err != nil || got.Cmd.GetType() != pb.BaseCommand_PING {
		t.Fatalf("frame after the corrupt one: %v, %v", got.Cmd, err)
	}
}

func TestReaderTruncated(t *testing.T) {
	t.Parallel()
	for _, f := range validFrames(t) {
		for i := range len(f.frame) {
			r := NewReader(bytes.NewReader(f.frame[:i]), DefaultMaxMessageSize)
			_, err := r.Next()
			want := io.ErrUnexpectedEOF
			if i == 0 {
				want = io.EOF // a clean end between frames
			}
			if !errors.Is(err, want) {
				t.Fatalf("%s[:%d]: %v, want %v", f.name, i, err, want)
			}
		}
	}
}

// failReader fails the test if the reader under test reads past the size prefix.
type failReader struct{ t *testing.T }

func (r failReader) Read([]byte) (int, error) {
	r.t.Error("Reader.Next read the body of a frame it should have refused")
	return 0, io.ErrUnexpectedEOF
}

// The size limit must be applied before the body is read or its buffer allocated: a peer that
// declares a huge frame must not make us wait for it or allocate for it.
func TestReaderRejectsOversizeBeforeBody(t *testing.T) {
	// Not parallel: it measures allocations.
	const limit = 1 << 30
	for _, declared := range []uint32{limit + 1, 0xffffffff} {
		header := binary.BigEndian.AppendUint32(nil, declared)
		r := NewReader(io.MultiReader(bytes.NewReader(header), failReader{t}), limit)

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := r.Next()
		runtime.ReadMemStats(&after)

		if !errors.Is(err, ErrFrameTooLarge) {
			t.Errorf("declared %d: %v, want ErrFrameTooLarge", declared, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("declared %d: Next allocated %d bytes before refusing the frame", declared, grew)
		}
	}

	// Also with the production limit, and for impossible small sizes.
	for _, declared := range []uint32{uint32(MaxFrameSize(DefaultMaxMessageSize)) + 1, 3, 0} {
		header := binary.BigEndian.AppendUint32(nil, declared)
		r := NewReader(io.MultiReader(bytes.NewReader(header), failReader{t}), MaxFrameSize(DefaultMaxMessageSize))
		if _, err := r.Next(); !errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrFrameTooSmall) {
			t.Errorf("declared %d: %v, want ErrFrameTooLarge or ErrFrameTooSmall", declared, err)
		}
	}
}

// A frame over 1 MiB is read into a buffer the reader then lets go of, so the frame stays valid
// after the next call to Next.
func TestReaderLargeFrame(t *testing.T) {
	t.Parallel()
	meta := &pb.MessageMetadata{
		ProducerName: proto.String("big"),
		SequenceId:   proto.Uint64(1),
		PublishTime:  proto.Uint64(1),
	}
	body := bytes.Repeat([]byte("0123456789abcdef"), (2<<20)/16)
	hp, err := AppendPayload(nil, meta, body)
	if err != nil {
		t.Fatal(err)
	}
	stream := mustFrame(t, sendCmd(), hp)
	stream = append(stream, mustFrame(t, sendCmd(), singlePayload(t))...)
	stream = append(stream, mustFrame(t, pingCmd(), nil)...)

	r := NewReader(bytes.NewReader(stream), MaxFrameSize(DefaultMaxMessageSize))
	big, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if _, got, err := ParsePayload(big.Payload); err != nil || !bytes.Equal(got, body) {
		t.Errorf("large frame after two more reads: %v, payload intact %v", err, bytes.Equal(got, body))
	}

	// The same frame is refused by a reader with a smaller limit.
	r = NewReader(bytes.NewReader(stream), 1<<20)
	if _, err := r.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("1 MiB limit: %v, want ErrFrameTooLarge", err)
	}
}

// With ReuseSendCommands every SEND is decoded into the same memory, its CommandSend and
// message id included, each as proto decodes it; other commands are new ones.
func TestReaderReusesSendCommands(t *testing.T) {
	t.Parallel()
	payload := singlePayload(t)
	first := sendCmd()
	first.Send.MessageId = &pb.MessageIdData{LedgerId: proto.Uint64(3), EntryId: proto.Uint64(4)}
	first.Send.HighestSequenceId = proto.Uint64(12)
	second := sendCmd()
	second.Send.SequenceId = proto.Uint64(11)
	stream := mustFrame(t, first, payload)
	stream = append(stream, mustFrame(t, pingCmd(), nil)...)
	stream = append(stream, mustFrame(t, second, payload)...)
	r := NewReader(bytes.NewReader(stream), DefaultMaxMessageSize)
	r.ReuseSendCommands()
	var frames []Frame
	for i := range 3 {
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && !proto.Equal(f.Cmd, first) {
			t.Errorf("the first SEND: %v, want %v", f.Cmd, first)
		}
		frames = append(frames, f)
	}
	switch {
	case frames[0].Cmd != frames[2].Cmd || frames[0].Cmd.GetSend() != frames[2].Cmd.GetSend():
		t.Error("two SENDs decoded into two BaseCommands or CommandSends")
	case frames[1].Cmd == frames[0].Cmd || frames[1].Cmd.GetType() != pb.BaseCommand_PING:
		t.Errorf("the PING between them: %v", frames[1].Cmd)
	case !proto.Equal(frames[2].Cmd, second):
		// Nothing of the first SEND (its message id, its highest sequence id) is left over.
		t.Errorf("the second SEND: %v, want %v", frames[2].Cmd, second)
	}
}

// A Scratch decodes every MESSAGE and SEND_RECEIPT into the same storage, each as proto decodes
// it, with an ack set of its own; other commands, SEND included, are new ones.
func TestScratchReusesEntryCommands(t *testing.T) {
	t.Parallel()
	acked := messageCmd()
	acked.Message.AckSet = []int64{5, 6}
	acked.Message.MessageId.BatchIndex = proto.Int32(2)
	receipt := &pb.BaseCommand{Type: pb.BaseCommand_SEND_RECEIPT.Enum(), SendReceipt: &pb.CommandSendReceipt{
		ProducerId: proto.Uint64(1), SequenceId: proto.Uint64(10),
		MessageId: &pb.MessageIdData{LedgerId: proto.Uint64(3), EntryId: proto.Uint64(4)},
	}}
	frames := []struct {
		cmd     *pb.BaseCommand
		payload []byte
		reused  bool
	}{
		{acked, singlePayload(t), true},
		{pingCmd(), nil, false},
		{messageCmd(), singlePayload(t), true},
		{receipt, nil, true},
		{sendCmd(), singlePayload(t), false},
	}
	var s Scratch
	var first *pb.BaseCommand
	var ackSet []int64
	for i, f := range frames {
		got, err := s.DecodeFrame(mustFrame(t, f.cmd, f.payload))
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !proto.Equal(got.Cmd, f.cmd) {
			t.Errorf("frame %d: %v, want %v", i, got.Cmd, f.cmd)
		}
		if i == 0 {
			first, ackSet = got.Cmd, got.Cmd.GetMessage().GetAckSet()
		}
		if reused := got.Cmd == first; reused != f.reused {
			t.Errorf("frame %d (%v): decoded into the scratch %v, want %v", i, f.cmd.GetType(), reused, f.reused)
		}
	}
	if len(ackSet) != 2 || ackSet[0] != 5 || ackSet[1] != 6 {
		t.Errorf("the first MESSAGE's ack set after the frames that followed: %v", ackSet)
	}
}

// TestScratchDecodesEntryCommandsWithoutAllocating holds a reader's scratch to its promise: a
// MESSAGE without an ack set, or a SEND_RECEIPT, decoded into it allocates nothing.
func TestScratchDecodesEntryCommandsWithoutAllocating(t *testing.T) {
	receipt := &pb.BaseCommand{Type: pb.BaseCommand_SEND_RECEIPT.Enum(), SendReceipt: &pb.CommandSendReceipt{
		ProducerId: proto.Uint64(1), SequenceId: proto.Uint64(10),
		MessageId: &pb.MessageIdData{LedgerId: proto.Uint64(3), EntryId: proto.Uint64(4)},
	}}
	for _, f := range [][]byte{mustFrame(t, messageCmd(), singlePayload(t)), mustFrame(t, receipt, nil)} {
		var s Scratch
		if allocs := testing.AllocsPerRun(100, func() {
			if _, err := s.DecodeFrame(f); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%v allocations a frame, want none", allocs)
		}
	}
}
