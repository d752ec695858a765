package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// partitionConsumer is the subscription of one consumer on one topic or partition. Its one
// goroutine (run) reconnects; the connection's reader calls message/closed* (never blocking);
// the parent Consumer's dispatcher hands its messages to the application.
type partitionConsumer struct {
	cl        *Client
	parent    *Consumer
	topic     string
	partition int32
	id        uint64
	log       *slog.Logger
	purpose   string

	// epoch changes on every (re)subscribe; queued messages of an older epoch are dropped,
	// since the broker redelivers whatever was not acknowledged.
	epoch atomic.Uint64
	// For ReceiverQueueBytes, and kept only when it is set: the payload bytes of this
	// partition's messages in the consumer's queue, and the running average of their sizes
	// (noteSizes).
	queuedBytes atomic.Int64
	avgSize     atomic.Int64

	reconnect chan string
	stop      chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup

	mu       sync.Mutex
	cnx      *conn
	closeErr error
	permits  int // delivered since the last FLOW
	// window is how many permits the broker may hold for this consumer: ReceiverQueueSize,
	// or what ReceiverQueueBytes holds of messages of the size seen (fit).
	window         int
	startID        MessageID
	startInclusive bool
	hasStart       bool // readers: filter messages before startID
	reachedEnd     bool
	baseline       MessageID // readers from latest: the last id when created
	seeking        bool      // a SEEK was sent; cleared by the resubscribe that follows
	// Readers after SeekByTime skip messages published before minPublish, on the subscription
	// of epoch minPublishEpoch only: seekTime waits for the resubscribe that follows the seek,
	// so that a message of the old subscription still being decoded can neither pass the
	// filter nor end it.
	seekTime        time.Time
	minPublish      time.Time
	minPublishEpoch uint64

	acks ackTracker
}

func newPartitionConsumer(ctx context.Context, parent *Consumer, topic string, partition int32, purpose string) (*partitionConsumer, error) {
	pc := &partitionConsumer{
		cl:        parent.cl,
		parent:    parent,
		topic:     topic,
		partition: partition,
		id:        parent.cl.nextConsumerID(),
		purpose:   purpose,
		reconnect: make(chan string, 1),
		stop:      make(chan struct{}),
	}
	pc.log = pc.cl.log.With("topic", topic, "consumer", pc.id)
	o := &parent.opts
	if o.nonDurable {
		pc.startID, pc.startInclusive = o.startID, o.startInclusive
		pc.hasStart = !o.startID.isEarliest() && !o.startID.isLatest()
	}
	pc.acks.init(pc)
	if err := pc.connect(ctx, ""); err != nil {
		return nil, err
	}
	pc.wg.Add(1)
	go pc.run()
	return pc, nil
}

func (pc *partitionConsumer) connect(ctx context.Context, assigned string) error {
	var c *conn
	var err error
	if assigned != "" {
		c, err = pc.cl.pool.get(ctx, assigned, assigned)
	} else {
		c, err = pc.cl.connFor(ctx, pc.topic)
	}
	if err != nil {
		return err
	}
	o := &pc.parent.opts
	sub := &pb.CommandSubscribe{
		Topic:                      proto.String(pc.topic),
		Subscription:               proto.String(o.SubscriptionName),
		SubType:                    pb.CommandSubscribe_SubType(o.Type).Enum(),
		ConsumerId:                 proto.Uint64(pc.id),
		ConsumerName:               proto.String(pc.parent.name),
		Durable:                    proto.Bool(!o.nonDurable),
		InitialPosition:            pb.CommandSubscribe_InitialPosition(o.InitialPosition).Enum(),
		ReadCompacted:              proto.Bool(o.ReadCompacted),
		ReplicateSubscriptionState: proto.Bool(o.ReplicateSubscriptionState),
		Metadata:                   propsToPB(o.Properties),
		SubscriptionProperties:     propsToPB(o.SubscriptionProperties),
	}
	if o.PriorityLevel != 0 {
		sub.PriorityLevel = proto.Int32(o.PriorityLevel)
	}
	if pc.purpose != "" {
		sub.TopicPurpose = proto.String(pc.purpose)
	}
	if s := o.Schema; s != nil {
		if _, auto := s.(AutoConsumeSchema); auto {
			// PIP-236: only brokers speaking v21 know the AutoConsume type.
			if c.protocolVersion >= int32(pb.ProtocolVersion_v21) {
				sub.Schema = s.info()
			}
		} else {
			sub.Schema = s.info()
		}
	}
	if ks := o.KeySharedPolicy; ks != nil && o.Type == KeyShared {
		meta := &pb.KeySharedMeta{KeySharedMode: pb.KeySharedMode_AUTO_SPLIT.Enum(), AllowOutOfOrderDelivery: proto.Bool(ks.AllowOutOfOrderDelivery)}
		if ks.Sticky {
			meta.KeySharedMode = pb.KeySharedMode_STICKY.Enum()
			for _, r := range ks.HashRanges {
				meta.HashRanges = append(meta.HashRanges, &pb.IntRange{Start: proto.Int32(r[0]), End: proto.Int32(r[1])})
			}
		}
		sub.KeySharedMeta = meta
	}
	pc.mu.Lock()
	pc.seeking = false
	if o.nonDurable {
		sub.StartMessageId = pc.startID.pb()
		if pc.startID.isEarliest() {
			sub.StartMessageId = wire.EarliestID()
		} else if pc.startID.isLatest() {
			sub.StartMessageId = wire.LatestID()
		}
	}
	if !pc.seekTime.IsZero() {
		pc.minPublish, pc.seekTime = pc.seekTime, time.Time{}
	}
	// Messages queued from the previous subscription are now stale.
	pc.minPublishEpoch = pc.epoch.Add(1)
	pc.mu.Unlock()
	if err := c.addConsumer(pc.id, pc); err != nil {
		return err
	}
	resp, err := c.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: sub})
	if err == nil && resp.GetSuccess() == nil {
		err = fmt.Errorf("%w: SUBSCRIBE answered with %v", ErrProtocol, resp.GetType())
	}
	if err != nil {
		c.removeConsumer(pc.id, pc)
		if errors.Is(err, ErrTimeout) || errors.Is(err, context.Canceled) {
			c.writeCmd(&pb.BaseCommand{Type: pb.BaseCommand_CLOSE_CONSUMER.Enum(),
				CloseConsumer: &pb.CommandCloseConsumer{ConsumerId: proto.Uint64(pc.id), RequestId: proto.Uint64(pc.cl.nextRequestID())}})
		}
		return fmt.Errorf("subscribe %s to %s: %w", o.SubscriptionName, pc.topic, err)
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.closeErr != nil {
		c.removeConsumer(pc.id, pc)
		return pc.closeErr
	}
	if c.isClosed() {
		return c.closedError()
	}
	pc.cnx = c
	pc.permits = 0
	pc.window = o.ReceiverQueueSize
	if o.ReceiverQueueBytes > 0 {
		pc.window = max(o.ReceiverQueueSize/64, 1)
	}
	pc.reachedEnd = false
	return c.writeCmd(flowCmd(pc.id, pc.window))
}

func flowCmd(id uint64, n int) *pb.BaseCommand {
	return &pb.BaseCommand{Type: pb.BaseCommand_FLOW.Enum(),
		Flow: &pb.CommandFlow{ConsumerId: proto.Uint64(id), MessagePermits: proto.Uint32(uint32(n))}}
}

func (pc *partitionConsumer) run() {
	defer pc.wg.Done()
	for {
		select {
		case <-pc.stop:
			return
		case assigned := <-pc.reconnect:
			pc.reconnectLoop(assigned)
		}
	}
}

func (pc *partitionConsumer) reconnectLoop(assigned string) {
	reconnect(pc.stop, assigned, pc.log, "consumer", pc.connect, pc.closeForGood)
}

func (pc *partitionConsumer) requestReconnect(assigned string) {
	select {
	case pc.reconnect <- assigned:
	default:
	}
}

func (pc *partitionConsumer) closedByBroker(cc *pb.CommandCloseConsumer) {
	if !cc.GetAllowReconnect() {
		pc.closeForGood(&BrokerClosedError{Topic: pc.topic, Reason: cc.GetReason()})
		return
	}
	pc.mu.Lock()
	pc.cnx = nil
	pc.mu.Unlock()
	assigned := cc.GetAssignedBrokerServiceUrl()
	if pc.cl.useTLS() {
		assigned = cc.GetAssignedBrokerServiceUrlTls()
	}
	pc.requestReconnect(assigned)
}

func (pc *partitionConsumer) connectionClosed(c *conn) {
	pc.mu.Lock()
	mine := pc.cnx == c
	if mine {
		pc.cnx = nil
	}
	pc.mu.Unlock()
	if mine {
		pc.requestReconnect("")
	}
}

func (pc *partitionConsumer) activeChange(active bool) {
	pc.log.Debug("active consumer change", "active", active)
}

func (pc *partitionConsumer) endOfTopic() {
	pc.mu.Lock()
	pc.reachedEnd = true
	pc.mu.Unlock()
}

// closeForGood stops the consumer with err (no reconnect); the parent learns of it.
func (pc *partitionConsumer) closeForGood(err error) {
	pc.mu.Lock()
	if pc.closeErr != nil {
		pc.mu.Unlock()
		return
	}
	pc.closeErr = err
	c := pc.cnx
	pc.cnx = nil
	pc.mu.Unlock()
	if c != nil {
		c.removeConsumer(pc.id, pc)
	}
	pc.stopOnce.Do(func() { close(pc.stop) })
	pc.parent.partitionFailed(pc, err)
}

// delivered counts n messages handed to the application (or skipped) and sends FLOW once
// half the receiver queue has been used, as upstream's clients do. With ReceiverQueueBytes the
// window is first fitted to the messages' size, or the FLOW waits (fit).
func (pc *partitionConsumer) delivered(n int) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.permits += n
	if pc.parent.opts.ReceiverQueueBytes > 0 && !pc.fit() {
		return
	}
	if pc.permits >= max(pc.window/2, 1) && pc.cnx != nil {
		pc.cnx.writeCmd(flowCmd(pc.id, pc.permits))
		pc.permits = 0
	}
}

// fit sets the window to as many messages of the average size seen as ReceiverQueueBytes
// holds (within 1 … ReceiverQueueSize): a wider window is granted with the next FLOW, a
// narrower one by withholding permits (negative) until the broker holds no more than it. It
// reports false while over half of ReceiverQueueBytes is queued: no FLOW then; every message
// the application takes calls delivered again, so it goes once enough is taken. pc.mu is held.
func (pc *partitionConsumer) fit() bool {
	o := &pc.parent.opts
	if pc.queuedBytes.Load() > o.ReceiverQueueBytes/2 {
		return false
	}
	if avg := pc.avgSize.Load(); avg > 0 {
		target := int(min(int64(o.ReceiverQueueSize), max(o.ReceiverQueueBytes/avg, 1)))
		pc.permits += target - pc.window
		pc.window = target
	}
	return true
}

// noteSizes counts newly queued messages' payload bytes and folds their sizes into the running
// average that fit sizes the window by (each message weighs an eighth).
func (pc *partitionConsumer) noteSizes(msgs []*Message) {
	var bytes int64
	avg := pc.avgSize.Load()
	for _, m := range msgs {
		size := int64(len(m.Payload))
		bytes += size
		if avg == 0 {
			avg = max(size, 1)
		} else {
			avg = max((7*avg+size)/8, 1)
		}
	}
	pc.avgSize.Store(avg)
	pc.queuedBytes.Add(bytes)
}

// conn returns the current connection, or nil while reconnecting.
func (pc *partitionConsumer) conn() *conn {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.cnx
}

// request sends a request on the current connection.
func (pc *partitionConsumer) request(ctx context.Context, cmd *pb.BaseCommand) (*pb.BaseCommand, error) {
	c := pc.conn()
	if c == nil {
		pc.mu.Lock()
		err := pc.closeErr
		pc.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s is reconnecting", ErrServiceNotReadyClient, pc.topic)
	}
	resp, err := c.request(ctx, cmd)
	if err != nil && errors.Is(err, ErrClosed) {
		// The connection went before the answer came. Unless the consumer itself was closed,
		// it is reconnecting: the caller may try again once it is back.
		pc.mu.Lock()
		alive := pc.closeErr == nil
		pc.mu.Unlock()
		if alive {
			err = fmt.Errorf("%w: %s lost its connection: %w", ErrServiceNotReadyClient, pc.topic, err)
		}
	}
	return resp, err
}

// ErrServiceNotReadyClient is returned by requests made while a consumer is reconnecting, or
// whose connection was lost before they were answered (the consumer then reconnects).
var ErrServiceNotReadyClient = errors.New("pulsar: not connected")

// close flushes acks, closes the consumer on the broker and stops run.
func (pc *partitionConsumer) close(ctx context.Context) {
	pc.acks.flush()
	c := pc.conn()
	pc.closeForGood(ErrClosed)
	if c != nil {
		c.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_CLOSE_CONSUMER.Enum(),
			CloseConsumer: &pb.CommandCloseConsumer{ConsumerId: proto.Uint64(pc.id)}})
	}
	pc.wg.Wait()
}
