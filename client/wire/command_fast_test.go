package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// randomMessageID is a MessageIdData with every field present or not, at random.
func randomMessageID(r *rand.Rand) *pb.MessageIdData {
	i32 := func() *int32 {
		if r.IntN(3) == 0 {
			return nil
		}
		return proto.Int32(int32(r.Uint32()) >> r.IntN(32))
	}
	acks := func() []int64 {
		var s []int64
		for range r.IntN(3) {
			s = append(s, int64(r.Uint64()>>r.IntN(64)))
		}
		return s
	}
	return &pb.MessageIdData{
		LedgerId: proto.Uint64(r.Uint64() >> r.IntN(64)), EntryId: proto.Uint64(r.Uint64() >> r.IntN(64)),
		Partition: i32(), BatchIndex: i32(), AckSet: acks(), BatchSize: i32(),
	}
}

func randomU64(r *rand.Rand) *uint64 {
	if r.IntN(3) == 0 {
		return nil
	}
	return proto.Uint64(r.Uint64() >> r.IntN(64))
}

// randomFastCommand is a MESSAGE, SEND or SEND_RECEIPT with every field present or not, at
// random.
func randomFastCommand(r *rand.Rand) *pb.BaseCommand {
	var id *pb.MessageIdData
	if r.IntN(4) > 0 {
		id = randomMessageID(r)
	}
	switch r.IntN(3) {
	case 0:
		s := &pb.CommandSend{
			ProducerId: proto.Uint64(r.Uint64() >> r.IntN(64)), SequenceId: proto.Uint64(r.Uint64() >> r.IntN(64)),
			TxnidLeastBits: randomU64(r), TxnidMostBits: randomU64(r), HighestSequenceId: randomU64(r), MessageId: id,
		}
		if r.IntN(2) == 0 {
			s.NumMessages = proto.Int32(int32(r.Uint32()) >> r.IntN(32))
		}
		if r.IntN(2) == 0 {
			s.IsChunk = proto.Bool(r.IntN(2) == 0)
		}
		if r.IntN(2) == 0 {
			s.Marker = proto.Bool(r.IntN(2) == 0)
		}
		return &pb.BaseCommand{Type: pb.BaseCommand_SEND.Enum(), Send: s}
	case 1:
		return &pb.BaseCommand{Type: pb.BaseCommand_SEND_RECEIPT.Enum(), SendReceipt: &pb.CommandSendReceipt{
			ProducerId: proto.Uint64(r.Uint64() >> r.IntN(64)), SequenceId: proto.Uint64(r.Uint64() >> r.IntN(64)),
			MessageId: id, HighestSequenceId: randomU64(r),
		}}
	}
	return randomMessageCommand(r)
}

// randomMessageCommand is a MESSAGE with every field of CommandMessage and MessageIdData
// present or not, at random.
func randomMessageCommand(r *rand.Rand) *pb.BaseCommand {
	acks := func() []int64 {
		var s []int64
		for range r.IntN(3) {
			s = append(s, int64(r.Uint64()>>r.IntN(64)))
		}
		return s
	}
	m := &pb.CommandMessage{ConsumerId: proto.Uint64(r.Uint64() >> r.IntN(64)), MessageId: randomMessageID(r), AckSet: acks()}
	if r.IntN(2) == 0 {
		m.RedeliveryCount = proto.Uint32(r.Uint32() >> r.IntN(32))
	}
	if r.IntN(2) == 0 {
		m.ConsumerEpoch = proto.Uint64(r.Uint64() >> r.IntN(64))
	}
	return &pb.BaseCommand{Type: pb.BaseCommand_MESSAGE.Enum(), Message: m}
}

// sameCommandDecoding fails t unless DecodeFrame's command and proto.Unmarshal agree on b.
func sameCommandDecoding(t *testing.T, b []byte) {
	t.Helper()
	want, got := &pb.BaseCommand{}, &pb.BaseCommand{}
	errWant := proto.Unmarshal(b, want)
	errGot := error(nil)
	if !decodeFastCommand(b, got, fastBlocks{ack: new(ackBlock)}) { // an ACK as a broker's Reader decodes it
		errGot = proto.Unmarshal(b, got)
	}
	if (errWant == nil) != (errGot == nil) || (errWant == nil && !proto.Equal(want, got)) {
		t.Fatalf("command %x:\nproto: %v %v\nours:  %v %v", b, want, errWant, got, errGot)
	}
}

// A MESSAGE, SEND or SEND_RECEIPT is encoded byte for byte as proto encodes it, and decoded
// as proto decodes it; what the fast paths leave to proto comes out the same.
func TestFastCommandsMatchProto(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		cmd := randomFastCommand(r)
		want, err := AppendCommandHeader(nil, proto.Clone(cmd).(*pb.BaseCommand), 10)
		if err != nil {
			t.Fatal(err)
		}
		viaProto, err := proto.Marshal(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want[8:], viaProto) {
			t.Fatalf("%v: encoded %x, proto %x", cmd, want[8:], viaProto)
		}
		if _, ok := appendFastCommand(nil, cmd); !ok {
			t.Fatalf("%v: not encoded by hand", cmd)
		}
		if !decodeFastCommand(viaProto, &pb.BaseCommand{}, fastBlocks{}) {
			t.Fatalf("%v: not decoded by hand", cmd)
		}
		sameCommandDecoding(t, viaProto)
		sameCommandDecoding(t, viaProto[:r.IntN(len(viaProto)+1)])
	}
	cmd := randomMessageCommand(r)
	cmd.Message.MessageId.FirstChunkMessageId = &pb.MessageIdData{LedgerId: proto.Uint64(1), EntryId: proto.Uint64(2)}
	chunked, _ := proto.Marshal(cmd)
	cmd.Message.MessageId.FirstChunkMessageId = nil
	plain, _ := proto.Marshal(cmd)
	packed := protowire.AppendTag(nil, 4, protowire.BytesType)
	packed = protowire.AppendBytes(packed, protowire.AppendVarint(protowire.AppendVarint(nil, 3), 1<<40))
	msg := func(extra []byte) []byte { // a MESSAGE whose CommandMessage has extra appended
		m, _ := proto.Marshal(cmd.Message)
		m = append(m, extra...)
		b := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(pb.BaseCommand_MESSAGE))
		return protowire.AppendBytes(protowire.AppendTag(b, 9, protowire.BytesType), m)
	}
	for name, b := range map[string][]byte{
		"first chunk id":           chunked,
		"other field after":        protowire.AppendVarint(protowire.AppendTag(plain, 99, protowire.VarintType), 1),
		"two messages (merged)":    append(plain, plain[2:]...),
		"packed ack set":           msg(packed),
		"unknown field inside":     msg(protowire.AppendVarint(protowire.AppendTag(nil, 77, protowire.VarintType), 1)),
		"message id twice":         msg(protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 4))),
		"without consumer id":      protowire.AppendBytes(protowire.AppendTag(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 9), 9, protowire.BytesType), nil),
		"send without sequence id": protowire.AppendBytes(protowire.AppendTag(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 6), 6, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 3)),
		"receipt with id twice": func() []byte {
			id, _ := proto.Marshal(randomMessageID(r))
			rc := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 3)
			rc = protowire.AppendVarint(protowire.AppendTag(rc, 2, protowire.VarintType), 4)
			for range 2 {
				rc = protowire.AppendBytes(protowire.AppendTag(rc, 3, protowire.BytesType), id)
			}
			b := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7)
			return protowire.AppendBytes(protowire.AppendTag(b, 7, protowire.BytesType), rc)
		}(),
		"type and field differ":  protowire.AppendBytes(protowire.AppendTag(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 6), 7, protowire.BytesType), nil),
		"another type":           protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(pb.BaseCommand_PING)),
		"type after the message": append(plain[2:], plain[:2]...),
	} {
		t.Run(name, func(t *testing.T) { sameCommandDecoding(t, b) })
	}
}

func FuzzFastCommands(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		b, _ := proto.Marshal(randomFastCommand(r))
		f.Add(b)
		b, _ = proto.Marshal(randomAck(r))
		f.Add(b)
	}
	f.Fuzz(sameCommandDecoding)
}

// randomAck is an ACK with every field of CommandAck but properties present or not, at random,
// carrying up to 40 message ids.
func randomAck(r *rand.Rand) *pb.BaseCommand {
	a := &pb.CommandAck{
		ConsumerId: proto.Uint64(r.Uint64() >> r.IntN(64)), AckType: pb.CommandAck_AckType(r.IntN(2)).Enum(),
		TxnidLeastBits: randomU64(r), TxnidMostBits: randomU64(r), RequestId: randomU64(r),
	}
	for range r.IntN(41) {
		a.MessageId = append(a.MessageId, randomMessageID(r))
	}
	if r.IntN(3) == 0 {
		a.ValidationError = pb.CommandAck_ValidationError(r.IntN(5)).Enum()
	}
	return &pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum(), Ack: a}
}

// A Reader that reuses ACK commands decodes each as proto does, nothing of the one before
// left over; what it leaves to proto (properties, an unnamed enum value, a truncated id) comes
// out the same.
func TestReusedAckMatchesProto(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	var bl ackBlock
	decode := func(b []byte) (*pb.BaseCommand, error) {
		got := &pb.BaseCommand{}
		if decodeFastCommand(b, got, fastBlocks{ack: &bl}) {
			return got, nil
		}
		return got, proto.Unmarshal(b, got)
	}
	fast := 0
	for i := range 3000 {
		cmd := randomAck(r)
		switch i % 10 {
		case 7:
			cmd.Ack.Properties = []*pb.KeyLongValue{{Key: proto.String("k"), Value: proto.Uint64(1)}}
		case 8:
			if len(cmd.Ack.MessageId) > 0 {
				cmd.Ack.MessageId[0].FirstChunkMessageId = &pb.MessageIdData{LedgerId: proto.Uint64(1), EntryId: proto.Uint64(2)}
			}
		}
		b, err := proto.Marshal(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			b = protowire.AppendTag(nil, 1, protowire.VarintType) // a BaseCommand of type ACK...
			b = protowire.AppendVarint(b, uint64(pb.BaseCommand_ACK))
			inner := protowire.AppendTag(nil, 1, protowire.VarintType)
			inner = protowire.AppendVarint(inner, 3)
			inner = protowire.AppendTag(inner, 2, protowire.VarintType)
			inner = protowire.AppendVarint(inner, 9) // ...whose ack type no name has
			b = protowire.AppendTag(b, 21, protowire.BytesType)
			b = protowire.AppendBytes(b, inner)
		}
		for _, in := range [][]byte{b, b[:r.IntN(len(b)+1)]} {
			want := &pb.BaseCommand{}
			errWant := proto.Unmarshal(in, want)
			got, errGot := decode(in)
			if (errWant == nil) != (errGot == nil) || (errWant == nil && !proto.Equal(want, got)) {
				t.Fatalf("ACK %x:\nproto: %v %v\nours:  %v %v", in, want, errWant, got, errGot)
			}
		}
		if decodeFastCommand(b, new(pb.BaseCommand), fastBlocks{ack: &bl}) {
			fast++
		}
	}
	if fast < 2000 {
		t.Errorf("%d of 3000 ACKs decoded by hand, want most", fast)
	}
}
