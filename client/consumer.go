package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"time"
)

// Consumer receives from one or more topics (partitions, a pattern, and the retry topic
// when RetryEnable) under one subscription. Safe for concurrent use.
type Consumer struct {
	cl    *Client
	opts  ConsumerOptions
	name  string
	topic string // first topic, fully qualified, for DLQ naming
	re    *regexp.Regexp

	// ctx is cancelled by Close; background work (discovery, DLQ producer) derives from it.
	ctx    context.Context
	cancel context.CancelFunc

	incoming *msgQueue
	out      chan *Message
	stop     chan struct{}
	failed   chan struct{} // closed when every partition consumer closed for good
	wg       sync.WaitGroup

	dlq   *dlqRouter
	nacks *nackTracker
	retry lazyProducer // retry topic producer

	mu        sync.Mutex
	parts     map[string]*partitionConsumer // by topic/partition name
	topics    map[string]bool               // subscribed base topics
	failErr   error
	closed    bool
	closeOnce sync.Once
	chanOnce  sync.Once
}

// Subscribe creates a consumer.
func (cl *Client) Subscribe(ctx context.Context, opts ConsumerOptions) (*Consumer, error) {
	opts.setDefaults()
	if opts.SubscriptionName == "" {
		return nil, fmt.Errorf("%w: SubscriptionName is required", ErrInvalidConfig)
	}
	topics := opts.Topics
	if opts.Topic != "" {
		topics = append([]string{opts.Topic}, topics...)
	}
	if len(topics) == 0 && opts.TopicsPattern == "" {
		return nil, fmt.Errorf("%w: Topic, Topics or TopicsPattern is required", ErrInvalidConfig)
	}
	c := &Consumer{
		cl:       cl,
		opts:     opts,
		name:     opts.Name,
		incoming: newMsgQueue(),
		out:      make(chan *Message),
		stop:     make(chan struct{}),
		failed:   make(chan struct{}),
		parts:    make(map[string]*partitionConsumer),
		topics:   make(map[string]bool),
	}
	if c.name == "" {
		c.name = randomName(5)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if opts.TopicsPattern != "" {
		full, _, _, err := patternTopic(opts.TopicsPattern)
		if err != nil {
			return nil, err
		}
		re, err := regexp.Compile(full)
		if err != nil {
			return nil, fmt.Errorf("%w: TopicsPattern: %w", ErrInvalidConfig, err)
		}
		c.re = re
	}
	first := opts.TopicsPattern
	if len(topics) > 0 {
		first = topics[0]
	}
	if err := c.setupDLQ(ctx, first, &topics); err != nil {
		c.cancel()
		return nil, err
	}
	if err := cl.register(c); err != nil {
		c.cancel()
		return nil, err
	}
	c.nacks = newNackTracker(c)
	c.retry.init(c.retryProducerOptions)
	for _, t := range topics {
		purpose := opts.TopicPurpose
		if c.opts.DLQ != nil && opts.RetryEnable && t == c.opts.DLQ.RetryLetterTopic {
			purpose = TopicPurposeRetryLetter
		}
		if err := c.subscribeTopic(ctx, t, purpose); err != nil {
			c.Close()
			return nil, err
		}
	}
	if c.re != nil {
		if err := c.discover(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	c.wg.Add(1)
	go c.housekeeping()
	return c, nil
}

func randomName(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	return string(b)
}

// subscribeTopic subscribes to topic, or to each of its partitions.
func (c *Consumer) subscribeTopic(ctx context.Context, topic, purpose string) error {
	tn, err := parseTopic(topic)
	if err != nil {
		return err
	}
	full := tn.String()
	c.mu.Lock()
	if c.topics[full] {
		c.mu.Unlock()
		return nil
	}
	c.topics[full] = true
	if c.topic == "" {
		c.topic = full
	}
	c.mu.Unlock()
	n := 0
	if tn.Partition < 0 {
		if n, err = c.cl.partitions(ctx, full); err != nil {
			c.forgetTopic(full)
			return err
		}
	}
	names := []string{full}
	parts := []int32{int32(tn.Partition)}
	if n > 0 {
		names, parts = make([]string, n), make([]int32, n)
		for i := range n {
			names[i], parts[i] = tn.PartitionTopic(i).String(), int32(i)
		}
	}
	for i, name := range names {
		pc, err := newPartitionConsumer(ctx, c, name, parts[i], purpose)
		if err != nil {
			c.forgetTopic(full)
			return err
		}
		c.mu.Lock()
		closed := c.closed
		if !closed {
			c.parts[name] = pc
		}
		c.mu.Unlock()
		if closed {
			pc.close(ctx)
			return ErrClosed
		}
	}
	return nil
}

func (c *Consumer) forgetTopic(full string) {
	c.mu.Lock()
	delete(c.topics, full)
	c.mu.Unlock()
}

// next takes the next live message from the queue, waiting for one. Messages queued
// before a reconnect or a seek are dropped (the broker sends again what is still due).
func (c *Consumer) next(ctx context.Context) (*Message, error) { return c.take(ctx, true) }

// queued is next without the wait: nil, nil when no live message is queued.
func (c *Consumer) queued() (*Message, error) { return c.take(context.Background(), false) }

func (c *Consumer) take(ctx context.Context, wait bool) (*Message, error) {
	for {
		select {
		case <-c.stop:
			return nil, ErrClosed
		default:
		}
		m := c.incoming.pop()
		if m == nil {
			if !wait {
				return nil, nil
			}
			select {
			case <-c.incoming.sig:
				continue
			case <-ctx.Done():
				return nil, ctxError(ctx, "receive")
			case <-c.stop:
				return nil, ErrClosed
			case <-c.failed:
				c.mu.Lock()
				defer c.mu.Unlock()
				return nil, c.failErr
			}
		}
		if c.incoming.len() > 0 {
			c.incoming.wake() // for another caller waiting concurrently
		}
		pc := m.consumer
		if c.opts.ReceiverQueueBytes > 0 {
			pc.queuedBytes.Add(-int64(len(m.Payload)))
		}
		pc.mu.Lock()
		stale := m.epoch != pc.epoch.Load() || pc.seeking
		if !stale && c.opts.nonDurable {
			// Readers resume after the last message handed over.
			pc.startID, pc.startInclusive, pc.hasStart = m.ID, false, true
		}
		pc.mu.Unlock()
		if stale {
			continue
		}
		pc.delivered(1)
		return m, nil
	}
}

// dispatch feeds Chan() once it has been asked for.
func (c *Consumer) dispatch() {
	defer c.wg.Done()
	for {
		m, err := c.next(c.ctx)
		if err != nil {
			return
		}
		select {
		case c.out <- m:
		case <-c.stop:
			return
		}
	}
}

// housekeeping flushes grouped acks, redelivers due nacks and rediscovers pattern topics.
func (c *Consumer) housekeeping() {
	defer c.wg.Done()
	ackEvery := c.opts.AckGroupingTime
	if ackEvery <= 0 {
		ackEvery = time.Hour
	}
	acks := time.NewTicker(ackEvery)
	defer acks.Stop()
	nacks := time.NewTicker(max(10*time.Millisecond, c.opts.NackRedeliveryDelay/3))
	defer nacks.Stop()
	var discover <-chan time.Time
	if c.re != nil {
		t := time.NewTicker(c.opts.AutoDiscoveryPeriod)
		defer t.Stop()
		discover = t.C
	}
	for {
		select {
		case <-c.stop:
			return
		case <-acks.C:
			for _, pc := range c.partitionList() {
				pc.acks.flush()
			}
		case <-nacks.C:
			c.nacks.redeliverDue()
		case <-discover:
			ctx, cancel := context.WithTimeout(c.ctx, c.cl.opts.OperationTimeout)
			if err := c.discover(ctx); err != nil {
				c.cl.log.Warn("topic discovery failed", "pattern", c.opts.TopicsPattern, "err", err)
			}
			cancel()
		}
	}
}

func (c *Consumer) partitionList() []*partitionConsumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*partitionConsumer, 0, len(c.parts))
	for _, pc := range c.parts {
		out = append(out, pc)
	}
	return out
}

// partitionFailed is called when a partition consumer closed for good.
func (c *Consumer) partitionFailed(pc *partitionConsumer, err error) {
	if errors.Is(err, ErrClosed) && !isBrokerClosed(err) {
		return // our own Close
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.failErr != nil {
		return
	}
	for _, p := range c.parts {
		if p != pc {
			p.mu.Lock()
			alive := p.closeErr == nil
			p.mu.Unlock()
			if alive {
				return
			}
		}
	}
	c.failErr = err
	close(c.failed)
}

func isBrokerClosed(err error) bool {
	var be *BrokerClosedError
	return errors.As(err, &be)
}

// Receive returns the next message, waiting until one arrives, ctx ends, or the consumer
// closes (ErrClosed, or a *BrokerClosedError when the broker closed it for good).
func (c *Consumer) Receive(ctx context.Context) (*Message, error) { return c.next(ctx) }

// ReceiveQueued returns the next message when one is already queued, and nil, nil when none
// is, without waiting: a reader of a backlog takes most messages so, and needs a deadline
// (a context with a timer) only for the few it must wait for.
func (c *Consumer) ReceiveQueued() (*Message, error) { return c.queued() }

// Chan returns a channel that delivers messages, an alternative to Receive (a message goes
// to one or the other). It is never closed: select on it together with your own shutdown
// signal. A message taken from the queue just before a Seek or reconnect may still be
// delivered on it (Receive never does that).
func (c *Consumer) Chan() <-chan *Message {
	c.chanOnce.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return
		}
		c.wg.Add(1)
		go c.dispatch()
	})
	return c.out
}

// Connected reports whether every partition of the consumer has a connection to its broker
// now: false while one reconnects (as after its broker went away), and once closed. As the
// Java client's isConnected.
func (c *Consumer) Connected() bool {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return false
	}
	for _, pc := range c.partitionList() {
		if pc.conn() == nil {
			return false
		}
	}
	return true
}

// Name is the consumer name sent to the broker.
func (c *Consumer) Name() string { return c.name }

// Subscription is the subscription name.
func (c *Consumer) Subscription() string { return c.opts.SubscriptionName }

// Topics lists the topics and partitions the consumer is attached to.
func (c *Consumer) Topics() []string {
	var out []string
	for _, pc := range c.partitionList() {
		out = append(out, pc.topic)
	}
	return out
}

func (c *Consumer) own(m *Message) (*partitionConsumer, error) {
	if m == nil || m.consumer == nil || m.consumer.parent != c {
		return nil, fmt.Errorf("%w: message was not received by this consumer", ErrInvalidConfig)
	}
	return m.consumer, nil
}

// Ack acknowledges m. Acks are grouped (AckGroupingTime); FlushAcks sends them at once.
func (c *Consumer) Ack(m *Message) error {
	pc, err := c.own(m)
	if err != nil {
		return err
	}
	c.nacks.forget(pc, m.ID)
	if pc.acks.add(m, false) {
		pc.acks.flush()
	}
	return nil
}

// AckCumulative acknowledges m and everything before it on its partition. Not allowed on
// Shared and Key_Shared subscriptions.
func (c *Consumer) AckCumulative(m *Message) error {
	if c.opts.Type == Shared || c.opts.Type == KeyShared {
		return fmt.Errorf("%w: cumulative ack on a %v subscription", ErrInvalidConfig, c.opts.Type)
	}
	pc, err := c.own(m)
	if err != nil {
		return err
	}
	if pc.acks.add(m, true) {
		pc.acks.flush()
	}
	return nil
}

// FlushAcks sends all grouped acknowledgements and waits for the broker to confirm them.
func (c *Consumer) FlushAcks(ctx context.Context) error {
	for _, pc := range c.partitionList() {
		if err := pc.acks.flushWait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Nack asks for m to be redelivered after NackRedeliveryDelay. The whole entry is
// redelivered (for a batch, its messages not yet acknowledged when batch-index ack is on).
func (c *Consumer) Nack(m *Message) error {
	pc, err := c.own(m)
	if err != nil {
		return err
	}
	c.nacks.add(pc, m.ID, time.Now().Add(c.opts.NackRedeliveryDelay))
	return nil
}

func (c *Consumer) String() string {
	return fmt.Sprintf("consumer %s on %s", c.name, c.opts.SubscriptionName)
}

// Close closes the consumer: flushes acks, detaches from the broker and stops its
// goroutines (and its DLQ/retry producers). Messages not yet received are redelivered to
// other consumers by the broker.
func (c *Consumer) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		c.mu.Lock()
		c.closed = true
		parts := make([]*partitionConsumer, 0, len(c.parts))
		for _, pc := range c.parts {
			parts = append(parts, pc)
		}
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), c.cl.opts.OperationTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for _, pc := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pc.close(ctx)
			}()
		}
		wg.Wait()
		close(c.stop)
		c.wg.Wait()
		if c.dlq != nil {
			c.dlq.close()
		}
		c.retry.close()
		c.cl.unregister(c)
	})
	return nil
}

func (c *Consumer) closeForClient() { c.Close() }
