package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// testBatch is a three-message batch body: keyed, empty payload, with properties.
func testBatch(t testing.TB) ([]byte, []BatchMessage) {
	t.Helper()
	want := []BatchMessage{
		{Meta: &pb.SingleMessageMetadata{PartitionKey: proto.String("k1"), SequenceId: proto.Uint64(10)}, Payload: []byte("first")},
		{Meta: &pb.SingleMessageMetadata{SequenceId: proto.Uint64(11), NullValue: proto.Bool(true)}, Payload: []byte{}},
		{Meta: &pb.SingleMessageMetadata{
			SequenceId: proto.Uint64(12),
			Properties: []*pb.KeyValue{{Key: proto.String("a"), Value: proto.String("b")}},
		}, Payload: bytes.Repeat([]byte{0xab}, 300)},
	}
	var body []byte
	for _, m := range want {
		var err error
		if body, err = AppendBatchMessage(body, m.Meta, m.Payload); err != nil {
			t.Fatal(err)
		}
	}
	return body, want
}

func TestBatchRoundTrip(t *testing.T) {
	t.Parallel()
	body, want := testBatch(t)
	for i, m := range want {
		if got := m.Meta.GetPayloadSize(); int(got) != len(m.Payload) {
			t.Errorf("message %d: AppendBatchMessage set payload_size %d, want %d", i, got, len(m.Payload))
		}
	}
	orig := bytes.Clone(body)
	got, err := ParseBatch(body, len(want))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i].Meta, want[i].Meta) {
			t.Errorf("message %d: meta %v, want %v", i, got[i].Meta, want[i].Meta)
		}
		if !bytes.Equal(got[i].Payload, want[i].Payload) {
			t.Errorf("message %d: payload %q, want %q", i, got[i].Payload, want[i].Payload)
		}
	}

	// A payload must not be able to grow into the next message.
	_ = append(got[0].Payload, 'X')
	if !bytes.Equal(body, orig) {
		t.Error("appending to a parsed payload overwrote the batch body")
	}

	// Fewer messages than present: the rest is ignored. Trailing bytes likewise.
	if got, err := ParseBatch(append(body, 1, 2, 3), 2); err != nil || len(got) != 2 {
		t.Errorf("ParseBatch(n=2) = %d messages, %v; want 2, nil", len(got), err)
	}
	if got, err := ParseBatch(nil, 0); err != nil || len(got) != 0 {
		t.Errorf("ParseBatch(nil, 0) = %v, %v", got, err)
	}
}

func TestParseBatchErrors(t *testing.T) {
	t.Parallel()
	body, want := testBatch(t)
	n := len(want)

	// Every truncation of a valid body must fail cleanly.
	for i := range len(body) {
		if _, err := ParseBatch(body[:i], n); !errors.Is(err, ErrBadBatch) {
			t.Fatalf("ParseBatch(body[:%d]) error = %v, want ErrBadBatch", i, err)
		}
	}

	frame := func(metaSize uint32, raw, payload []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, metaSize)
		b = append(b, raw...)
		return append(b, payload...)
	}
	rawMeta := func(m *pb.SingleMessageMetadata) []byte {
		raw, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	good := rawMeta(&pb.SingleMessageMetadata{PayloadSize: proto.Int32(2)})
	tests := []struct {
		name string
		body []byte
		n    int
	}{
		{"negative count", body, -1},
		{"more messages than present", body, n + 1},
		{"huge count", body, math.MaxInt32},
		{"metadata size beyond body", frame(1000, good, []byte("hi")), 1},
		{"metadata size 0xffffffff", frame(0xffffffff, good, []byte("hi")), 1},
		{"metadata without payload_size", frame(0, nil, nil), 1},
		{"metadata garbage", frame(3, []byte{0xff, 0xff, 0xff}, nil), 1},
		{"payload beyond body", frame(uint32(len(good)), good, []byte("h")), 1},
		{"negative payload_size", func() []byte {
			raw := rawMeta(&pb.SingleMessageMetadata{PayloadSize: proto.Int32(-1)})
			return frame(uint32(len(raw)), raw, []byte("hi"))
		}(), 1},
	}
	for _, tt := range tests {
		if _, err := ParseBatch(tt.body, tt.n); !errors.Is(err, ErrBadBatch) {
			t.Errorf("%s: error = %v, want ErrBadBatch", tt.name, err)
		}
	}
}

func TestAppendBatchMessageKeepsDst(t *testing.T) {
	t.Parallel()
	dst := []byte("prefix")
	// SingleMessageMetadata has no other required field, so only an invalid value can fail:
	// a property missing its required value.
	bad := &pb.SingleMessageMetadata{Properties: []*pb.KeyValue{{Key: proto.String("k")}}}
	got, err := AppendBatchMessage(dst, bad, []byte("x"))
	if err == nil {
		t.Fatal("AppendBatchMessage with an incomplete property succeeded")
	}
	if string(got) != "prefix" {
		t.Errorf("dst after a failed append = %q, want %q", got, "prefix")
	}
}

// CountBatch walks a batch without allocating; a 1000-message batch is what the official
// client sends at most by default.
func BenchmarkCountBatch(b *testing.B) {
	var body []byte
	for i := range 1000 {
		meta := &pb.SingleMessageMetadata{PartitionKey: proto.String("key"), SequenceId: proto.Uint64(uint64(i)),
			Properties: []*pb.KeyValue{{Key: proto.String("k"), Value: proto.String("v")}}}
		var err error
		if body, err = AppendBatchMessage(body, meta, make([]byte, 100)); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := CountBatch(body); n != 1000 || err != nil {
			b.Fatal(n, err)
		}
	}
}

// CountBatch counts what ParseBatch parses, and refuses a body that is not exactly whole
// messages.
func TestCountBatch(t *testing.T) {
	t.Parallel()
	var body []byte
	for n := range 5 {
		got, err := CountBatch(body)
		if err != nil || got != n {
			t.Fatalf("%d messages: CountBatch = %d, %v", n, got, err)
		}
		if _, err := ParseBatch(body, got); err != nil {
			t.Fatalf("ParseBatch of what CountBatch counted: %v", err)
		}
		var err2 error
		body, err2 = AppendBatchMessage(body, &pb.SingleMessageMetadata{SequenceId: proto.Uint64(uint64(n))}, []byte("payload"))
		if err2 != nil {
			t.Fatal(err2)
		}
	}
	noSize, _ := proto.Marshal(&pb.SingleMessageMetadata{PartitionKey: proto.String("k"), PayloadSize: proto.Int32(0)})
	noSize = noSize[:len(noSize)-2] // the payload_size field (tag, one-byte value) is last
	negative := protowire.AppendTag(nil, 3, protowire.VarintType)
	negative = protowire.AppendVarint(negative, uint64(0xFFFFFFFFFFFFFFFF)) // int32 −1
	envelope := func(meta []byte, payload string) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(meta)))
		return append(append(out, meta...), payload...)
	}
	for name, bad := range map[string][]byte{
		"size cut short":           body[:2],
		"metadata past the end":    binary.BigEndian.AppendUint32(nil, 100),
		"payload past the end":     body[:len(body)-1],
		"bytes after the last":     append(append([]byte(nil), body...), 0, 0),
		"no payload_size":          envelope(noSize, ""),
		"negative payload_size":    envelope(negative, ""),
		"malformed metadata field": envelope([]byte{0x0a, 0x05, 'a'}, ""),
	} {
		if n, err := CountBatch(bad); !errors.Is(err, ErrBadBatch) {
			t.Errorf("%s: CountBatch = %d, %v; want ErrBadBatch", name, n, err)
		}
	}
}

// AppendBatchFields writes what AppendBatchMessage writes for a SingleMessageMetadata of the
// same fields, and the batch parses back to them.
func TestAppendBatchFieldsMatchesProto(t *testing.T) {
	t.Parallel()
	cases := []BatchFields{
		{SequenceID: 0},
		{SequenceID: 7, PartitionKey: "k", OrderingKey: "o", EventTime: 1_700_000_000_000},
		{SequenceID: 1 << 40, Properties: map[string]string{"REAL_TOPIC": "persistent://public/default/a"}},
		{SequenceID: 3, Properties: map[string]string{"": "", "a": strings.Repeat("v", 300)}, PartitionKey: "\xff"},
	}
	for i, f := range cases {
		payload := []byte(strings.Repeat("p", i*100))
		got, err := AppendBatchFields([]byte("x"), f, payload)
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := ParseBatch(got[1:], 1)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want := &pb.SingleMessageMetadata{SequenceId: proto.Uint64(f.SequenceID), PayloadSize: proto.Int32(int32(len(payload)))}
		if f.PartitionKey != "" {
			want.PartitionKey = proto.String(f.PartitionKey)
		}
		if f.OrderingKey != "" {
			want.OrderingKey = []byte(f.OrderingKey)
		}
		if f.EventTime != 0 {
			want.EventTime = proto.Uint64(f.EventTime)
		}
		keys := slices.Sorted(maps.Keys(f.Properties))
		for _, k := range keys {
			want.Properties = append(want.Properties, &pb.KeyValue{Key: proto.String(k), Value: proto.String(f.Properties[k])})
		}
		gotMeta := msgs[0].Meta
		slices.SortFunc(gotMeta.Properties, func(a, b *pb.KeyValue) int { return strings.Compare(a.GetKey(), b.GetKey()) })
		if !proto.Equal(gotMeta, want) || !bytes.Equal(msgs[0].Payload, payload) {
			t.Fatalf("case %d: parsed %v, want %v", i, gotMeta, want)
		}
		if len(f.Properties) <= 1 { // one order only: the bytes must be proto's
			viaProto, err := AppendBatchMessage([]byte("x"), want, payload)
			if err != nil || !bytes.Equal(got, viaProto) {
				t.Fatalf("case %d: %x, proto gives %x (%v)", i, got, viaProto, err)
			}
		}
	}
}
