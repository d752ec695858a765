package wire

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// randomMessageCommand is a MESSAGE with every field of CommandMessage and MessageIdData
// present or not, at random.
func randomMessageCommand(r *rand.Rand) *pb.BaseCommand {
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
	id := &pb.MessageIdData{
		LedgerId: proto.Uint64(r.Uint64() >> r.IntN(64)), EntryId: proto.Uint64(r.Uint64() >> r.IntN(64)),
		Partition: i32(), BatchIndex: i32(), AckSet: acks(), BatchSize: i32(),
	}
	m := &pb.CommandMessage{ConsumerId: proto.Uint64(r.Uint64() >> r.IntN(64)), MessageId: id, AckSet: acks()}
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
	if !decodeMessageCommand(b, got) {
		errGot = proto.Unmarshal(b, got)
	}
	if (errWant == nil) != (errGot == nil) || (errWant == nil && !proto.Equal(want, got)) {
		t.Fatalf("command %x:\nproto: %v %v\nours:  %v %v", b, want, errWant, got, errGot)
	}
}

// A MESSAGE is encoded byte for byte as proto encodes it, and decoded as proto decodes it;
// what the fast paths leave to proto comes out the same.
func TestMessageCommandMatchesProto(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		cmd := randomMessageCommand(r)
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
		if _, ok := appendMessageCommand(nil, cmd.Message); !ok {
			t.Fatalf("%v: not encoded by hand", cmd)
		}
		if !decodeMessageCommand(viaProto, &pb.BaseCommand{}) {
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
		"first chunk id":         chunked,
		"other field after":      protowire.AppendVarint(protowire.AppendTag(plain, 99, protowire.VarintType), 1),
		"two messages (merged)":  append(plain, plain[2:]...),
		"packed ack set":         msg(packed),
		"unknown field inside":   msg(protowire.AppendVarint(protowire.AppendTag(nil, 77, protowire.VarintType), 1)),
		"message id twice":       msg(protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 4))),
		"without consumer id":    protowire.AppendBytes(protowire.AppendTag(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 9), 9, protowire.BytesType), nil),
		"another type":           protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(pb.BaseCommand_PING)),
		"type after the message": append(plain[2:], plain[:2]...),
	} {
		t.Run(name, func(t *testing.T) { sameCommandDecoding(t, b) })
	}
}

func FuzzMessageCommand(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		b, _ := proto.Marshal(randomMessageCommand(r))
		f.Add(b)
	}
	f.Fuzz(sameCommandDecoding)
}
