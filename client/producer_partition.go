package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// partitionProducer produces to one topic or partition. Its state is guarded by mu; its one
// goroutine (run) flushes batches on time, expires sends and reconnects. The connection's
// reader calls receipt/sendError/closed* (never blocking).
type partitionProducer struct {
	cl        *Client
	opts      *ProducerOptions
	topic     string
	partition int32
	id        uint64
	log       *slog.Logger
	schema    *pb.Schema

	sem       chan struct{} // one token per message not yet receipted
	reconnect chan string   // asks run to reconnect; carries an assigned broker URL or ""
	stop      chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup

	mu        sync.Mutex
	cnx       *conn
	name      string
	connected bool // has connected at least once
	// resumedAt is the last_sequence_id the broker reported when the producer first
	// connected (−1: none): what an earlier producer of the same name stored. See add.
	resumedAt     int64
	epoch         uint64
	topicEpoch    *uint64
	seq           uint64
	batch         batchBuilder
	pending       []*sendOp
	spare         spareFrames
	enc           sendScratch
	closeErr      error // set once closed for good
	schemaVersion []byte
}

func newPartitionProducer(ctx context.Context, cl *Client, opts *ProducerOptions, topic string, partition int32) (*partitionProducer, error) {
	p := &partitionProducer{
		cl:        cl,
		opts:      opts,
		topic:     topic,
		partition: partition,
		id:        cl.nextProducerID(),
		sem:       make(chan struct{}, opts.MaxPendingMessages),
		reconnect: make(chan string, 1),
		stop:      make(chan struct{}),
		name:      opts.Name,
		resumedAt: -1,
	}
	p.log = cl.log.With("topic", topic, "producer", p.id)
	if opts.Schema != nil {
		p.schema = opts.Schema.info()
	}
	if err := p.connect(ctx, ""); err != nil {
		return nil, err
	}
	p.wg.Add(1)
	go p.run()
	return p, nil
}

// connect registers the producer on the broker that serves its topic (or on assigned).
func (p *partitionProducer) connect(ctx context.Context, assigned string) error {
	var c *conn
	var err error
	if assigned != "" {
		c, err = p.cl.pool.get(ctx, assigned, assigned)
	} else {
		c, err = p.cl.connFor(ctx, p.topic)
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	cmd := &pb.CommandProducer{
		Topic:                    proto.String(p.topic),
		ProducerId:               proto.Uint64(p.id),
		Epoch:                    proto.Uint64(p.epoch),
		UserProvidedProducerName: proto.Bool(p.opts.Name != ""),
		ProducerAccessMode:       pb.ProducerAccessMode(p.opts.AccessMode).Enum(),
		InitialSubscriptionName:  proto.String(p.opts.InitialSubscriptionName),
		Metadata:                 propsToPB(p.opts.Properties),
		Schema:                   p.schema,
		TopicEpoch:               p.topicEpoch,
	}
	if p.name != "" {
		cmd.ProducerName = proto.String(p.name)
	}
	if p.opts.TopicPurpose != "" {
		cmd.TopicPurpose = proto.String(p.opts.TopicPurpose)
	}
	p.epoch++
	p.mu.Unlock()
	if err := c.addProducer(p.id, p); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok && p.opts.AccessMode == AccessWaitForExclusive {
		// Upstream waits without a timeout until the producer gets its turn.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 100*365*24*time.Hour)
		defer cancel()
	}
	resp, err := c.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: cmd})
	if err != nil {
		c.removeProducer(p.id, p)
		if errors.Is(err, ErrTimeout) || errors.Is(err, context.Canceled) {
			// The broker may still create it: tell it we gave up.
			c.writeCmd(&pb.BaseCommand{Type: pb.BaseCommand_CLOSE_PRODUCER.Enum(),
				CloseProducer: &pb.CommandCloseProducer{ProducerId: proto.Uint64(p.id), RequestId: proto.Uint64(p.cl.nextRequestID())}})
		}
		return fmt.Errorf("create producer on %s: %w", p.topic, err)
	}
	ps := resp.GetProducerSuccess()
	if ps == nil {
		c.removeProducer(p.id, p)
		return fmt.Errorf("%w: PRODUCER answered with %v", ErrProtocol, resp.GetType())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closeErr != nil {
		c.removeProducer(p.id, p)
		return p.closeErr
	}
	p.name = ps.GetProducerName()
	p.schemaVersion = ps.GetSchemaVersion()
	if ps.TopicEpoch != nil {
		p.topicEpoch = proto.Uint64(ps.GetTopicEpoch())
	}
	if !p.connected {
		p.connected = true
		if last := ps.GetLastSequenceId(); last >= 0 {
			p.seq = uint64(last) + 1
			p.resumedAt = last
		}
	}
	if c.isClosed() {
		// Closed between the answer and now; its close notice may have missed us.
		return c.closedError()
	}
	p.cnx = c
	for _, op := range p.pending {
		c.write(op.frame)
	}
	p.log.Debug("producer ready", "name", p.name, "resent", len(p.pending))
	return nil
}

func (p *partitionProducer) run() {
	defer p.wg.Done()
	var tick <-chan time.Time
	if !p.opts.DisableBatching {
		t := time.NewTicker(p.opts.BatchingMaxPublishDelay)
		defer t.Stop()
		tick = t.C
	}
	expire := time.NewTicker(max(100*time.Millisecond, min(time.Second, p.opts.SendTimeout/4)))
	defer expire.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick:
			p.mu.Lock()
			if !p.batch.empty() && time.Since(p.batch.created) >= p.opts.BatchingMaxPublishDelay {
				p.flushBatchLocked()
			}
			p.mu.Unlock()
		case <-expire.C:
			p.expire()
		case assigned := <-p.reconnect:
			p.reconnectLoop(assigned)
		}
	}
}

func (p *partitionProducer) reconnectLoop(assigned string) {
	reconnect(p.stop, assigned, p.log, "producer", p.connect, p.closeForGood)
}

func (p *partitionProducer) requestReconnect(assigned string) {
	select {
	case p.reconnect <- assigned:
	default:
	}
}

// expire fails sends older than SendTimeout, oldest first.
func (p *partitionProducer) expire() {
	if p.opts.SendTimeout < 0 {
		return
	}
	p.mu.Lock()
	var expired []*sendOp
	for len(p.pending) > 0 && time.Since(p.pending[0].created) > p.opts.SendTimeout {
		expired = append(expired, p.pending[0])
		p.pending = p.pending[1:]
	}
	p.mu.Unlock()
	for _, op := range expired {
		p.failOp(op, fmt.Errorf("%w: no receipt within %v", ErrTimeout, p.opts.SendTimeout))
	}
}

func (p *partitionProducer) maxMessageSize() int {
	if p.cnx != nil {
		return p.cnx.maxMessageSize
	}
	return wire.DefaultMaxMessageSize
}

func (p *partitionProducer) receipt(r *pb.CommandSendReceipt) {
	p.mu.Lock()
	if len(p.pending) == 0 {
		p.mu.Unlock()
		return
	}
	op := p.pending[0]
	seq := r.GetSequenceId()
	switch {
	case seq < op.seq:
		p.mu.Unlock() // a receipt for a send that already timed out
		return
	case seq > op.seq:
		c := p.cnx
		p.mu.Unlock()
		p.log.Warn("receipt out of order; re-registering", "got", seq, "want", op.seq)
		p.resetOn(c)
		return
	}
	p.pending = p.pending[1:]
	// Receipted: nothing re-sends it, and the broker has read it, so it was written.
	p.spare.keep(op.frame, len(p.pending) > 0)
	op.frame = nil
	p.mu.Unlock()
	id := r.GetMessageId()
	for i, f := range op.futures {
		mid := MessageID{Ledger: int64(id.GetLedgerId()), Entry: int64(id.GetEntryId()), Partition: p.partition, BatchIndex: -1}
		if op.batch {
			mid.BatchIndex, mid.BatchSize = int32(i), int32(op.n)
		}
		f.complete(mid, nil)
		<-p.sem
	}
}

// resetOn drops the registration on c and registers again, re-sending what is pending.
func (p *partitionProducer) resetOn(c *conn) {
	if c == nil {
		return
	}
	p.mu.Lock()
	if p.cnx == c {
		p.cnx = nil
	}
	p.mu.Unlock()
	c.removeProducer(p.id, p)
	c.writeCmd(&pb.BaseCommand{Type: pb.BaseCommand_CLOSE_PRODUCER.Enum(),
		CloseProducer: &pb.CommandCloseProducer{ProducerId: proto.Uint64(p.id), RequestId: proto.Uint64(p.cl.nextRequestID())}})
	p.requestReconnect("")
}

func (p *partitionProducer) sendError(e *pb.CommandSendError) {
	err := serverError(e.GetError(), e.GetMessage())
	p.mu.Lock()
	c := p.cnx
	var op *sendOp
	if len(p.pending) > 0 && p.pending[0].seq == e.GetSequenceId() {
		op = p.pending[0]
	}
	switch e.GetError() {
	case pb.ServerError_TopicTerminatedError:
		p.mu.Unlock()
		p.closeForGood(err)
		return
	case pb.ServerError_NotAllowedError, pb.ServerError_ChecksumError:
		// The broker refused this send and goes on with the next ones.
		if op != nil {
			p.pending = p.pending[1:]
		}
		p.mu.Unlock()
		if op != nil {
			p.failOp(op, err)
		}
		return
	}
	p.mu.Unlock()
	p.log.Warn("send failed; re-registering", "err", err)
	p.resetOn(c)
}

func (p *partitionProducer) closedByBroker(cp *pb.CommandCloseProducer) {
	if !cp.GetAllowReconnect() {
		p.closeForGood(&BrokerClosedError{Topic: p.topic, Reason: cp.GetReason()})
		return
	}
	p.mu.Lock()
	p.cnx = nil
	p.mu.Unlock()
	assigned := cp.GetAssignedBrokerServiceUrl()
	if p.cl.useTLS() {
		assigned = cp.GetAssignedBrokerServiceUrlTls()
	}
	p.requestReconnect(assigned)
}

func (p *partitionProducer) connectionClosed(c *conn) {
	p.mu.Lock()
	mine := p.cnx == c
	if mine {
		p.cnx = nil
	}
	p.mu.Unlock()
	if mine {
		p.requestReconnect("")
	}
}

// closeForGood fails everything pending with err and refuses further sends.
func (p *partitionProducer) closeForGood(err error) {
	p.mu.Lock()
	if p.closeErr != nil {
		p.mu.Unlock()
		return
	}
	p.closeErr = err
	c := p.cnx
	p.cnx = nil
	pending := p.pending
	p.pending = nil
	batch := p.batch.futures
	p.batch.reset()
	p.mu.Unlock()
	if c != nil {
		c.removeProducer(p.id, p)
	}
	for _, op := range pending {
		p.failOp(op, err)
	}
	for _, f := range batch {
		f.complete(MessageID{}, err)
		<-p.sem
	}
	p.stopOnce.Do(func() { close(p.stop) })
}

func (p *partitionProducer) failOp(op *sendOp, err error) {
	for _, f := range op.futures {
		f.complete(MessageID{}, err)
		<-p.sem
	}
}

// add queues one message. The caller holds a sem token for it.
func (p *partitionProducer) add(m *Message, f *SendFuture) {
	payload := m.Payload
	if m.Value != nil && p.opts.Schema != nil {
		var err error
		if payload, err = p.opts.Schema.Encode(m.Value); err != nil {
			f.complete(MessageID{}, err)
			<-p.sem
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closeErr != nil {
		f.complete(MessageID{}, p.closeErr)
		<-p.sem
		return
	}
	seq := p.seq
	if m.SequenceID != nil {
		seq = uint64(*m.SequenceID)
	}
	p.seq = max(p.seq, seq+1)
	at := m.deliverAt()
	// A message numbered at or below what the broker reported stored under this name when
	// the producer connected (a resumed run sending again what it may have stored) goes
	// alone: a deduplicating broker judges a batch as a whole, by its lowest sequence id
	// (upstream, which would drop the new messages of a batch straddling its mark with the old
	// ones) or its highest (letterbox, which would store the old ones again). Alone, each is
	// judged by its own.
	old := m.SequenceID != nil && int64(seq) <= p.resumedAt
	if p.opts.DisableBatching || !at.IsZero() || len(m.SchemaVersion) > 0 || old {
		p.flushBatchLocked() // keep order
		meta := p.enc.singleMeta(seq)
		meta.Properties, meta.SchemaVersion = propsToPB(m.Properties), m.SchemaVersion
		if m.Key != "" {
			meta.PartitionKey = proto.String(m.Key)
		}
		if m.OrderingKey != "" {
			meta.OrderingKey = []byte(m.OrderingKey)
		}
		if !m.EventTime.IsZero() {
			meta.EventTime = proto.Uint64(toMillis(m.EventTime))
		}
		if !at.IsZero() {
			meta.DeliverAtTime = proto.Int64(at.UnixMilli())
		}
		frame, err := p.encodeSend(meta, payload, 1)
		op := &sendOp{seq: seq, n: 1, frame: frame, futures: []*SendFuture{f}, created: time.Now()}
		if err != nil {
			p.failOp(op, err)
			return
		}
		p.enqueueLocked(op)
		return
	}
	limit := min(p.opts.BatchingMaxSize, p.maxMessageSize())
	if !p.batch.empty() && len(p.batch.body)+len(payload)+64 > limit {
		p.flushBatchLocked()
	}
	if err := p.batch.add(m, payload, seq, f); err != nil {
		f.complete(MessageID{}, err)
		<-p.sem
		return
	}
	if p.batch.n >= p.opts.BatchingMaxMessages || len(p.batch.body) >= limit {
		p.flushBatchLocked()
	}
}

// flush sends the current batch and waits until everything pending is receipted.
func (p *partitionProducer) flush(ctx context.Context) error {
	p.mu.Lock()
	p.flushBatchLocked()
	var last *SendFuture
	if n := len(p.pending); n > 0 {
		fs := p.pending[n-1].futures
		last = fs[len(fs)-1]
	}
	err := p.closeErr
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if last == nil {
		return nil
	}
	_, err = last.Wait(ctx)
	return err
}

// close flushes (bounded by ctx), unregisters from the broker and stops run.
func (p *partitionProducer) close(ctx context.Context) {
	if err := p.flush(ctx); err != nil && !errors.Is(err, ErrClosed) {
		p.log.Debug("flush on close", "err", err)
	}
	p.mu.Lock()
	c := p.cnx
	p.mu.Unlock()
	p.closeForGood(ErrClosed)
	if c != nil {
		c.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_CLOSE_PRODUCER.Enum(),
			CloseProducer: &pb.CommandCloseProducer{ProducerId: proto.Uint64(p.id)}})
	}
	p.wg.Wait()
}
