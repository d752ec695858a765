package client

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// MessageID identifies a message: an entry (ledger, entry) of a topic partition and, for
// batched entries, the message's index in the batch.
type MessageID struct {
	Ledger     int64
	Entry      int64
	Partition  int32 // -1 for a non-partitioned topic
	BatchIndex int32 // -1 when the entry is not a batch
	BatchSize  int32 // messages in the batch, 0 when not a batch
}

// EarliestMessageID is the position before every message.
func EarliestMessageID() MessageID {
	return MessageID{Ledger: -1, Entry: -1, Partition: -1, BatchIndex: -1}
}

// LatestMessageID is the position after every message.
func LatestMessageID() MessageID {
	return MessageID{Ledger: math.MaxInt64, Entry: math.MaxInt64, Partition: -1, BatchIndex: -1}
}

// String formats the id as the official Go client does, "ledger:entry:partition", with the
// partition of a non-partitioned topic written as 0 (that client's convention, which ends up
// in the ORIGIN_MESSAGE_ID properties of retried and dead-lettered messages).
func (id MessageID) String() string {
	return fmt.Sprintf("%d:%d:%d", id.Ledger, id.Entry, max(id.Partition, 0))
}

// ParseMessageID parses "ledger:entry[:partition[:batchIndex]]".
func ParseMessageID(s string) (MessageID, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 4 {
		return MessageID{}, fmt.Errorf("pulsar: message id %q: want ledger:entry[:partition[:batch]]", s)
	}
	var nums [4]int64
	nums[2], nums[3] = -1, -1
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return MessageID{}, fmt.Errorf("pulsar: message id %q: %w", s, err)
		}
		nums[i] = n
	}
	return MessageID{Ledger: nums[0], Entry: nums[1], Partition: int32(nums[2]), BatchIndex: int32(nums[3])}, nil
}

// Compare orders ids of the same partition: by ledger, entry, then batch index.
func (id MessageID) Compare(o MessageID) int {
	switch {
	case id.Ledger != o.Ledger:
		return cmpInt(id.Ledger, o.Ledger)
	case id.Entry != o.Entry:
		return cmpInt(id.Entry, o.Entry)
	}
	return cmpInt(int64(id.BatchIndex), int64(o.BatchIndex))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (id MessageID) isEarliest() bool { return id.Ledger == -1 && id.Entry == -1 }
func (id MessageID) isLatest() bool   { return id.Ledger == math.MaxInt64 && id.Entry == math.MaxInt64 }

func (id MessageID) pb() *pb.MessageIdData {
	d := &pb.MessageIdData{LedgerId: proto.Uint64(uint64(id.Ledger)), EntryId: proto.Uint64(uint64(id.Entry))}
	if id.Partition >= 0 {
		d.Partition = proto.Int32(id.Partition)
	}
	if id.BatchIndex >= 0 {
		d.BatchIndex = proto.Int32(id.BatchIndex)
	}
	return d
}

func idFromPB(d *pb.MessageIdData, partition int32) MessageID {
	id := MessageID{Ledger: int64(d.GetLedgerId()), Entry: int64(d.GetEntryId()), Partition: partition, BatchIndex: -1}
	if d.GetLedgerId() == wire.NoID {
		id.Ledger = -1
	}
	if d.GetEntryId() == wire.NoID {
		id.Entry = -1
	}
	if d.BatchIndex != nil {
		id.BatchIndex = d.GetBatchIndex()
	}
	return id
}

// Message is a message to send (the fields marked "send") or one received (all fields).
type Message struct {
	// Payload is the message body. When a producer has a schema and Value is set, Payload
	// is ignored and Value is encoded instead.
	Payload []byte
	// Value is encoded with the producer's schema (send only).
	Value any
	// Key is the partition key: it picks the partition and the Key_Shared consumer.
	Key string
	// OrderingKey, when set, is used instead of Key for routing and Key_Shared.
	OrderingKey string
	Properties  map[string]string
	// EventTime is an application timestamp; zero means unset.
	EventTime time.Time
	// DeliverAt / DeliverAfter delay delivery on Shared and Key_Shared subscriptions (send
	// only). Such messages are never batched.
	DeliverAt    time.Time
	DeliverAfter time.Duration
	// SequenceID, when set on send, is used instead of the producer's counter (for
	// deduplication); on receipt it is the message's sequence id. One at or below the
	// last sequence id the broker reported for the producer's name when it was created (an
	// earlier producer of that name stored it, or may have) is never batched with others:
	// each such message is judged on its own.
	SequenceID *int64

	// Set on received messages.
	Topic           string // the topic (partition) it was received from
	ID              MessageID
	PublishTime     time.Time
	ProducerName    string
	RedeliveryCount uint32
	// SchemaVersion is the writer schema version of a received message. Set on send, it is
	// stamped on the message instead of the producer's (a replay keeps the original writer's
	// schema); such messages are never batched.
	SchemaVersion  []byte
	ReplicatedFrom string

	consumer *partitionConsumer
	epoch    uint64
	batch    *batchAcks
	schema   Schema
	// seq is where SequenceID points in a received message: one allocation, not two.
	seq int64
}

// deliverAt is the absolute delivery time a message asks for, or zero.
func (m *Message) deliverAt() time.Time {
	if !m.DeliverAt.IsZero() {
		return m.DeliverAt
	}
	if m.DeliverAfter > 0 {
		return time.Now().Add(m.DeliverAfter)
	}
	return time.Time{}
}

func toMillis(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixMilli())
}

func fromMillis(ms uint64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

func propsToPB(m map[string]string) []*pb.KeyValue {
	if len(m) == 0 {
		return nil
	}
	out := make([]*pb.KeyValue, 0, len(m))
	for k, v := range m {
		out = append(out, &pb.KeyValue{Key: proto.String(k), Value: proto.String(v)})
	}
	return out
}

func propsFromPB(kvs []*pb.KeyValue) map[string]string {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}
