package client

import (
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// nackTracker holds negatively acknowledged entries until their redelivery time, then asks
// the broker to redeliver them (REDELIVER_UNACKNOWLEDGED_MESSAGES with entry ids).
type nackTracker struct {
	c  *Consumer
	mu sync.Mutex
	m  map[*partitionConsumer]map[entryKey]time.Time
}

func newNackTracker(c *Consumer) *nackTracker {
	return &nackTracker{c: c, m: make(map[*partitionConsumer]map[entryKey]time.Time)}
}

func (t *nackTracker) add(pc *partitionConsumer, id MessageID, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.m[pc]
	if ids == nil {
		ids = make(map[entryKey]time.Time)
		t.m[pc] = ids
	}
	k := entryKey{id.Ledger, id.Entry}
	if prev, ok := ids[k]; !ok || at.Before(prev) {
		ids[k] = at
	}
}

// forget drops a pending nack for an entry the application acknowledged after all (only
// meaningful for non-batched messages: one ack of a batch does not settle the entry).
func (t *nackTracker) forget(pc *partitionConsumer, id MessageID) {
	if id.BatchIndex >= 0 {
		return
	}
	t.mu.Lock()
	delete(t.m[pc], entryKey{id.Ledger, id.Entry})
	t.mu.Unlock()
}

func (t *nackTracker) redeliverDue() {
	now := time.Now()
	due := make(map[*partitionConsumer][]*pb.MessageIdData)
	t.mu.Lock()
	for pc, ids := range t.m {
		for k, at := range ids {
			if !at.After(now) {
				due[pc] = append(due[pc], &pb.MessageIdData{LedgerId: proto.Uint64(uint64(k.ledger)), EntryId: proto.Uint64(uint64(k.entry))})
				delete(ids, k)
			}
		}
		if len(ids) == 0 {
			delete(t.m, pc)
		}
	}
	t.mu.Unlock()
	for pc, ids := range due {
		c := pc.conn()
		if c == nil {
			continue // reconnecting: the broker redelivers everything unacknowledged anyway
		}
		c.writeCmd(&pb.BaseCommand{Type: pb.BaseCommand_REDELIVER_UNACKNOWLEDGED_MESSAGES.Enum(),
			RedeliverUnacknowledgedMessages: &pb.CommandRedeliverUnacknowledgedMessages{
				ConsumerId: proto.Uint64(pc.id), MessageIds: ids}})
	}
}
