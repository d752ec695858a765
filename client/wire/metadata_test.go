package wire

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// sameDecoding fails t unless the fast decoders and proto.Unmarshal agree on b: both refuse
// it, or both give equal messages.
func sameDecoding(t *testing.T, b []byte) {
	t.Helper()
	want, got := &pb.MessageMetadata{}, &pb.MessageMetadata{}
	errWant, errGot := proto.Unmarshal(b, want), unmarshalMetadata(b, got)
	if (errWant == nil) != (errGot == nil) || (errWant == nil && !proto.Equal(want, got)) {
		t.Fatalf("MessageMetadata %x:\nproto: %v %v\nours:  %v %v", b, want, errWant, got, errGot)
	}
	// Without properties: the same refusal, or the same message less its properties.
	bare := &pb.MessageMetadata{}
	errBare := error(nil)
	if !decodeMetadata(b, bare, &metaMemory{}, false) {
		errBare = proto.Unmarshal(b, bare)
		bare.Properties, bare.ReplicateTo = nil, nil
	}
	if errWant == nil {
		want.Properties, want.ReplicateTo = nil, nil
	}
	if (errWant == nil) != (errBare == nil) || (errWant == nil && !proto.Equal(want, bare)) {
		t.Fatalf("MessageMetadata without properties %x:\nproto: %v %v\nours:  %v %v", b, want, errWant, bare, errBare)
	}
	// A scratch that decoded a metadata with every field first decodes b as a new message.
	var s MetadataScratch
	full, _ := proto.Marshal(randomMetadata(rand.New(rand.NewPCG(5, 6))))
	if _, err := s.DecodeWithoutProperties(withMetadataHeaders(full)); err != nil {
		t.Fatal(err)
	}
	scratch, errScratch := s.DecodeWithoutProperties(withMetadataHeaders(b))
	if errScratch == nil { // proto's path, when the fast one refuses, keeps them
		scratch = proto.Clone(scratch).(*pb.MessageMetadata)
		scratch.Properties, scratch.ReplicateTo = nil, nil
	}
	if (errWant == nil) != (errScratch == nil) || (errWant == nil && !proto.Equal(want, scratch)) {
		t.Fatalf("MessageMetadata into a used scratch %x:\nproto: %v %v\nours:  %v %v", b, want, errWant, scratch, errScratch)
	}
	// With properties, into the used scratch, twice: the second time its strings are the
	// ones it shares.
	whole := &pb.MessageMetadata{}
	errWant = proto.Unmarshal(b, whole)
	for range 2 {
		got, _, errGot := s.ParseVerifiedPayload(withMetadataHeaders(b))
		if (errWant == nil) != (errGot == nil) || (errWant == nil && !proto.Equal(whole, got)) {
			t.Fatalf("MessageMetadata with properties into a used scratch %x:\nproto: %v %v\nours:  %v %v", b, whole, errWant, got, errGot)
		}
	}
	swant := &pb.SingleMessageMetadata{}
	errWant = proto.Unmarshal(b, swant)
	for _, strs := range []*Strings{nil, &s.strs, &s.strs} {
		sgot := &pb.SingleMessageMetadata{}
		errGot = unmarshalSingleMetadata(b, sgot, strs)
		if (errWant == nil) != (errGot == nil) || (errWant == nil && !proto.Equal(swant, sgot)) {
			t.Fatalf("SingleMessageMetadata %x:\nproto: %v %v\nours:  %v %v", b, swant, errWant, sgot, errGot)
		}
	}
}

// withMetadataHeaders puts encoded metadata b in a headersAndPayload, its checksum unchecked
// (zero), with no payload.
func withMetadataHeaders(b []byte) []byte {
	p := binary.BigEndian.AppendUint16(nil, magicCRC32C)
	p = binary.BigEndian.AppendUint32(p, 0)
	p = binary.BigEndian.AppendUint32(p, uint32(len(b)))
	return append(p, b...)
}

// randomMetadata fills every field of a MessageMetadata at random, each present or not.
func randomMetadata(r *rand.Rand) *pb.MessageMetadata {
	str := func() *string {
		if r.IntN(3) == 0 {
			return nil
		}
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(r.IntN(256)) // proto2 strings need not be UTF-8
		}
		return proto.String(string(b))
	}
	u64 := func() *uint64 {
		if r.IntN(3) == 0 {
			return nil
		}
		return proto.Uint64(r.Uint64() >> r.IntN(64))
	}
	i32 := func() *int32 {
		if r.IntN(3) == 0 {
			return nil
		}
		return proto.Int32(int32(r.Uint32()) >> r.IntN(32))
	}
	boolean := func() *bool {
		if r.IntN(3) == 0 {
			return nil
		}
		return proto.Bool(r.IntN(2) == 0)
	}
	bytes := func() []byte {
		if s := str(); s != nil {
			return []byte(*s)
		}
		return nil
	}
	m := &pb.MessageMetadata{
		ProducerName: proto.String("p"), SequenceId: proto.Uint64(r.Uint64()), PublishTime: proto.Uint64(r.Uint64()),
		ReplicatedFrom: str(), PartitionKey: str(), UncompressedSize: proto.Uint32(r.Uint32()),
		NumMessagesInBatch: i32(), EventTime: u64(), EncryptionAlgo: str(), EncryptionParam: bytes(),
		SchemaVersion: bytes(), PartitionKeyB64Encoded: boolean(), OrderingKey: bytes(), DeliverAtTime: proto.Int64(int64(r.Uint64())),
		MarkerType: i32(), TxnidLeastBits: u64(), TxnidMostBits: u64(), HighestSequenceId: u64(), NullValue: boolean(),
		Uuid: str(), NumChunksFromMsg: i32(), TotalChunkMsgSize: i32(), ChunkId: i32(), NullPartitionKey: boolean(),
		Compression: pb.CompressionType(r.IntN(5)).Enum(),
	}
	for range r.IntN(4) {
		m.Properties = append(m.Properties, &pb.KeyValue{Key: proto.String(*cmpStr(str())), Value: proto.String(*cmpStr(str()))})
	}
	for range r.IntN(3) {
		m.ReplicateTo = append(m.ReplicateTo, *cmpStr(str()))
	}
	return m
}

func cmpStr(s *string) *string {
	if s == nil {
		return proto.String("")
	}
	return s
}

func randomSingleMetadata(r *rand.Rand) *pb.SingleMessageMetadata {
	m := randomMetadata(r)
	s := &pb.SingleMessageMetadata{
		Properties: m.Properties, PartitionKey: m.PartitionKey, PayloadSize: proto.Int32(int32(r.Uint32())),
		EventTime: m.EventTime, OrderingKey: m.OrderingKey, SequenceId: m.TxnidLeastBits,
		PartitionKeyB64Encoded: m.PartitionKeyB64Encoded, NullValue: m.NullValue, NullPartitionKey: m.NullPartitionKey,
	}
	if r.IntN(2) == 0 {
		s.CompactedOut = proto.Bool(r.IntN(2) == 0)
	}
	return s
}

// The fast decoders give what proto.Unmarshal gives, for metadata of every field, for what
// they leave to proto (unknown fields, encryption keys, a missing required field, an unknown
// compression) and for truncated input.
func TestMetadataDecodersMatchProto(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b, err := proto.Marshal(randomMetadata(r))
		if err != nil {
			t.Fatal(err)
		}
		sameDecoding(t, b)
		sameDecoding(t, b[:r.IntN(len(b)+1)])
		sb, err := proto.Marshal(randomSingleMetadata(r))
		if err != nil {
			t.Fatal(err)
		}
		sameDecoding(t, sb)
		sameDecoding(t, sb[:r.IntN(len(sb)+1)])
	}
	m := randomMetadata(r)
	m.EncryptionKeys = []*pb.EncryptionKeys{{Key: proto.String("k"), Value: []byte("v")}}
	withKeys, _ := proto.Marshal(m)
	m.EncryptionKeys = nil
	plain, _ := proto.Marshal(m)
	for name, b := range map[string][]byte{
		"encryption keys":            withKeys,
		"unknown field":              protowire.AppendVarint(protowire.AppendTag(plain, 99, protowire.VarintType), 7),
		"known field, other type":    protowire.AppendBytes(protowire.AppendTag(plain, 2, protowire.BytesType), []byte("x")),
		"unknown compression":        protowire.AppendVarint(protowire.AppendTag(plain, 8, protowire.VarintType), 9),
		"compression past int32":     protowire.AppendVarint(protowire.AppendTag(plain, 8, protowire.VarintType), 1<<32|1),
		"property without value":     protowire.AppendBytes(protowire.AppendTag(plain, 4, protowire.BytesType), protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k")),
		"without producer name":      protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1),
		"repeated scalar, last wins": protowire.AppendVarint(protowire.AppendTag(plain, 2, protowire.VarintType), 42),
		"group":                      protowire.AppendTag(plain, 5, protowire.StartGroupType),
		"empty":                      nil,
	} {
		t.Run(name, func(t *testing.T) { sameDecoding(t, b) })
	}
}

func FuzzMetadataDecoders(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		b, _ := proto.Marshal(randomMetadata(r))
		f.Add(b)
		b, _ = proto.Marshal(randomSingleMetadata(r))
		f.Add(b)
	}
	f.Fuzz(sameDecoding)
}

// The fast decoder's allocations per metadata of a dead letter (four properties).
func BenchmarkDecodeMetadata(b *testing.B) {
	m := &pb.MessageMetadata{
		ProducerName: proto.String("standalone-0-12"), SequenceId: proto.Uint64(12345), PublishTime: proto.Uint64(1_700_000_000_000),
		PartitionKey: proto.String("k123"), UncompressedSize: proto.Uint32(1024),
	}
	for _, kv := range [][2]string{{"REAL_TOPIC", "persistent://public/default/orders"}, {"ORIGIN_MESSAGE_ID", "1:2:0"}, {"RECONSUMETIMES", "16"}, {"reason", "bench"}} {
		m.Properties = append(m.Properties, &pb.KeyValue{Key: proto.String(kv[0]), Value: proto.String(kv[1])})
	}
	raw, _ := proto.Marshal(m)
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := unmarshalMetadata(raw, &pb.MessageMetadata{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scratch", func(b *testing.B) {
		b.ReportAllocs()
		var s MetadataScratch
		p := withMetadataHeaders(raw)
		for b.Loop() {
			if _, _, err := s.ParseVerifiedPayload(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(raw, &pb.MessageMetadata{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
