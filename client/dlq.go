package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Property names and suffixes of upstream's DLQ and retry flows (the official Go client's
// constants, including the historic misspelling ORIGIN_MESSAGE_IDY_TIME).
const (
	DLQTopicSuffix             = naming.DLQSuffix
	RetryTopicSuffix           = naming.RetrySuffix
	MaxReconsumeTimes          = 16
	PropertyDelayTime          = "DELAY_TIME"
	PropertyRealTopic          = "REAL_TOPIC"
	PropertyRetryTopic         = "RETRY_TOPIC"
	PropertyReconsumeTimes     = "RECONSUMETIMES"
	PropertyOriginMessageIDOld = "ORIGIN_MESSAGE_IDY_TIME"
	PropertyOriginMessageID    = "ORIGIN_MESSAGE_ID"
)

// setupDLQ fills in the DLQ/retry topics as the official Go client does and appends the
// retry topic to the subscribed topics when RetryEnable.
func (c *Consumer) setupDLQ(ctx context.Context, first string, topics *[]string) error {
	o := &c.opts
	if (o.DLQ != nil || o.RetryEnable) && isLetterTopic(first, o.TopicPurpose) {
		// PIP-263: a dead-letter or retry topic never gets one of its own (brokers that follow
		// the proposal refuse to create it anyway). Its messages are redelivered instead.
		c.cl.log.Warn("not routing to a DLQ or retry topic: the consumer's topic is itself one",
			"topic", first, "subscription", o.SubscriptionName)
		o.DLQ, o.RetryEnable = nil, false
		return nil
	}
	if o.DLQ != nil {
		p := *o.DLQ
		o.DLQ = &p
	}
	if o.RetryEnable && len(o.Topics) == 0 && o.Topic == "" && o.TopicsPattern != "" &&
		(o.DLQ == nil || o.DLQ.RetryLetterTopic == "" || o.DLQ.DeadLetterTopic == "") {
		// Names derived from a pattern would be topics literally named after the regex.
		return fmt.Errorf("%w: a TopicsPattern consumer with RetryEnable needs DLQPolicy.RetryLetterTopic and DeadLetterTopic", ErrInvalidConfig)
	}
	if o.RetryEnable {
		tn, err := parseTopic(first)
		if err != nil {
			return err
		}
		retry := naming.RetryName(tn.String(), o.SubscriptionName)
		dlq := naming.DLQName(tn.String(), o.SubscriptionName)
		// Topics named by the client versions before 2.10, used when they exist partitioned.
		legacyRetry := tn.Domain() + "://" + tn.NamespaceName() + "/" + o.SubscriptionName + RetryTopicSuffix
		legacyDLQ := tn.Domain() + "://" + tn.NamespaceName() + "/" + o.SubscriptionName + DLQTopicSuffix
		if n, err := c.cl.partitionsNoCreate(ctx, legacyRetry); err == nil && n > 0 {
			retry = legacyRetry
		}
		if n, err := c.cl.partitionsNoCreate(ctx, legacyDLQ); err == nil && n > 0 {
			dlq = legacyDLQ
		}
		if o.DLQ == nil {
			o.DLQ = &DLQPolicy{MaxDeliveries: MaxReconsumeTimes}
		}
		if o.DLQ.DeadLetterTopic == "" {
			o.DLQ.DeadLetterTopic = dlq
		}
		if o.DLQ.RetryLetterTopic == "" {
			o.DLQ.RetryLetterTopic = retry
		}
		*topics = append(*topics, o.DLQ.RetryLetterTopic)
	}
	if o.DLQ == nil {
		return nil
	}
	if o.DLQ.MaxDeliveries == 0 {
		return fmt.Errorf("%w: DLQPolicy.MaxDeliveries must be > 0", ErrInvalidConfig)
	}
	if o.DLQ.DeadLetterTopic == "" {
		return fmt.Errorf("%w: DLQPolicy.DeadLetterTopic is required", ErrInvalidConfig)
	}
	c.dlq = newDLQRouter(c, first)
	return nil
}

// isLetterTopic reports a dead-letter or retry topic: by the purpose the consumer declares, or
// by the names the clients give them.
func isLetterTopic(topic, purpose string) bool {
	return purpose == TopicPurposeDeadLetter || purpose == TopicPurposeRetryLetter || naming.IsLetterName(topic)
}

// partitionsNoCreate asks for partitioned metadata without auto-creating the topic (PIP-344);
// a missing topic counts as non-partitioned.
func (cl *Client) partitionsNoCreate(ctx context.Context, topic string) (int, error) {
	c, err := cl.serviceConn(ctx)
	if err != nil {
		return 0, err
	}
	resp, err := c.request(ctx, &pb.BaseCommand{
		Type: pb.BaseCommand_PARTITIONED_METADATA.Enum(),
		PartitionMetadata: &pb.CommandPartitionedTopicMetadata{
			Topic: proto.String(topic), MetadataAutoCreationEnabled: proto.Bool(false)},
	})
	if err != nil {
		return 0, err
	}
	r := resp.GetPartitionMetadataResponse()
	if r.GetResponse() == pb.CommandPartitionedTopicMetadataResponse_Failed {
		return 0, serverError(r.GetError(), r.GetMessage())
	}
	return int(r.GetPartitions()), nil
}

// dlqRouter sends messages that exceeded MaxDeliveries to the DLQ topic, then acknowledges
// them (or nacks them when the send failed). Its goroutine is owned by the consumer.
type dlqRouter struct {
	c    *Consumer
	q    *msgQueue
	prod lazyProducer
	stop chan struct{}
	wg   sync.WaitGroup
}

func newDLQRouter(c *Consumer, sourceTopic string) *dlqRouter {
	r := &dlqRouter{c: c, q: newMsgQueue(), stop: make(chan struct{})}
	r.prod.init(func() ProducerOptions {
		pol := c.opts.DLQ
		o := pol.ProducerOptions
		o.Topic = pol.DeadLetterTopic
		o.Name = pol.DeadLetterProducerName
		if o.Name == "" {
			o.Name = fmt.Sprintf("%s-%s-%s-%s-DLQ", sourceTopic, c.opts.SubscriptionName, c.name, randomName(5))
		}
		if o.Compression == NoCompression {
			o.Compression = LZ4
		}
		o.InitialSubscriptionName = pol.InitialSubscriptionName
		o.TopicPurpose = TopicPurposeDeadLetter
		// As the Java client: every dead letter is an entry of its own, so a replay can take
		// them one by one on any broker.
		o.DisableBatching = true
		if s := c.opts.Schema; s != nil {
			if _, auto := s.(AutoConsumeSchema); !auto {
				o.Schema = s
			}
		}
		return o
	})
	r.wg.Add(1)
	go r.run()
	return r
}

func (r *dlqRouter) route(m *Message) { r.q.push(m) }

func (r *dlqRouter) run() {
	defer r.wg.Done()
	for {
		m := r.q.pop()
		if m == nil {
			select {
			case <-r.stop:
				return
			case <-r.q.sig:
				continue
			}
		}
		props := map[string]string{
			PropertyRealTopic:          m.Topic,
			PropertyOriginMessageIDOld: m.ID.String(),
			PropertyOriginMessageID:    m.ID.String(),
		}
		for k, v := range m.Properties {
			props[k] = v
		}
		err := r.send(r.c.ctx, deadLetter(m, props))
		if err != nil {
			if r.c.ctx.Err() != nil {
				return
			}
			r.c.cl.log.Warn("sending to the DLQ failed", "topic", r.c.opts.DLQ.DeadLetterTopic, "id", m.ID, "err", err)
			r.c.Nack(m)
			continue
		}
		r.c.Ack(m)
	}
}

func deadLetter(m *Message, props map[string]string) *Message {
	return &Message{Payload: m.Payload, Key: m.Key, OrderingKey: m.OrderingKey, Properties: props, EventTime: m.EventTime}
}

// send publishes to the DLQ with the router's producer (created on first use).
func (r *dlqRouter) send(ctx context.Context, m *Message) error {
	p, err := r.prod.get(ctx, r.c.cl)
	if err != nil {
		return err
	}
	_, err = p.Send(ctx, m)
	return err
}

func (r *dlqRouter) close() {
	close(r.stop)
	r.wg.Wait()
	r.prod.close()
}

// lazyProducer creates its producer on first use, retrying with backoff until ctx ends, as
// upstream's DLQ and retry routers do.
type lazyProducer struct {
	mu     sync.Mutex
	p      *Producer
	opts   func() ProducerOptions
	closed bool
}

func (l *lazyProducer) init(opts func() ProducerOptions) { l.opts = opts }

func (l *lazyProducer) get(ctx context.Context, cl *Client) (*Producer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if l.p != nil {
		return l.p, nil
	}
	bo := newBackoff()
	for {
		p, err := cl.CreateProducer(ctx, l.opts())
		if err == nil {
			l.p = p
			return p, nil
		}
		if permanent(err) || errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return nil, err
		}
		cl.log.Warn("creating producer failed; retrying", "err", err)
		if !sleepCtx(ctx, bo.Next()) {
			return nil, err
		}
	}
}

func (l *lazyProducer) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.p != nil {
		l.p.Close()
	}
}

// patternTopic qualifies a topics pattern as the official clients do, by client/naming's rules
// ("x" means persistent://public/default/x; the regular expression is the local name), and
// returns the namespace it lists.
func patternTopic(pattern string) (full, domain, namespace string, err error) {
	t, err := naming.ParseTopic(pattern)
	if e := (*naming.Error)(nil); errors.As(err, &e) {
		return "", "", "", fmt.Errorf("%w: topics pattern %q: %s", ErrInvalidTopic, pattern, e.Why)
	}
	return t.String(), t.Domain(), t.NamespaceName(), nil
}
