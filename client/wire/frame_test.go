package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// The commands below are shaped like what the official Go client and an upstream broker send.

func connectCmd() *pb.BaseCommand {
	return &pb.BaseCommand{
		Type: pb.BaseCommand_CONNECT.Enum(),
		Connect: &pb.CommandConnect{
			ClientVersion:   proto.String("Pulsar-Go-v0.19.0"),
			ProtocolVersion: proto.Int32(20),
			AuthMethodName:  proto.String(""),
			FeatureFlags: &pb.FeatureFlags{
				SupportsAuthRefresh:         proto.Bool(true),
				SupportsBrokerEntryMetadata: proto.Bool(true),
			},
		},
	}
}

func pingCmd() *pb.BaseCommand {
	return &pb.BaseCommand{Type: pb.BaseCommand_PING.Enum(), Ping: &pb.CommandPing{}}
}

func sendCmd() *pb.BaseCommand {
	return &pb.BaseCommand{
		Type: pb.BaseCommand_SEND.Enum(),
		Send: &pb.CommandSend{
			ProducerId:        proto.Uint64(1),
			SequenceId:        proto.Uint64(10),
			NumMessages:       proto.Int32(3),
			HighestSequenceId: proto.Uint64(12),
		},
	}
}

func messageCmd() *pb.BaseCommand {
	return &pb.BaseCommand{
		Type: pb.BaseCommand_MESSAGE.Enum(),
		Message: &pb.CommandMessage{
			ConsumerId:      proto.Uint64(4),
			MessageId:       &pb.MessageIdData{LedgerId: proto.Uint64(17), EntryId: proto.Uint64(0)},
			RedeliveryCount: proto.Uint32(0),
		},
	}
}

// batchPayload is headersAndPayload for the three-message batch of testBatch.
func batchPayload(t testing.TB) []byte {
	t.Helper()
	body, msgs := testBatch(t)
	meta := &pb.MessageMetadata{
		ProducerName:       proto.String("standalone-0-1"),
		SequenceId:         proto.Uint64(10),
		PublishTime:        proto.Uint64(1_700_000_000_000),
		NumMessagesInBatch: proto.Int32(int32(len(msgs))),
		UncompressedSize:   proto.Uint32(uint32(len(body))),
		HighestSequenceId:  proto.Uint64(12),
	}
	p, err := AppendPayload(nil, meta, body)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// singlePayload is headersAndPayload for one non-batched message.
func singlePayload(t testing.TB) []byte {
	t.Helper()
	meta := &pb.MessageMetadata{
		ProducerName: proto.String("standalone-0-2"),
		SequenceId:   proto.Uint64(0),
		PublishTime:  proto.Uint64(1_700_000_000_123),
		PartitionKey: proto.String("user-42"),
	}
	p, err := AppendPayload(nil, meta, []byte("hello, letterbox"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// brokerEntry is [0x0e02][size u32][BrokerEntryMetadata], which a broker puts before the
// payload of a MESSAGE. The codec only decodes it, so the tests build it by hand.
func brokerEntry(t testing.TB, m *pb.BrokerEntryMetadata) []byte {
	t.Helper()
	raw, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	b := binary.BigEndian.AppendUint16(nil, magicBrokerEntry)
	b = binary.BigEndian.AppendUint32(b, uint32(len(raw)))
	return append(b, raw...)
}

func testBrokerEntry() *pb.BrokerEntryMetadata {
	return &pb.BrokerEntryMetadata{BrokerTimestamp: proto.Uint64(1_700_000_000_456), Index: proto.Uint64(99)}
}

func mustFrame(t testing.TB, cmd *pb.BaseCommand, headersAndPayload []byte) []byte {
	t.Helper()
	f, err := AppendCommand(nil, cmd, headersAndPayload)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type namedFrame struct {
	name  string
	cmd   *pb.BaseCommand
	entry []byte // broker entry metadata section, if any
	hp    []byte // headersAndPayload, from the 0x0e01 magic
	frame []byte
}

// validFrames returns one frame of each shape the codec knows.
func validFrames(t testing.TB) []namedFrame {
	t.Helper()
	entry := brokerEntry(t, testBrokerEntry())
	single := singlePayload(t)
	batch := batchPayload(t)
	return []namedFrame{
		{name: "connect", cmd: connectCmd(), frame: mustFrame(t, connectCmd(), nil)},
		{name: "ping", cmd: pingCmd(), frame: mustFrame(t, pingCmd(), nil)},
		{name: "send batch", cmd: sendCmd(), hp: batch, frame: mustFrame(t, sendCmd(), batch)},
		{name: "message", cmd: messageCmd(), hp: single, frame: mustFrame(t, messageCmd(), single)},
		{
			name: "message with broker entry", cmd: messageCmd(), entry: entry, hp: single,
			frame: mustFrame(t, messageCmd(), append(bytes.Clone(entry), single...)),
		},
	}
}

// checkFrame compares a decoded frame with what was encoded.
func checkFrame(t *testing.T, name string, got Frame, want namedFrame) {
	t.Helper()
	if !proto.Equal(got.Cmd, want.cmd) {
		t.Errorf("%s: command %v, want %v", name, got.Cmd, want.cmd)
	}
	if !bytes.Equal(got.Payload, want.hp) || (got.Payload == nil) != (want.hp == nil) {
		t.Errorf("%s: payload %x, want %x", name, got.Payload, want.hp)
	}
	var wantEntry []byte
	if want.entry != nil {
		wantEntry = want.entry[6:]
	}
	if !bytes.Equal(got.BrokerEntry, wantEntry) || (got.BrokerEntry == nil) != (wantEntry == nil) {
		t.Errorf("%s: broker entry %x, want %x", name, got.BrokerEntry, wantEntry)
	}
}

func TestFrameLayout(t *testing.T) {
	t.Parallel()
	for _, f := range validFrames(t) {
		total := binary.BigEndian.Uint32(f.frame)
		cmdSize := binary.BigEndian.Uint32(f.frame[4:])
		if int(total) != len(f.frame)-4 {
			t.Errorf("%s: totalSize %d, frame has %d bytes after it", f.name, total, len(f.frame)-4)
		}
		if want := proto.Size(f.cmd); int(cmdSize) != want {
			t.Errorf("%s: cmdSize %d, want %d", f.name, cmdSize, want)
		}
		rest := f.frame[8+cmdSize:]
		if want := len(f.entry) + len(f.hp); len(rest) != want {
			t.Errorf("%s: %d bytes after the command, want %d", f.name, len(rest), want)
		}
	}
}

func TestDecodeFrameRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range validFrames(t) {
		got, err := DecodeFrame(f.frame)
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		checkFrame(t, f.name, got, f)
		n, ok, err := FrameLength(f.frame, DefaultMaxMessageSize)
		if n != len(f.frame) || !ok || err != nil {
			t.Errorf("%s: FrameLength = %d, %v, %v; want %d, true, nil", f.name, n, ok, err, len(f.frame))
		}
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	got, err := DecodeFrame(mustFrame(t, sendCmd(), batchPayload(t)))
	if err != nil {
		t.Fatal(err)
	}
	meta, body, err := ParsePayload(got.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if meta.NumMessagesInBatch == nil || meta.GetNumMessagesInBatch() != 3 {
		t.Fatalf("num_messages_in_batch = %v, want 3", meta.NumMessagesInBatch)
	}
	if int(meta.GetUncompressedSize()) != len(body) {
		t.Errorf("uncompressed_size %d, body %d bytes", meta.GetUncompressedSize(), len(body))
	}
	msgs, err := ParseBatch(body, int(meta.GetNumMessagesInBatch()))
	if err != nil {
		t.Fatal(err)
	}
	if string(msgs[0].Payload) != "first" || msgs[0].Meta.GetPartitionKey() != "k1" {
		t.Errorf("first batch message = %v %q", msgs[0].Meta, msgs[0].Payload)
	}

	// A single (non-batch) message: num_messages_in_batch must stay absent.
	meta, body, err = ParsePayload(singlePayload(t))
	if err != nil {
		t.Fatal(err)
	}
	if meta.NumMessagesInBatch != nil || string(body) != "hello, letterbox" {
		t.Errorf("single message: num_messages_in_batch %v, payload %q", meta.NumMessagesInBatch, body)
	}
}

func TestChecksumIsCRC32C(t *testing.T) {
	t.Parallel()
	// 0xe3069283 is the published CRC-32C check value of "123456789". Accepting it as the
	// checksum proves the polynomial and the coverage (from metaSize to the end); the metadata
	// size it then reads ("1234") is absurd, which is the next check.
	p := []byte{0x0e, 0x01, 0xe3, 0x06, 0x92, 0x83}
	p = append(p, "123456789"...)
	if err := VerifyPayload(p); !errors.Is(err, ErrBadMetadataSize) {
		t.Errorf("VerifyPayload = %v, want ErrBadMetadataSize (so the checksum passed)", err)
	}
	p[5] ^= 1
	if err := VerifyPayload(p); !errors.Is(err, ErrChecksumMismatch) {
		t.Errorf("VerifyPayload with a flipped checksum bit = %v, want ErrChecksumMismatch", err)
	}
}

func TestDecodeFrameBrokerEntry(t *testing.T) {
	t.Parallel()
	single := singlePayload(t)
	for _, m := range []*pb.BrokerEntryMetadata{testBrokerEntry(), {}} {
		entry := brokerEntry(t, m)
		got, err := DecodeFrame(mustFrame(t, messageCmd(), append(bytes.Clone(entry), single...)))
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if got.BrokerEntry == nil {
			t.Fatalf("%v: BrokerEntry is nil", m)
		}
		back := &pb.BrokerEntryMetadata{}
		if err := proto.Unmarshal(got.BrokerEntry, back); err != nil || !proto.Equal(back, m) {
			t.Errorf("broker entry decodes to %v (%v), want %v", back, err, m)
		}
		if !bytes.Equal(got.Payload, single) {
			t.Errorf("%v: payload %x, want %x", m, got.Payload, single)
		}
		if _, _, err := ParsePayload(got.Payload); err != nil {
			t.Errorf("%v: ParsePayload: %v", m, err)
		}
	}
}

// withCRC rewrites the checksum of headersAndPayload p so that only later checks can fail.
func withCRC(p []byte) []byte {
	binary.BigEndian.PutUint32(p[2:], crc32.Checksum(p[6:], crc32.MakeTable(crc32.Castagnoli)))
	return p
}

func TestDecodeFrameErrors(t *testing.T) {
	t.Parallel()
	single := singlePayload(t)
	entry := brokerEntry(t, testBrokerEntry())

	badCRC := bytes.Clone(single)
	badCRC[len(badCRC)-1] ^= 0xff // payload byte, covered by the checksum

	noMagic := bytes.Clone(single)
	noMagic[1] = 0x03

	bigMeta := bytes.Clone(single)
	binary.BigEndian.PutUint32(bigMeta[6:], uint32(len(bigMeta)-10+1))
	bigMeta = withCRC(bigMeta)

	hugeMeta := bytes.Clone(single)
	binary.BigEndian.PutUint32(hugeMeta[6:], 0xffffffff)
	hugeMeta = withCRC(hugeMeta)

	bigEntry := bytes.Clone(entry)
	binary.BigEndian.PutUint32(bigEntry[2:], uint32(len(entry)-6+len(single)+1))
	bigEntry = append(bigEntry, single...)

	entryOnly := bytes.Clone(entry)

	tests := []struct {
		name    string
		cmd     *pb.BaseCommand
		hp      []byte
		want    error
		keepCmd bool
	}{
		{"bad checksum", messageCmd(), badCRC, ErrChecksumMismatch, true},
		{"missing magic", sendCmd(), noMagic, ErrMissingMagic, true},
		{"payload too short for its header", sendCmd(), single[:9], ErrMissingMagic, true},
		{"metadata size beyond payload", sendCmd(), bigMeta, ErrBadMetadataSize, true},
		{"metadata size 0xffffffff", sendCmd(), hugeMeta, ErrBadMetadataSize, true},
		{"broker entry beyond frame", messageCmd(), bigEntry, ErrBadMetadataSize, true},
		{"broker entry without payload", messageCmd(), entryOnly, ErrMissingMagic, true},
		{"broker entry after the magic", messageCmd(), append(bytes.Clone(single), entry...), ErrChecksumMismatch, true},
	}
	for _, tt := range tests {
		got, err := DecodeFrame(mustFrame(t, tt.cmd, tt.hp))
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
			continue
		}
		if tt.keepCmd && !proto.Equal(got.Cmd, tt.cmd) {
			t.Errorf("%s: command %v returned with the error, want %v", tt.name, got.Cmd, tt.cmd)
		}
	}
}

func TestDecodeFrameBadSizes(t *testing.T) {
	t.Parallel()
	ping := mustFrame(t, pingCmd(), nil)

	cmdTooBig := bytes.Clone(ping)
	binary.BigEndian.PutUint32(cmdTooBig[4:], uint32(len(ping)-8+1))

	cmdHuge := bytes.Clone(ping)
	binary.BigEndian.PutUint32(cmdHuge[4:], 0xffffffff)

	totalShort := bytes.Clone(ping)
	binary.BigEndian.PutUint32(totalShort, uint32(len(ping)-5))

	tests := []struct {
		name  string
		frame []byte
		want  error
	}{
		{"cmdSize one past the frame", cmdTooBig, ErrBadCommandSize},
		{"cmdSize 0xffffffff", cmdHuge, ErrBadCommandSize},
		{"totalSize disagrees with the buffer", totalShort, ErrFrameTooSmall},
		{"trailing byte", append(bytes.Clone(ping), 0), ErrFrameTooSmall},
		{"no command size", []byte{0, 0, 0, 3, 0, 0, 0}, ErrFrameTooSmall},
		{"empty", nil, ErrFrameTooSmall},
	}
	for _, tt := range tests {
		got, err := DecodeFrame(tt.frame)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		}
		if got.Cmd != nil {
			t.Errorf("%s: command %v returned for a frame with bad sizes", tt.name, got.Cmd)
		}
	}

	// A command that is not a BaseCommand (here: type missing, which is required).
	garbage := binary.BigEndian.AppendUint32(nil, 6)
	garbage = binary.BigEndian.AppendUint32(garbage, 2)
	garbage = append(garbage, 0x12, 0x00) // field 2 (connect), empty
	if got, err := DecodeFrame(garbage); err == nil || got.Cmd != nil {
		t.Errorf("command without type: %v, %v; want an error and no command", got.Cmd, err)
	}
}

func TestFrameLength(t *testing.T) {
	t.Parallel()
	const limit = 1000
	header := func(total uint32) []byte { return binary.BigEndian.AppendUint32(nil, total) }
	tests := []struct {
		name string
		buf  []byte
		n    int
		ok   bool
		want error
	}{
		{"empty", nil, 0, false, nil},
		{"3 bytes", []byte{0, 0, 0}, 0, false, nil},
		{"smallest", header(4), 8, true, nil},
		{"at the limit", header(limit), limit + 4, true, nil},
		{"one past the limit", header(limit + 1), 0, false, ErrFrameTooLarge},
		{"0xffffffff", header(0xffffffff), 0, false, ErrFrameTooLarge},
		{"no room for cmdSize", header(3), 0, false, ErrFrameTooSmall},
		{"zero", header(0), 0, false, ErrFrameTooSmall},
	}
	for _, tt := range tests {
		n, ok, err := FrameLength(tt.buf, limit)
		if n != tt.n || ok != tt.ok || !errors.Is(err, tt.want) {
			t.Errorf("%s: FrameLength = %d, %v, %v; want %d, %v, %v", tt.name, n, ok, err, tt.n, tt.ok, tt.want)
		}
	}
	// The default limit is upstream's: 5 MiB of message plus 10 KiB.
	if got := MaxFrameSize(DefaultMaxMessageSize); got != 5_253_120 {
		t.Errorf("MaxFrameSize(DefaultMaxMessageSize) = %d, want 5253120", got)
	}
}

// TestTruncatedFrames cuts every valid frame at every length. A plain prefix must be reported as
// incomplete by FrameLength and rejected by DecodeFrame. A prefix whose totalSize is rewritten to
// match must decode to an error too, except when the cut falls right after the command: that is
// a valid command without payload.
func TestTruncatedFrames(t *testing.T) {
	t.Parallel()
	for _, f := range validFrames(t) {
		cmdEnd := 8 + int(binary.BigEndian.Uint32(f.frame[4:]))
		for i := range len(f.frame) {
			prefix := f.frame[:i]
			n, ok, err := FrameLength(prefix, DefaultMaxMessageSize)
			if err != nil || (ok && n <= i) {
				t.Fatalf("%s[:%d]: FrameLength = %d, %v, %v; want more bytes needed", f.name, i, n, ok, err)
			}
			if _, err := DecodeFrame(prefix); err == nil {
				t.Fatalf("%s[:%d]: DecodeFrame accepted a truncated frame", f.name, i)
			}
			if i < 8 {
				continue
			}
			cut := bytes.Clone(prefix)
			binary.BigEndian.PutUint32(cut, uint32(i-4))
			got, err := DecodeFrame(cut)
			switch {
			case i == cmdEnd:
				if err != nil || got.Payload != nil {
					t.Fatalf("%s cut after the command: %v, payload %x; want a plain command", f.name, err, got.Payload)
				}
			case err == nil:
				t.Fatalf("%s cut at %d of %d: decoded without error", f.name, i, len(f.frame))
			case i > cmdEnd && !proto.Equal(got.Cmd, f.cmd):
				// Cut inside the payload: the command is intact and must come back with the error.
				t.Fatalf("%s cut at %d: command %v with %v, want %v", f.name, i, got.Cmd, err, f.cmd)
			}
		}
	}
}

func TestAppendCommandErrors(t *testing.T) {
	t.Parallel()
	dst := []byte("prefix")
	// CommandSend lacks its required sequence_id.
	bad := &pb.BaseCommand{Type: pb.BaseCommand_SEND.Enum(), Send: &pb.CommandSend{ProducerId: proto.Uint64(1)}}
	got, err := AppendCommand(dst, bad, singlePayload(t))
	if err == nil {
		t.Fatal("AppendCommand encoded a command missing a required field")
	}
	if string(got) != "prefix" {
		t.Errorf("dst after a failed append = %q, want %q", got, "prefix")
	}

	// Frames appended back to back stay separable.
	two := mustFrame(t, pingCmd(), nil)
	two, err = AppendCommand(two, sendCmd(), singlePayload(t))
	if err != nil {
		t.Fatal(err)
	}
	n, _, _ := FrameLength(two, DefaultMaxMessageSize)
	if _, err := DecodeFrame(two[:n]); err != nil {
		t.Errorf("first frame: %v", err)
	}
	if f, err := DecodeFrame(two[n:]); err != nil || f.Cmd.GetType() != pb.BaseCommand_SEND {
		t.Errorf("second frame: %v, %v", f.Cmd, err)
	}
}

// AppendSend writes, in one buffer, the bytes AppendCommand writes around AppendPayload.
func TestAppendSendMatchesTwoSteps(t *testing.T) {
	t.Parallel()
	metas := []*pb.MessageMetadata{
		{ProducerName: proto.String("p"), SequenceId: proto.Uint64(7), PublishTime: proto.Uint64(1700000000000)},
		{ProducerName: proto.String("standalone-0-12"), SequenceId: proto.Uint64(1 << 40), PublishTime: proto.Uint64(1),
			PartitionKey: proto.String("key"), NumMessagesInBatch: proto.Int32(3), UncompressedSize: proto.Uint32(300),
			Properties: []*pb.KeyValue{{Key: proto.String("a"), Value: proto.String("1")}, {Key: proto.String("REAL_TOPIC"), Value: proto.String("persistent://t/n/x")}}},
	}
	for i, meta := range metas {
		for _, payload := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("payload "), 200)} {
			cmd := &pb.BaseCommand{Type: pb.BaseCommand_SEND.Enum(), Send: &pb.CommandSend{ProducerId: proto.Uint64(3), SequenceId: meta.SequenceId}}
			hp, err := AppendPayload(nil, meta, payload)
			if err != nil {
				t.Fatal(err)
			}
			want, err := AppendCommand(nil, cmd, hp)
			if err != nil {
				t.Fatal(err)
			}
			n := PayloadSize(meta, payload)
			if n != len(hp) {
				t.Fatalf("meta %d: PayloadSize %d, AppendPayload wrote %d", i, n, len(hp))
			}
			prefix := []byte("kept")
			got, err := AppendSend(bytes.Clone(prefix), cmd, meta, payload, n)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, append(prefix, want...)) {
				t.Fatalf("meta %d, %d-byte payload: AppendSend wrote\n%x\nwant\n%x", i, len(payload), got, append(prefix, want...))
			}
			if _, err := AppendSend(nil, cmd, meta, payload, n+1); err == nil {
				t.Fatalf("meta %d: a wrong announced size was not refused", i)
			}
		}
	}
}
