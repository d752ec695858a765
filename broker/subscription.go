package broker

import (
	"container/heap"
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// subscription is a cursor over a topic's log plus the consumers attached to it. All fields are
// guarded by the topic's mutex.
//
// Cursor model, as upstream's managed cursor: every entry at or before markDelete is acknowledged;
// acked holds entries after it that were acknowledged individually, as ranges (ackranges.go), and
// partial the batches acknowledged in part (bit set = message not yet acknowledged). Both only ever
// hold entries of the log after markDelete: the ACK handler ignores the rest (10_ack.go), so what a
// client acknowledges cannot grow them beyond the log. readPos is the next entry never dispatched;
// replay holds entries to deliver again (nacked, or left unacked by a consumer that went away),
// always before anything new.
type subscription struct {
	topic   *topic
	name    string
	subType pb.CommandSubscribe_SubType
	durable bool
	created time.Time
	props   map[string]string

	markDelete storage.Position
	readPos    storage.Position
	acked      ackRanges
	partial    map[storage.Position][]int64
	pending    map[storage.Position]pendingEntry // by value: no allocation per delivered entry
	replay     []storage.Position                // sorted, no duplicates
	redeliver  map[storage.Position]uint32
	delayed    delayQueue
	nextDue    time.Time // earliest delayed entry, zero if none

	// rateLimit is its dispatch rate and retryAt when it may deliver again after throttling
	// (dispatch_rate.go); blockedOnUnacked is set while its consumers hold its maximum of
	// unacknowledged messages (unacked.go).
	rateLimit        dispatchLimiter
	retryAt          time.Time
	blockedOnUnacked bool

	consumers []*consumer // in subscription order
	active    *consumer   // Exclusive/Failover: the one consumer dispatched to
	switchAt  time.Time   // Failover: when a change of active consumer takes effect (failover.go)
	rr        int         // Shared: round-robin cursor
	selector  *keySelector
	// compactedEarliest: a read_compacted consumer starts from the earliest message and reads
	// the whole compacted view (compaction_read.go).
	compactedEarliest bool
	compactedNext     storage.Position // with compactedEarliest: the next entry of the view to deliver

	// dirty: the cursor changed since it was last persisted.
	dirty bool
	// parkOnDetach: a reader's subscription that a seek is disconnecting, to be parked rather
	// than dropped when its last consumer goes; parkedAt: when it was (reader_seek.go).
	parkOnDetach bool
	parkedAt     time.Time

	// entryMsgs and entryBytes average the entries delivered, to size reads.
	entryMsgs, entryBytes movingAvg

	msgOut, bytesOut, msgRedeliver int64
	msgAcked                       int64 // messages acknowledged, for the ack rate
	msgExpired                     int64 // entries expired (ttl.go), as upstream counts them
	lastConsumed, lastAck          time.Time
	lastLeft                       time.Time // when a consumer last left (sub_expiry.go)
	lastExpire                     time.Time
}

// counters are s's cumulative figures that stats derive rates from.
func (s *subscription) counters() counters {
	return counters{msgs: s.msgOut, bytes: s.bytesOut, redeliver: s.msgRedeliver, acks: s.msgAcked, expired: s.msgExpired}
}

type pendingEntry struct {
	consumer *consumer
	messages int64
}

func newSubscription(t *topic, name string, subType pb.CommandSubscribe_SubType, durable bool, start storage.Position) *subscription {
	s := &subscription{
		topic:     t,
		name:      name,
		subType:   subType,
		durable:   durable,
		created:   time.Now(),
		partial:   make(map[storage.Position][]int64),
		pending:   make(map[storage.Position]pendingEntry),
		redeliver: make(map[storage.Position]uint32),
	}
	if subType == pb.CommandSubscribe_Key_Shared {
		s.selector = newKeySelector(t.b.cfg)
	}
	s.resetTo(start)
	return s
}

// setType changes the dispatch type of a subscription with no consumers.
func (s *subscription) setType(t pb.CommandSubscribe_SubType) {
	s.subType = t
	s.active = nil
	s.switchAt = time.Time{}
	s.selector = nil
	if t == pb.CommandSubscribe_Key_Shared {
		s.selector = newKeySelector(s.topic.b.cfg)
	}
	s.markDirty()
}

// shared reports the dispatchers that spread one subscription over many consumers; only they
// count redeliveries and hold delayed messages, as upstream.
func (s *subscription) shared() bool {
	return s.subType == pb.CommandSubscribe_Shared || s.subType == pb.CommandSubscribe_Key_Shared
}

// resetTo moves the cursor so that start is the next entry delivered and forgets every ack,
// pending delivery and redelivery after it.
func (s *subscription) resetTo(start storage.Position) {
	s.markDelete = storage.Position{Ledger: start.Ledger, Entry: start.Entry - 1}
	s.readPos = start
	s.acked.clear()
	clear(s.partial)
	for _, pe := range s.pending {
		pe.consumer.unacked -= pe.messages
	}
	clear(s.pending)
	s.replay = s.replay[:0]
	clear(s.redeliver)
	s.delayed = s.delayed[:0]
	s.nextDue = time.Time{}
	s.markDirty()
}

// isAcked reports whether the whole entry at p is acknowledged.
func (s *subscription) isAcked(p storage.Position) bool {
	if !s.markDelete.Less(p) {
		return true
	}
	return s.acked.contains(p)
}

func (s *subscription) addReplay(p storage.Position) {
	i, found := slices.BinarySearchFunc(s.replay, p, comparePos)
	if !found {
		s.replay = slices.Insert(s.replay, i, p)
	}
}

func (s *subscription) removeReplay(p storage.Position) {
	if i, found := slices.BinarySearchFunc(s.replay, p, comparePos); found {
		s.replay = slices.Delete(s.replay, i, i+1)
	}
}

func comparePos(a, b storage.Position) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

// ackIndividual acknowledges one message id; ackSet (bit set = still unacknowledged) marks a
// batch acknowledged in part.
func (s *subscription) ackIndividual(p storage.Position, ackSet []int64) {
	if s.isAcked(p) {
		return
	}
	if len(ackSet) > 0 && s.topic.b.cfg.AcknowledgmentAtBatchIndexLevelEnabled {
		remaining := ackSet
		if prev, ok := s.partial[p]; ok {
			remaining = andBits(prev, ackSet)
		}
		if !allZero(remaining) {
			s.partial[p] = remaining
			s.markDirty()
			return
		}
	} else if len(ackSet) > 0 {
		return // batch-index acks are off: wait for the whole batch
	}
	s.ackWhole(p)
	s.advanceMarkDelete()
}

func (s *subscription) ackWhole(p storage.Position) {
	if pe, ok := s.pending[p]; ok {
		pe.consumer.unacked -= pe.messages
		pe.consumer.msgAcked += pe.messages
		s.msgAcked += pe.messages
		delete(s.pending, p)
	}
	delete(s.partial, p)
	delete(s.redeliver, p)
	s.removeReplay(p)
	s.acked.add(p)
	s.markDirty()
}

// advanceMarkDelete moves the mark-delete position over the acknowledged ranges that follow
// it, a whole range at a time.
func (s *subscription) advanceMarkDelete() {
	for {
		last, ok := s.acked.takeFrom(s.topic.log.Next(s.markDelete))
		if !ok {
			return
		}
		s.markDelete = last
	}
}

// ackCumulative acknowledges everything up to and including p; with an ackSet, p itself is
// acknowledged only in part.
func (s *subscription) ackCumulative(p storage.Position, ackSet []int64) {
	upTo := p
	if len(ackSet) > 0 && s.topic.b.cfg.AcknowledgmentAtBatchIndexLevelEnabled && !allZero(ackSet) {
		upTo = storage.Position{Ledger: p.Ledger, Entry: p.Entry - 1}
		defer func() {
			if s.markDelete.Less(p) {
				s.partial[p] = ackSet
			}
		}()
	}
	if !s.markDelete.Less(upTo) {
		return
	}
	s.markDelete = upTo
	s.markDirty()
	for q, pe := range s.pending {
		if !upTo.Less(q) {
			pe.consumer.unacked -= pe.messages
			pe.consumer.msgAcked += pe.messages
			s.msgAcked += pe.messages
			delete(s.pending, q)
		}
	}
	s.acked.dropThrough(upTo)
	for q := range s.partial {
		if !upTo.Less(q) {
			delete(s.partial, q)
		}
	}
	for q := range s.redeliver {
		if !upTo.Less(q) {
			delete(s.redeliver, q)
		}
	}
	s.replay = slices.DeleteFunc(s.replay, func(q storage.Position) bool { return !upTo.Less(q) })
	if s.readPos.Less(s.topic.log.Next(upTo)) {
		s.readPos = s.topic.log.Next(upTo)
	}
	s.advanceMarkDelete()
}

// redeliverFrom puts cs's unacknowledged entries back for delivery: those named in ids, or all
// of them when ids is empty or the subscription has a single active consumer (as upstream).
func (s *subscription) redeliverFrom(cs *consumer, ids []storage.Position) {
	var back []storage.Position
	if len(ids) == 0 || !s.shared() {
		for p, pe := range s.pending {
			if pe.consumer == cs {
				s.requeue(p, pe)
				back = append(back, p)
			}
		}
	} else {
		for _, p := range ids {
			if pe, ok := s.pending[p]; ok && pe.consumer == cs {
				s.requeue(p, pe)
				back = append(back, p)
			}
		}
	}
	s.addReplays(back)
}

// requeue takes p back from its consumer; the caller adds it to the replay queue (addReplays,
// all at once: one by one, a consumer leaving with n entries pending cost n² moves).
func (s *subscription) requeue(p storage.Position, pe pendingEntry) {
	pe.consumer.unacked -= pe.messages
	delete(s.pending, p)
	if s.shared() {
		s.redeliver[p]++
	}
	s.msgRedeliver += pe.messages
	pe.consumer.msgRedeliver += pe.messages
}

// addReplays adds ps (in any order) to the replay queue, which stays sorted and without
// duplicates.
func (s *subscription) addReplays(ps []storage.Position) {
	if len(ps) <= 8 {
		for _, p := range ps {
			s.addReplay(p)
		}
		return
	}
	s.replay = append(s.replay, ps...)
	slices.SortFunc(s.replay, comparePos)
	s.replay = slices.CompactFunc(s.replay, func(a, b storage.Position) bool { return a == b })
}

// dropUndelivered forgets everything before end that was not delivered (non-persistent topics).
func (s *subscription) dropUndelivered(end storage.Position) {
	s.replay = s.replay[:0]
	clear(s.pending)
	for _, cs := range s.consumers {
		cs.unacked = 0
	}
	s.readPos = end
	s.markDelete = storage.Position{Ledger: end.Ledger, Entry: end.Entry - 1}
	s.acked.dropThrough(s.markDelete)
}

func andBits(a, b []int64) []int64 {
	out := make([]int64, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i] & b[i]
	}
	return out
}

func allZero(words []int64) bool {
	for _, w := range words {
		if w != 0 {
			return false
		}
	}
	return true
}

// delayQueue is a min-heap of entries waiting for their deliver_at_time.
type delayQueue []delayedEntry

type delayedEntry struct {
	at  int64 // ms since epoch
	pos storage.Position
}

func (q delayQueue) Len() int { return len(q) }
func (q delayQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].pos.Less(q[j].pos)
}
func (q delayQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *delayQueue) Push(x any)   { *q = append(*q, x.(delayedEntry)) }
func (q *delayQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (s *subscription) delay(at int64, p storage.Position) {
	heap.Push(&s.delayed, delayedEntry{at, p})
}

// releaseDue moves delayed entries that are due (within tick of now) to the replay set and
// sets nextDue.
func (s *subscription) releaseDue(now time.Time, tick time.Duration) {
	ms := now.Add(tick).UnixMilli()
	for len(s.delayed) > 0 && s.delayed[0].at <= ms {
		e := heap.Pop(&s.delayed).(delayedEntry)
		if !s.isAcked(e.pos) {
			s.addReplay(e.pos)
		}
	}
	s.updateDue()
}

// backlogEntries counts entries after the mark-delete position not yet acknowledged (upstream's
// msgBacklog counts entries too).
func (s *subscription) backlogEntries() int64 {
	log := s.topic.log
	return max(log.EntriesFrom(log.Next(s.markDelete))-s.acked.len(), 0)
}
