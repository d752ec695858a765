package broker

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// producer is one registered producer on one connection.
type producer struct {
	id        uint64
	requestID uint64 // of the PRODUCER command; a queued WaitForExclusive answers it again
	name      string
	conn      *conn
	topic     *topic
	mode      pb.ProducerAccessMode
	userNamed bool
	// ready is false while the producer is queued behind an exclusive one. Set under the
	// topic's mutex; read without it by the connection's reader for every SEND.
	ready atomic.Bool
	// closed is set once the producer is removed (removeProducer), under the topic's mutex:
	// a connection closed while its PRODUCER was being handled must not leave it on the topic.
	closed    bool
	since     time.Time
	metadata  map[string]string
	schemaVer []byte
	receipts  receiptQueue
	lastSeq   int64 // deduplication's high-water mark for this name when it was registered
	// topicEpoch is the topic epoch a reconnecting producer held (CommandProducer's
	// topic_epoch), nil for a new one; exclusive producers are fenced by it (claimEpoch).
	topicEpoch *uint64

	msgIn, bytesIn int64 // published through this producer; guarded by the topic's mutex
	// throttled is set while the producer's publish rate holds its connection (publish_rate.go).
	throttled atomic.Bool
}

// receiptQueue releases a producer's receipts in the order of its SENDs.
type receiptQueue struct {
	mu    sync.Mutex
	slots []*receiptSlot
	// spare holds slots whose receipt went out, for the next SENDs: an unbatched producer's
	// every message would otherwise leave a slot to the garbage collector, and on a broker
	// with one CPU each collection cycle is felt in every producer's latency.
	spare []*receiptSlot
}

// maxSpareReceipts bounds a producer's spare slots: about what one holds in flight at a time
// in a busy steady state (more wait in the queue, not here).
const maxSpareReceipts = 64

type receiptSlot struct {
	cmd *pb.BaseCommand

	// The SEND_RECEIPT of a stored entry is built here (receipt), so that the slot is all a
	// SEND's answer allocates: it is one per message for unbatched producers.
	base                                  pb.BaseCommand
	r                                     pb.CommandSendReceipt
	id                                    pb.MessageIdData
	typ                                   pb.BaseCommand_Type
	producer, seq, highest, ledger, entry uint64

	// What the log's callback needs (topic.publish, stored), kept here rather than captured by
	// a closure: a closure went to the heap with every SEND. done is s.stored, made once for the
	// slot's lifetime, as the slot goes back to its queue's spares and comes out again.
	done  func(storage.Position, error)
	p     *producer
	t     *topic
	dedup *dedupState
	name  string // the producer name deduplication tracks, "" when it tracks none
	// dedupSeq is the highest sequence id the SEND covers, what deduplication records.
	dedupSeq int64
	// inline is 0 while Append runs, 1 when the entry was stored before Append returned, 2 when
	// Append returned first (topic.publish).
	inline atomic.Int32
}

// receipt returns the SEND_RECEIPT for an entry stored at pos, built in s.
func (s *receiptSlot) receipt(producer, seq, highest uint64, pos storage.Position) *pb.BaseCommand {
	s.typ = pb.BaseCommand_SEND_RECEIPT
	s.producer, s.seq, s.highest = producer, seq, highest
	s.ledger, s.entry = uint64(pos.Ledger), uint64(pos.Entry)
	s.id = pb.MessageIdData{LedgerId: &s.ledger, EntryId: &s.entry}
	s.r = pb.CommandSendReceipt{ProducerId: &s.producer, SequenceId: &s.seq, HighestSequenceId: &s.highest, MessageId: &s.id}
	s.base = pb.BaseCommand{Type: &s.typ, SendReceipt: &s.r}
	return &s.base
}

func (q *receiptQueue) reserve() *receiptSlot {
	q.mu.Lock()
	defer q.mu.Unlock()
	var s *receiptSlot
	if n := len(q.spare); n > 0 {
		s = q.spare[n-1]
		q.spare[n-1] = nil
		q.spare = q.spare[:n-1]
		s.reset()
	} else {
		s = &receiptSlot{}
		s.done = s.stored
	}
	q.slots = append(q.slots, s)
	return s
}

// reset empties a spare slot for its next SEND, keeping its done.
func (s *receiptSlot) reset() {
	done := s.done
	*s = receiptSlot{}
	s.done = done
}

// complete fills s and sends every filled receipt at the head of the queue.
func (q *receiptQueue) complete(c *conn, s *receiptSlot, cmd *pb.BaseCommand) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s.cmd = cmd
	n := 0
	for n < len(q.slots) && q.slots[n].cmd != nil {
		// send encodes the command before it returns (conn.enqueue), so the slot, which may
		// hold the command, is free again.
		c.send(q.slots[n].cmd, nil)
		if len(q.spare) < maxSpareReceipts {
			q.spare = append(q.spare, q.slots[n])
		}
		n++
	}
	if n > 0 {
		clear(q.slots[:n])
		q.slots = q.slots[n:]
	}
}

// addProducer registers p under its access mode and answers PRODUCER_SUCCESS, ready or queued
// (WaitForExclusive: answered again when it gets the topic). The answer leaves with t.mu held,
// so that a queued producer's first answer goes before the one that promotes it
// (removeProducer, on another connection's goroutine). Called with t.mu not held.
func (t *topic) addProducer(p *producer) *serverError {
	t.mu.Lock()
	defer t.mu.Unlock()
	ready, serr := t.admitProducer(p)
	if serr != nil {
		return serr
	}
	p.ready.Store(ready)
	if ready {
		t.producers[p] = struct{}{}
	} else {
		t.waiting = append(t.waiting, p)
	}
	p.conn.sendProducerSuccess(p, t.epoch)
	return nil
}

// admitProducer decides whether p may publish now (true), waits for exclusive access (false),
// or is refused. Called with t.mu held.
func (t *topic) admitProducer(p *producer) (bool, *serverError) {
	if t.closed {
		return false, errorf(pb.ServerError_ServiceNotReady, "topic %s is closing", t.full)
	}
	if p.closed {
		// Its connection closed while the PRODUCER was handled (conn.close).
		return false, errorf(pb.ServerError_ServiceNotReady, "producer %s: connection closed", p.name)
	}
	if t.b.isTerminated(t.full) {
		return false, errorf(pb.ServerError_TopicTerminatedError, "Topic %s was terminated", t.full)
	}
	if serr := t.producerLimit(); serr != nil { // limits.go
		return false, serr
	}
	if serr := t.backlogQuotaRefusal(); serr != nil { // backlog_quota.go
		return false, serr
	}
	if p.userNamed {
		for q := range t.producers {
			if q.name == p.name {
				return false, errorf(pb.ServerError_ProducerBusy, "Producer with name '%s' is already connected to topic", p.name)
			}
		}
	}
	exclusive := t.exclusiveHolder()
	switch p.mode {
	// Upstream's answers (AbstractTopic.incrementTopicEpochIfNeeded): a Shared producer is busy
	// beside an exclusive one, held or awaited; an Exclusive one is fenced by any other.
	case pb.ProducerAccessMode_Shared:
		if exclusive != nil || len(t.waiting) > 0 {
			return false, errorf(pb.ServerError_ProducerBusy, "Topic has an existing exclusive producer: %s", exclusiveName(exclusive))
		}
	case pb.ProducerAccessMode_Exclusive:
		if exclusive != nil || len(t.waiting) > 0 {
			return false, errorf(pb.ServerError_ProducerFenced, "Topic has an existing exclusive producer: %s", exclusiveName(exclusive))
		}
		if len(t.producers) > 0 {
			return false, errorf(pb.ServerError_ProducerFenced, "Topic has existing shared producers")
		}
		if serr := t.claimEpoch(p); serr != nil {
			return false, serr
		}
	case pb.ProducerAccessMode_ExclusiveWithFencing:
		for q := range t.producers {
			t.fence(q)
		}
		for _, q := range t.waiting {
			q.conn.sendError(q.requestID, pb.ServerError_ProducerFenced, "fenced by an ExclusiveWithFencing producer")
			q.conn.forgetProducer(q)
		}
		t.waiting = nil
		if serr := t.claimEpoch(p); serr != nil {
			return false, serr
		}
	case pb.ProducerAccessMode_WaitForExclusive:
		if len(t.producers) > 0 || len(t.waiting) > 0 {
			return false, nil
		}
		if serr := t.claimEpoch(p); serr != nil {
			return false, serr
		}
	}
	return true, nil
}

// claimEpoch gives an exclusive producer the topic's next epoch, or, when it reconnects with the
// epoch it held (topic_epoch), that epoch again, as upstream; one whose epoch another exclusive
// producer has moved on since is fenced. Called with t.mu held.
func (t *topic) claimEpoch(p *producer) *serverError {
	if p.topicEpoch == nil {
		t.epoch++
		return nil
	}
	if *p.topicEpoch < t.epoch {
		return errorf(pb.ServerError_ProducerFenced, "Topic epoch has already moved. Current epoch: %d, Producer epoch: %d", t.epoch, *p.topicEpoch)
	}
	t.epoch = *p.topicEpoch
	return nil
}

// exclusiveName names the holder of exclusive access in refusals ("" when producers only wait
// for it).
func exclusiveName(holder *producer) string {
	if holder == nil {
		return ""
	}
	return holder.name
}

// exclusiveHolder is the producer holding exclusive access, if any. Called with t.mu held.
func (t *topic) exclusiveHolder() *producer {
	for q := range t.producers {
		if q.mode != pb.ProducerAccessMode_Shared {
			return q
		}
	}
	return nil
}

// fence closes q for good: an ExclusiveWithFencing producer took the topic. Called with t.mu held.
func (t *topic) fence(q *producer) {
	delete(t.producers, q)
	q.conn.forgetProducer(q)
	q.conn.sendCloseProducer(q.id, false, "fenced by an ExclusiveWithFencing producer")
}

// removeProducer unregisters p and hands the topic to the next queued exclusive producer.
func (t *topic) removeProducer(p *producer) {
	p.unthrottle()
	t.mu.Lock()
	defer t.mu.Unlock()
	p.closed = true
	t.lastActive = t.b.now() // inactive_topics.go
	if _, ok := t.producers[p]; !ok {
		for i, q := range t.waiting {
			if q == p {
				t.waiting = append(t.waiting[:i], t.waiting[i+1:]...)
				break
			}
		}
		return
	}
	delete(t.producers, p)
	if len(t.producers) > 0 || len(t.waiting) == 0 {
		return
	}
	next := t.waiting[0]
	t.waiting = t.waiting[1:]
	next.ready.Store(true)
	t.producers[next] = struct{}{}
	t.epoch++
	next.lastSeq = t.lastSequenceIDLocked(next.name)
	next.conn.sendProducerSuccess(next, t.epoch)
}

func (c *conn) sendProducerSuccess(p *producer, epoch uint64) {
	ps := &pb.CommandProducerSuccess{
		RequestId:      &p.requestID,
		ProducerName:   &p.name,
		LastSequenceId: &p.lastSeq,
		SchemaVersion:  p.schemaVer,
		ProducerReady:  ptr(p.ready.Load()),
	}
	if p.mode != pb.ProducerAccessMode_Shared {
		ps.TopicEpoch = &epoch
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER_SUCCESS.Enum(), ProducerSuccess: ps}, nil)
}

// sendCloseProducer tells the client the broker closed its producer. allowReconnect=false is
// the PIP-139 extension (field 1000); upstream-compat mode leaves extensions out.
func (c *conn) sendCloseProducer(id uint64, allowReconnect bool, reason string) {
	c.noteClosedByBroker(id)
	cp := &pb.CommandCloseProducer{ProducerId: &id, RequestId: ptr(uint64(0))}
	if !c.b.cfg.CompatUpstream {
		if !allowReconnect {
			cp.AllowReconnect = ptr(false)
		}
		if reason != "" {
			cp.Reason = &reason
		}
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_CLOSE_PRODUCER.Enum(), CloseProducer: cp}, nil)
}

// sendError builds the SEND_ERROR that answers send, of its own memory: the reader decodes
// the next SEND into send's (wire.Reader.ReuseSendCommands), and an answer may wait in the
// receipt queue for earlier SENDs' receipts.
func sendError(send *pb.CommandSend, code pb.ServerError, msg string) *pb.BaseCommand {
	return sendErrorFor(send.GetProducerId(), send.GetSequenceId(), code, msg)
}

// sendErrorFor builds the SEND_ERROR for producer's SEND of sequence id seq.
func sendErrorFor(producer, seq uint64, code pb.ServerError, msg string) *pb.BaseCommand {
	return &pb.BaseCommand{Type: pb.BaseCommand_SEND_ERROR.Enum(), SendError: &pb.CommandSendError{
		ProducerId: &producer, SequenceId: &seq, Error: code.Enum(), Message: &msg,
	}}
}

// fail answers send with an error, after the answers to p's earlier SENDs.
func (p *producer) fail(send *pb.CommandSend, code pb.ServerError, msg string) {
	p.receipts.complete(p.conn, p.receipts.reserve(), sendError(send, code, msg))
}

// forgetProducer drops p from the connection so its id can be registered again.
func (c *conn) forgetProducer(p *producer) {
	c.mu.Lock()
	if c.producers[p.id] == p {
		delete(c.producers, p.id)
	}
	c.mu.Unlock()
	p.unthrottle() // a producer closed while throttled holds its connection no more
}

// noteClosedByBroker remembers that the broker closed producer id, so that SENDs the client
// wrote before it read the CLOSE_PRODUCER are ignored rather than taken for a protocol
// violation (upstream's recentlyClosedProducers). A new PRODUCER with the id forgets it.
func (c *conn) noteClosedByBroker(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if len(c.closedProducers) >= maxClosedProducers {
		// Ids are the client's to choose: keep the set small whatever it does.
		for k, at := range c.closedProducers {
			if now.Sub(at) > closedProducerMemory || len(c.closedProducers) >= maxClosedProducers {
				delete(c.closedProducers, k)
			}
		}
	}
	if c.closedProducers == nil {
		c.closedProducers = make(map[uint64]time.Time)
	}
	c.closedProducers[id] = now
}

// closedByBroker reports whether the broker recently closed producer id on c.
func (c *conn) closedByBroker(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.closedProducers[id]
	return ok && time.Since(at) <= closedProducerMemory
}

// How long, and how many, closed producers a connection remembers: long enough for a client
// to read CLOSE_PRODUCER however busy it is.
const (
	closedProducerMemory = time.Minute
	maxClosedProducers   = 1024
)

// generatedProducerName follows upstream's <cluster>-<broker>-<counter> shape.
func (b *Broker) generatedProducerName() string {
	return b.cfg.ClusterName + "-0-" + strconv.FormatUint(b.nextID.Add(1), 10)
}
