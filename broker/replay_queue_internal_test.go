package broker

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// A consumer that leaves hands its pending entries back to the replay queue, which stays
// sorted and without duplicates however many come back at once and in whatever order.
func TestRedeliverFromKeepsTheReplayQueueSorted(t *testing.T) {
	// Not durable: a durable subscription marks its topic for the cursor flusher, and there is
	// no topic here.
	s := newSubscription(nil, "s", pb.CommandSubscribe_Shared, false, storage.Position{Ledger: 1})
	leaving, staying := &consumer{}, &consumer{}
	var want []storage.Position
	for e := int64(0); e < 10_000; e++ {
		p := storage.Position{Ledger: 1 + e%3, Entry: e}
		owner := leaving
		if e%5 == 0 {
			owner = staying
		} else {
			want = append(want, p)
		}
		s.pending[p] = pendingEntry{consumer: owner, messages: 1}
		owner.unacked++
	}
	// Some are already queued again (a redelivery asked for them).
	for _, p := range want[:100] {
		s.addReplay(p)
	}
	rand.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
	s.redeliverFrom(leaving, nil)
	slices.SortFunc(want, comparePos)
	if !slices.Equal(s.replay, want) {
		t.Fatalf("the replay queue holds %d entries (sorted %v), want the %d the consumer held", len(s.replay),
			slices.IsSortedFunc(s.replay, comparePos), len(want))
	}
	if leaving.unacked != 0 || staying.unacked != 2000 || len(s.pending) != 2000 {
		t.Errorf("unacked %d and %d, %d pending; want 0, 2000, 2000", leaving.unacked, staying.unacked, len(s.pending))
	}
}
