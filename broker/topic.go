package broker

import (
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// topic is one non-partitioned topic or one partition. Its mutex guards producers,
// subscriptions, consumers and cursors; its dispatcher delivers entries to consumers whenever
// something changed (new entries, permits, acks, redeliveries, due delayed messages).
type topic struct {
	b    *Broker
	name naming.Topic
	full string
	log  storage.Log
	// dispatching names the dispatcher for a contained panic (dispatchRound), built once
	// rather than on every round.
	dispatching string

	// The dispatcher is a goroutine started by signal and gone once a round found nothing new,
	// not one per topic for its lifetime: a broker of 10,000 mostly idle topics kept 10,000
	// parked goroutines and timers, and scanning their stacks was over a third of every
	// garbage collection's marking. dmu guards the fields below it.
	dmu     sync.Mutex
	running bool        // a dispatcher goroutine is running
	again   bool        // signalled while it ran: it runs another round
	stopped bool        // the topic is closing: no dispatcher starts any more
	timer   *time.Timer // signals when a delayed message or a throttle is next due; nil: none yet

	done chan struct{} // closed when the topic closes, for compaction
	wg   sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	producers map[*producer]struct{}
	waiting   []*producer // WaitForExclusive producers, in arrival order
	epoch     uint64      // bumped whenever exclusive ownership changes
	subs      map[string]*subscription
	parked    map[string]*subscription // readers' subscriptions between a seek and their return (reader_seek.go)
	dedup     *dedupState              // nil until deduplication is first needed (dedup.go)
	// compaction is nil until compaction or a compacted read first needs it (compaction.go).
	compaction *compactionState
	// deletedSubs are durable subscriptions removed since the last cursor flush.
	deletedSubs []string
	created     time.Time
	opened      time.Time         // when this broker opened the log: its current ledger's creation, as far as stats know
	props       map[string]string // topic properties; PropertyTopicPurpose among them
	stats       topicStats
	// wake is the earliest time a delayed message becomes due, a throttled subscription may
	// deliver again or throttled producers may be let go; the dispatcher sleeps until then.
	wake time.Time

	lim            topicLimits      // its policies, resolved (topic_limits.go)
	pub            publishLimiter   // its publish rate (publish_rate.go)
	dispatchLimit  dispatchLimiter  // its dispatch rate (dispatch_rate.go)
	group          *groupLimiter    // its namespace's resource group's rates, or nil (resourcegroup_rate.go)
	inRate         publishRateMeter // its publish rate as measured, for relative dispatch rates
	subscribeLimit subscribeLimiter // its subscribe rate (subscribe_rate.go)
	// lastActive is when it was last seen with clients (inactive_topics.go).
	lastActive time.Time
}

type topicStats struct {
	msgIn, bytesIn   int64
	msgOut, bytesOut int64
	lastPublish      time.Time
}

func newTopic(b *Broker, name naming.Topic, log storage.Log) *topic {
	t := &topic{
		b:           b,
		name:        name,
		full:        name.String(),
		dispatching: "dispatching " + name.String(),
		log:         log,
		done:        make(chan struct{}),
		producers:   make(map[*producer]struct{}),
		subs:        make(map[string]*subscription),
		created:     time.Now(),
		opened:      time.Now(),
	}
	return t
}

// locked runs fn with t.mu held. The unlock is deferred, so a panic in fn (contained by the
// connection or goroutine running it, panic.go) does not leave the topic locked for everyone.
func (t *topic) locked(fn func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn()
}

// signal asks the dispatcher to run a round, starting it if none is running; it never blocks.
func (t *topic) signal() {
	t.dmu.Lock()
	defer t.dmu.Unlock()
	switch {
	case t.stopped:
	case t.running:
		t.again = true
	default:
		t.running = true
		t.wg.Add(1)
		go t.dispatcher()
	}
}

// dispatcher runs rounds until one ran with no signal since it started, then sets the timer
// for what is due next and ends.
func (t *topic) dispatcher() {
	defer t.wg.Done()
	for {
		wake := t.dispatchRound()
		t.dmu.Lock()
		if t.again && !t.stopped {
			t.again = false
			t.dmu.Unlock()
			continue
		}
		t.running = false
		t.wakeAt(wake)
		t.dmu.Unlock()
		return
	}
}

// wakeAt has the timer signal at wake, or not at all when it is zero. Called with dmu held.
func (t *topic) wakeAt(wake time.Time) {
	switch {
	case t.stopped:
	case wake.IsZero():
		if t.timer != nil {
			t.timer.Stop()
		}
	case t.timer == nil:
		t.timer = time.AfterFunc(max(wake.Sub(t.b.now()), time.Millisecond), t.signal)
	default:
		t.timer.Reset(max(wake.Sub(t.b.now()), time.Millisecond))
	}
}

// wakeAfter takes the wake of a round run outside the dispatcher (conn.runLater): the timer is
// set for it, without a dispatcher and another round for the timer's sake; a dispatcher
// running meanwhile runs once more and sets it after.
func (t *topic) wakeAfter(wake time.Time) {
	t.dmu.Lock()
	defer t.dmu.Unlock()
	if t.running {
		t.again = true
		return
	}
	t.wakeAt(wake)
}

// stopDispatch lets no dispatcher start any more and waits for the one running, if any, and
// for compaction (done). Called once, by whoever closes the topic, after setting closed.
func (t *topic) stopDispatch() {
	t.dmu.Lock()
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
	}
	t.dmu.Unlock()
	close(t.done)
	t.wg.Wait()
}

// dispatchRound runs every subscription's dispatcher once and returns when a delayed message
// is next due. A panic is contained (panic.go): the deferred unlock releases the topic first,
// and the connection a failed delivery was for is closed.
func (t *topic) dispatchRound() (wake time.Time) {
	defer t.b.recoverPanic(t.dispatching, nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return time.Time{} // a reader's round (conn.runLater) after close: the log is closing
	}
	t.dispatchAll(t.b.now())
	return t.wake
}

// dispatchAll runs every subscription's dispatcher. Called with t.mu held.
func (t *topic) dispatchAll(now time.Time) {
	t.wake = time.Time{}
	wakeAt := func(at time.Time) {
		if !at.IsZero() && (t.wake.IsZero() || at.Before(t.wake)) {
			t.wake = at
		}
	}
	if !t.pub.retryAt.IsZero() && !now.Before(t.pub.retryAt) {
		t.releasePublishers(now) // publish_rate.go
	}
	wakeAt(t.pub.retryAt)
	for _, s := range t.subs {
		s.dispatch(now)
		wakeAt(s.nextDue)
		wakeAt(s.retryAt)
	}
	if !t.name.Persistent {
		// Non-persistent topics keep nothing: what no consumer could take now is dropped.
		end := t.log.Next(t.log.Last())
		for _, s := range t.subs {
			s.dropUndelivered(end)
		}
		t.log.DropBefore(end)
		return
	}
	t.trim()
}

// trim releases what no subscription needs any more, as upstream's default policy (no
// retention): entries every subscription has acknowledged, and on a topic without
// subscriptions everything, but only closed ledgers, whole (ledgers.go): the open ledger stays
// readable, as upstream's.
func (t *topic) trim() { t.trimLog(false) }

// trimLog is trim; with checkAge it calls the log's TrimBefore even when nothing can be freed,
// so that a ledger past its maximum age is closed. Called with t.mu held.
func (t *topic) trimLog(checkAge bool) {
	low := t.log.Next(t.log.Last())
	for _, subs := range []map[string]*subscription{t.subs, t.parked} {
		for _, s := range subs {
			if p := t.log.Next(s.markDelete); p.Less(low) {
				low = p
			}
		}
	}
	now := time.Now()
	low = t.retainFrom(low, now)
	if t.b.memoryPressure() {
		t.relieve(low)
	} else {
		low = t.keepUnread(low, now) // ledgers.go
	}
	if checkAge || t.log.First().Less(low) {
		t.log.TrimBefore(low)
	}
}

// publish stores one entry and sends the producer's receipt once it is stored. The log takes
// over the hold of data's buffer (nil: not a pooled one).
func (t *topic) publish(p *producer, send *pb.CommandSend, meta storage.Meta, data []byte, hold *wire.Buffer, check sendCheck) {
	var h storage.Holder
	if hold != nil {
		h = hold
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.b.isTerminated(t.full) {
		releaseHold(h)
		// Through the receipt queue: earlier SENDs still being stored are answered first.
		p.fail(send, pb.ServerError_TopicTerminatedError, "Topic "+t.full+" was terminated")
		return
	}
	if t.quotaExceeded() {
		// Not stored, no receipt: the producer is closed, and its client sends this again
		// once it may produce again (quota.go).
		releaseHold(h)
		t.holdProducers()
		return
	}
	if code, msg := t.refuseSend(check); msg != "" { // topic_limits.go
		releaseHold(h)
		p.fail(send, code, msg)
		return
	}
	t.chargePublish(p, int64(meta.NumMessages), len(data)) // publish_rate.go
	t.stats.msgIn += int64(meta.NumMessages)
	t.stats.bytesIn += int64(len(data))
	p.msgIn += int64(meta.NumMessages)
	p.bytesIn += int64(len(data))
	t.stats.lastPublish = time.Now()
	seq, highest := send.GetSequenceId(), send.GetHighestSequenceId()
	// Receipts leave in SEND order even when a duplicate is answered before earlier SENDs
	// are durable.
	slot := p.receipts.reserve()
	dedup := t.dedupFor()
	if dedup != nil && meta.ProducerName != "" && !dedup.accept(meta.ProducerName, int64(meta.SequenceID)) {
		releaseHold(h)
		p.receipts.complete(p.conn, slot, duplicateReceipt(p, send))
		return
	}
	// The log answers through the slot (receiptSlot.stored), which holds what the answer needs.
	slot.p, slot.t, slot.dedup, slot.name, slot.dedupSeq = p, t, dedup, meta.ProducerName, int64(meta.SequenceID)
	slot.seq, slot.highest = seq, highest
	// The dispatch of a stored entry: the reader handling this SEND runs it once it has
	// handled the frames it has read (conn.dispatchLater) when the log stores before Append
	// returns, as memory does; a log that completes later has the topic's dispatcher run it.
	// Nothing else reserves a slot of p while this runs (its SENDs are read by this goroutine),
	// so the slot is still this SEND's here even when its receipt already went out.
	t.log.Append(meta, data, h, slot.done)
	if !slot.inline.CompareAndSwap(0, 2) {
		p.conn.dispatchLater(t)
	}
}

// stored answers the SEND the slot was reserved for once the log stored its entry at pos, or
// failed to. Once it completes the slot, the slot may serve the producer's next SEND: nothing
// here reads it after that.
func (s *receiptSlot) stored(pos storage.Position, err error) {
	p, t, dedup, name, seq := s.p, s.t, s.dedup, s.name, s.seq
	// A durable log completes on its own goroutine: contain a panic here (panic.go).
	defer t.b.recoverPanic("answering a SEND", p.conn)
	if err != nil {
		if dedup != nil {
			dedup.failed(name)
		}
		p.receipts.complete(p.conn, s, sendErrorFor(p.id, seq, pb.ServerError_PersistenceError, err.Error()))
		return
	}
	if dedup != nil {
		dedup.stored(name, s.dedupSeq, pos)
		t.markDirty() // the flusher persists the deduplication state
	}
	inline := s.inline.CompareAndSwap(0, 1)
	p.receipts.complete(p.conn, s, s.receipt(p.id, seq, s.highest, pos))
	if !inline {
		t.signal()
	}
}

// property returns one topic property.
func (t *topic) property(key string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.props[key]
}

// removeSubscription deletes s from t, durably. Called with t.mu held.
func (t *topic) removeSubscription(s *subscription) {
	if t.subs[s.name] != s {
		return
	}
	delete(t.subs, s.name)
	if s.durable {
		t.deletedSubs = append(t.deletedSubs, s.name)
		t.markDirty()
	}
}

// close stops the dispatcher and closes the log.
func (t *topic) close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.mu.Unlock()
	t.stopDispatch()
	t.log.Close()
}

// lastMessageID is GET_LAST_MESSAGE_ID's answer: the last entry with, for a batch, the index of
// its last message, as upstream reports it.
func (t *topic) lastMessageID() *pb.MessageIdData {
	last := t.log.Last()
	id := &pb.MessageIdData{LedgerId: ptr(uint64(last.Ledger)), EntryId: ptr(uint64(last.Entry))}
	// GetHeld, not Get: readers ask this often, and Get would keep the entry's buffer from
	// ever being reused.
	if e, ok := t.log.GetHeld(last); ok {
		releaseHold(e.Hold)
		if e.Meta.Batched {
			id.BatchIndex = ptr(e.Meta.NumMessages - 1)
		}
	}
	if t.name.Partition >= 0 {
		id.Partition = ptr(int32(t.name.Partition))
	}
	return id
}
