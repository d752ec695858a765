package broker

import (
	"math"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// dispatchBatch bounds one dispatch round so a deep backlog does not hold the topic lock for
// long; the dispatcher signals itself to continue.
const dispatchBatch = 500

// Reads of new entries are sized to what the consumers can take, as upstream's dispatcher does
// (permits over the average messages per entry it has seen, and dispatcherMaxReadSizeBytes):
// a consumer with room for four batches must not make a durable log read and checksum a
// hundred from disk only for most of them to be dropped. maxReadEntries and maxReadBytes bound
// one read.
const (
	maxReadEntries = 100
	maxReadBytes   = 5 << 20
)

// dispatch delivers entries to consumers with permits: replayed entries first, then new ones,
// within the topic's and the subscription's dispatch rates (dispatch_rate.go) and, on Shared
// and Key_Shared subscriptions, the maximum of unacknowledged messages (unacked.go). Messages
// with a deliver-at time wait for it on Shared and Key_Shared subscriptions while the topic's
// delayed delivery policy is active; as upstream's delayed delivery tracker, one due within a
// tick goes at once unless isDelayedDeliveryDeliverAtTimeStrict. Called with the topic's mutex
// held.
func (s *subscription) dispatch(now time.Time) {
	s.retryAt = time.Time{}
	if s.switching(now) { // failover.go
		return
	}
	if len(s.consumers) == 0 {
		return
	}
	delayed := s.topic.limits().delayed
	delayOK := s.shared() && delayed.Active
	var tick time.Duration
	if delayOK && !s.topic.b.cfg.DelayedDeliveryDeliverAtTimeStrict {
		tick = time.Duration(max(delayed.TickTime, 0)) * time.Millisecond
	}
	switch {
	case delayOK:
		s.releaseDue(now, tick)
	case len(s.delayed) > 0:
		s.releaseDelayed()
	}
	defer s.updateDue()
	if s.dispatchThrottled(now) || s.unackedBlocked() {
		return
	}
	budget := dispatchBatch
	nowMs := now.Add(tick).UnixMilli()

	// Entries come with a hold on their buffer (storage.Holder): deliver hands it to the
	// consumer's connection; every entry not delivered releases it.

	// Replayed entries. Key_Shared may leave some behind for a consumer without permits.
	for i := 0; i < len(s.replay) && budget > 0; {
		p := s.replay[i]
		if s.isAcked(p) {
			s.replay = append(s.replay[:i], s.replay[i+1:]...)
			continue
		}
		e, ok := s.replayEntry(p) // the log's, or the compacted view's (compaction_read.go)
		if !ok {
			s.replay = append(s.replay[:i], s.replay[i+1:]...)
			continue
		}
		if delayOK && e.Meta.DeliverAt > nowMs {
			releaseHold(e.Hold)
			s.replay = append(s.replay[:i], s.replay[i+1:]...)
			s.delay(e.Meta.DeliverAt, p)
			continue
		}
		cs, stop := s.pick(e)
		if !stop && cs != nil && s.rateSpent(now) {
			stop = true
		}
		if stop || cs == nil {
			releaseHold(e.Hold)
		}
		if stop {
			return
		}
		if cs == nil {
			i++
			continue
		}
		s.replay = append(s.replay[:i], s.replay[i+1:]...)
		s.deliver(cs, e, now)
		budget--
	}

	// New entries.
	if s.ackStateFull() {
		return
	}
	for budget > 0 {
		n := s.readSize(budget, now)
		if n == 0 {
			break // no consumer can take anything; FLOW dispatches again
		}
		if view := s.compactedViewFor(); view != nil {
			if !s.dispatchCompacted(view, &budget, now) {
				return
			}
			continue
		}
		buf := s.topic.b.reads.get()
		entries, err := s.topic.log.ReadHeld(*buf, s.readPos, n)
		if err != nil || len(entries) == 0 {
			s.topic.b.reads.put(buf, entries)
			break
		}
		more := s.dispatchNew(entries, delayOK, nowMs, &budget, now)
		s.topic.b.reads.put(buf, entries) // dispatchNew keeps no entry, only their data's holds
		if !more {
			return
		}
	}
	if budget == 0 {
		s.topic.signal() // more may be waiting; yield the lock and come back
		return
	}
	s.notifyEndOfTopic()
}

// dispatchNew delivers entries read from the subscription's read position, releasing the hold
// of each one it does not deliver; false means no consumer can take anything now. nowMs is the
// time deliver-at times are compared with (a tick ahead of now).
func (s *subscription) dispatchNew(entries []storage.Entry, delayOK bool, nowMs int64, budget *int, now time.Time) bool {
	for k, e := range entries {
		if s.isAcked(e.Pos) {
			releaseHold(e.Hold)
			s.readPos = s.topic.log.Next(e.Pos)
			continue
		}
		if delayOK && e.Meta.DeliverAt > nowMs {
			releaseHold(e.Hold)
			s.delay(e.Meta.DeliverAt, e.Pos)
			s.readPos = s.topic.log.Next(e.Pos)
			continue
		}
		cs, stop := s.pick(e)
		if !stop && cs != nil && s.rateSpent(now) {
			stop = true
		}
		if stop {
			for _, rest := range entries[k:] {
				releaseHold(rest.Hold)
			}
			return false
		}
		s.readPos = s.topic.log.Next(e.Pos)
		if cs == nil {
			releaseHold(e.Hold)
			s.addReplay(e.Pos) // Key_Shared: its consumer has no permits yet
			continue
		}
		s.deliver(cs, e, now)
		*budget--
	}
	return true
}

// releaseDelayed moves every delayed entry to the replay set: delayed delivery was turned off,
// so what waited goes now.
func (s *subscription) releaseDelayed() {
	for _, e := range s.delayed {
		if !s.isAcked(e.pos) {
			s.addReplay(e.pos)
		}
	}
	s.delayed = s.delayed[:0]
}

// ackStateFull reports whether s may read no new entries because its acknowledgement holes are
// more ranges than its cursor stores (managedLedgerMaxUnackedRangesToPersist) while the topic's
// dispatcherPauseOnAckStatePersistent is on, as upstream: what is delivered again still goes,
// and that is what closes the holes. Called with the topic's mutex held.
func (s *subscription) ackStateFull() bool {
	limit := s.topic.b.cfg.ManagedLedgerMaxUnackedRangesToPersist
	if !s.topic.limits().pauseOnAckState || limit <= 0 || s.acked.len() <= int64(limit) {
		return false // a set of n entries holds at most n ranges
	}
	return s.acked.ranges() > limit
}

// notifyEndOfTopic tells consumers of a terminated topic that they have everything, once. The
// official Go client does not know REACHED_END_OF_TOPIC and drops its whole connection on it,
// so it is sent only to clients that are not the Go client and speak protocol v9 or later.
func (s *subscription) notifyEndOfTopic() {
	t := s.topic
	if len(s.replay) > 0 || len(s.delayed) > 0 || !t.b.isTerminated(t.full) {
		return
	}
	if t.log.Last().Less(s.readPos) {
		for _, cs := range s.consumers {
			if cs.reachedEnd || cs.conn.protocolVersion < int32(pb.ProtocolVersion_v9) || cs.conn.isGoClient() {
				continue
			}
			cs.reachedEnd = true
			cs.conn.send(&pb.BaseCommand{
				Type:              pb.BaseCommand_REACHED_END_OF_TOPIC.Enum(),
				ReachedEndOfTopic: &pb.CommandReachedEndOfTopic{ConsumerId: &cs.id},
			}, nil)
		}
	}
}

// updateDue sets when the dispatcher wakes for the first delayed entry: at its time, as
// upstream's tracker sets its timer. Only a dispatch that runs for another reason releases
// entries up to a tick early (releaseDue's cutoff).
func (s *subscription) updateDue() {
	s.nextDue = time.Time{}
	if len(s.delayed) > 0 {
		s.nextDue = time.UnixMilli(s.delayed[0].at)
	}
}

// pick chooses the consumer for e. stop means no consumer can take anything now; a nil
// consumer without stop means this entry must wait but others may go (Key_Shared).
func (s *subscription) pick(e storage.Entry) (cs *consumer, stop bool) {
	switch s.subType {
	case pb.CommandSubscribe_Exclusive, pb.CommandSubscribe_Failover:
		if s.active == nil || s.active.permits <= 0 || s.active.conn.writeBlocked() {
			return nil, true
		}
		return s.active, false
	case pb.CommandSubscribe_Shared:
		if s.blockedOnUnacked { // at the subscription's maximum (unacked.go)
			return nil, true
		}
		for range len(s.consumers) {
			s.rr = (s.rr + 1) % len(s.consumers)
			c := s.consumers[s.rr]
			if s.canTake(c) {
				return c, false
			}
		}
		return nil, true
	case pb.CommandSubscribe_Key_Shared:
		if s.blockedOnUnacked || !s.anyPermits() {
			return nil, true
		}
		c := s.selector.pick(e.Meta.Key)
		if c == nil || !s.canTake(c) {
			return nil, false
		}
		return c, false
	}
	return nil, true
}

// readSize is how many new entries to read: enough for the consumers' permits (and the
// dispatch rates' tokens) at the average messages and bytes per entry delivered so far, at
// least one while any consumer has permits (0: none has), at most budget.
func (s *subscription) readSize(budget int, now time.Time) int {
	var permits int64
	switch s.subType {
	case pb.CommandSubscribe_Exclusive, pb.CommandSubscribe_Failover:
		if s.active != nil {
			permits = max(s.active.permits, 0)
		}
	default:
		for _, c := range s.consumers {
			if s.canTake(c) {
				permits += c.permits
			}
		}
	}
	if tokens := s.dispatchTokens(now); tokens >= 0 {
		permits = min(permits, max(tokens, 1))
	}
	if permits == 0 {
		return 0
	}
	n := int64(min(budget, maxReadEntries))
	if s.entryMsgs > 0 {
		n = min(n, int64(math.Ceil(float64(permits)/float64(s.entryMsgs))))
	}
	if s.entryBytes > 0 {
		n = min(n, int64(maxReadBytes/float64(s.entryBytes)))
	}
	return int(max(n, 1))
}

// movingAvg is a moving average as upstream keeps avgMessagesPerEntry: 0 until the first
// value, which sets it; then each value weighs a tenth.
type movingAvg float64

func (a *movingAvg) add(v float64) {
	if *a == 0 {
		*a = movingAvg(v)
		return
	}
	*a = *a*0.9 + movingAvg(v)*0.1
}

// canTake reports whether c has permits and room in its connection's write queue
// (backpressure.go) and is not blocked on its unacknowledged messages (unacked.go).
func (s *subscription) canTake(c *consumer) bool {
	return c.permits > 0 && !c.conn.writeBlocked() && !s.consumerBlocked(c)
}

func (s *subscription) anyPermits() bool {
	for _, c := range s.consumers {
		if c.permits > 0 {
			return true
		}
	}
	return false
}

// deliver sends e to cs and records it as pending; cs's connection takes over e's hold. It
// takes e from the dispatch rates and counts it against the unacknowledged limits.
func (s *subscription) deliver(cs *consumer, e storage.Entry, now time.Time) {
	n := int64(e.Meta.NumMessages)
	s.chargeDispatch(n, int64(len(e.Data)), now)
	s.countUnacked(cs, n)
	cs.permits -= n
	cs.msgOut += n
	cs.bytesOut += int64(len(e.Data))
	cs.avgMsgsPerEntry.add(float64(n))
	cs.lastConsumed = time.Now()
	s.msgOut += n
	s.bytesOut += int64(len(e.Data))
	s.entryMsgs.add(float64(n))
	s.entryBytes.add(float64(len(e.Data)))
	s.lastConsumed = cs.lastConsumed
	s.topic.stats.msgOut += n
	s.topic.stats.bytesOut += int64(len(e.Data))
	s.pending[e.Pos] = pendingEntry{consumer: cs, messages: n}
	cs.sendMessage(e.Pos, int32(s.topic.name.Partition), s.redeliver[e.Pos], s.messageAckSet(e.Pos), e.Data, e.Hold)
}
