package wire

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

func TestSpecialMessageIDs(t *testing.T) {
	t.Parallel()
	// How the Go client encodes its earliest (-1:-1) and latest (MaxInt64:MaxInt64) ids: the
	// int64 values converted to uint64, with partition and batch index set as well.
	earliest := int64(-1)
	fromClient := &pb.MessageIdData{
		LedgerId:   proto.Uint64(uint64(earliest)),
		EntryId:    proto.Uint64(uint64(earliest)),
		Partition:  proto.Int32(3),
		BatchIndex: proto.Int32(-1),
	}
	tests := []struct {
		name             string
		id               *pb.MessageIdData
		earliest, latest bool
	}{
		{"EarliestID", EarliestID(), true, false},
		{"LatestID", LatestID(), false, true},
		{"client earliest", fromClient, true, false},
		{"ordinary", &pb.MessageIdData{LedgerId: proto.Uint64(7), EntryId: proto.Uint64(0)}, false, false},
		{"empty topic last id", &pb.MessageIdData{LedgerId: proto.Uint64(7), EntryId: proto.Uint64(NoID)}, false, false},
		{"nil", nil, false, false},
	}
	for _, tt := range tests {
		if got := IsEarliest(tt.id); got != tt.earliest {
			t.Errorf("%s: IsEarliest = %v, want %v", tt.name, got, tt.earliest)
		}
		if got := IsLatest(tt.id); got != tt.latest {
			t.Errorf("%s: IsLatest = %v, want %v", tt.name, got, tt.latest)
		}
	}

	// Both must survive the wire: ledgerId and entryId are required fields.
	for _, id := range []*pb.MessageIdData{EarliestID(), LatestID()} {
		raw, err := proto.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		back := &pb.MessageIdData{}
		if err := proto.Unmarshal(raw, back); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(id, back) {
			t.Errorf("round trip: got %v, want %v", back, id)
		}
	}
}
