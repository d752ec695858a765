package wire

import (
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// NoID is −1 as it travels in MessageIdData's unsigned ledgerId and entryId: "no ledger" in
// the earliest position, "no entry yet" in GET_LAST_MESSAGE_ID_RESPONSE of an empty topic.
const NoID = ^uint64(0)

// MaxID is Java's Long.MAX_VALUE, the ledger and entry of the "latest" position.
const MaxID = uint64(math.MaxInt64)

// EarliestID is the position before every message (−1:−1), which readers send as
// start_message_id to read a topic from its beginning.
func EarliestID() *pb.MessageIdData {
	return &pb.MessageIdData{LedgerId: proto.Uint64(NoID), EntryId: proto.Uint64(NoID)}
}

// LatestID is the position after every message (MaxInt64:MaxInt64), which readers send as
// start_message_id to read only what is published from now on.
func LatestID() *pb.MessageIdData {
	return &pb.MessageIdData{LedgerId: proto.Uint64(MaxID), EntryId: proto.Uint64(MaxID)}
}

// IsEarliest reports whether id is the earliest position. Only ledger and entry count: clients
// also fill in partition and batch index.
func IsEarliest(id *pb.MessageIdData) bool {
	return id != nil && id.GetLedgerId() == NoID && id.GetEntryId() == NoID
}

// IsLatest reports whether id is the latest position; like IsEarliest it ignores partition and
// batch index.
func IsLatest(id *pb.MessageIdData) bool {
	return id != nil && id.GetLedgerId() == MaxID && id.GetEntryId() == MaxID
}
