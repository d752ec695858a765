package wire

import (
	"strings"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestStringsShareWhatRepeats(t *testing.T) {
	var s Strings
	k1, v1 := s.property([]byte("REAL_TOPIC"), []byte("persistent://public/default/orders"))
	k2, v2 := s.property([]byte("REAL_TOPIC"), []byte("persistent://public/default/orders"))
	if k1 != "REAL_TOPIC" || v1 != "persistent://public/default/orders" || !sameString(k1, k2) || !sameString(v1, v2) {
		t.Fatalf("a repeated property: %q=%q then %q=%q, shared %v %v", k1, v1, k2, v2, sameString(k1, k2), sameString(v1, v2))
	}
	_, v3 := s.property([]byte("REAL_TOPIC"), []byte("persistent://public/default/payments"))
	if v3 != "persistent://public/default/payments" || sameString(v3, v1) {
		t.Fatalf("a new value came back as %q", v3)
	}
	if _, v := s.property([]byte("REAL_TOPIC"), []byte("")); v != "" {
		t.Fatalf("an empty value came back as %q", v)
	}
	long := strings.Repeat("x", sharedMax+1)
	_, l1 := s.property([]byte("reason"), []byte(long))
	_, l2 := s.property([]byte("reason"), []byte(long))
	if l1 != long || l2 != long || sameString(l1, l2) || s.props["reason"].value != "" {
		t.Fatal("a value over sharedMax was remembered")
	}
	if p1, p2 := s.field(fieldProducer, []byte("p")), s.field(fieldProducer, []byte("p")); p1 != "p" || !sameString(p1, p2) {
		t.Fatal("a repeated producer name was not shared")
	}
	if p := s.field(fieldProducer, []byte("q")); p != "q" {
		t.Fatalf("a new producer name came back as %q", p)
	}
	var none *Strings
	if k, v := none.property([]byte("a"), []byte("b")); k != "a" || v != "b" || none.field(fieldUUID, []byte("u")) != "u" {
		t.Fatal("a nil Strings made the wrong strings")
	}
}

func TestStringsRememberBoundedNames(t *testing.T) {
	var s Strings
	for i := range 10 * propsMax {
		name := []byte("name-" + strings.Repeat("n", i%50) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)))
		s.property(name, []byte("v"))
		if len(s.props) > propsMax {
			t.Fatalf("%d property names remembered, bound %d", len(s.props), propsMax)
		}
	}
}

// A reader's scratch decodes a dead letter's metadata, after the first, allocating only the
// strings that differ from the letter before (its ORIGIN_MESSAGE_ID and key).
func TestScratchDecodesALetterWithFewAllocations(t *testing.T) {
	var s MetadataScratch
	letter := func(i int) []byte {
		m := &pb.MessageMetadata{ProducerName: proto.String("standalone-0-12"), SequenceId: proto.Uint64(uint64(i)),
			PublishTime: proto.Uint64(1_700_000_000_000), PartitionKey: proto.String("k" + string(rune('a'+i%26)))}
		for _, kv := range [][2]string{{"REAL_TOPIC", "persistent://public/default/orders"}, {"ORIGIN_MESSAGE_ID", "1:" + string(rune('a'+i%26)) + ":0"}, {"RECONSUMETIMES", "16"}, {"reason", "bench"}} {
			m.Properties = append(m.Properties, &pb.KeyValue{Key: proto.String(kv[0]), Value: proto.String(kv[1])})
		}
		raw, _ := proto.Marshal(m)
		return withMetadataHeaders(raw)
	}
	letters := [][]byte{letter(0), letter(1)}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		i++
		if _, _, err := s.ParseVerifiedPayload(letters[i%2]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Fatalf("%v allocations a letter, want at most 2 (its key and ORIGIN_MESSAGE_ID)", allocs)
	}
}
