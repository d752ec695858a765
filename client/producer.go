package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/client/wire"
)

// Producer publishes to a topic; on a partitioned topic it holds one producer per partition
// and routes each message. Safe for concurrent use.
type Producer struct {
	cl         *Client
	opts       ProducerOptions
	topic      string
	partitions []*partitionProducer

	rr        atomic.Uint32 // round-robin cursor
	rrCount   atomic.Uint32
	rrStarted atomic.Int64

	closeOnce sync.Once
}

// SendFuture is the pending result of SendAsync.
type SendFuture struct {
	done chan struct{}
	id   MessageID
	err  error
}

func newSendFuture() *SendFuture { return &SendFuture{done: make(chan struct{})} }

func (f *SendFuture) complete(id MessageID, err error) {
	f.id, f.err = id, err
	close(f.done)
}

// Done is closed once the result is known.
func (f *SendFuture) Done() <-chan struct{} { return f.done }

// Result returns the outcome; call it after Done is closed.
func (f *SendFuture) Result() (MessageID, error) {
	<-f.done
	return f.id, f.err
}

// Wait waits for the outcome or for ctx. A ctx that ends first does not withdraw the
// message: it may still be published (or fail after SendTimeout).
func (f *SendFuture) Wait(ctx context.Context) (MessageID, error) {
	select {
	case <-f.done:
		return f.id, f.err
	case <-ctx.Done():
		return MessageID{}, ctxError(ctx, "send")
	}
}

// CreateProducer creates a producer and registers it with the broker(s) serving its topic.
func (cl *Client) CreateProducer(ctx context.Context, opts ProducerOptions) (*Producer, error) {
	opts.setDefaults()
	tn, err := parseTopic(opts.Topic)
	if err != nil {
		return nil, err
	}
	n, err := cl.partitions(ctx, tn.String())
	if err != nil {
		return nil, err
	}
	p := &Producer{cl: cl, opts: opts, topic: tn.String()}
	p.rr.Store(uint32(time.Now().UnixNano()))
	p.rrStarted.Store(time.Now().UnixNano())
	if err := cl.register(p); err != nil {
		return nil, err
	}
	topics := []string{tn.String()}
	if n > 0 {
		topics = make([]string, n)
		for i := range topics {
			topics[i] = tn.PartitionTopic(i).String()
		}
	}
	for i, t := range topics {
		part := int32(-1)
		if n > 0 {
			part = int32(i)
		}
		pp, err := newPartitionProducer(ctx, cl, &p.opts, t, part)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.partitions = append(p.partitions, pp)
	}
	return p, nil
}

// Topic is the producer's fully qualified topic.
func (p *Producer) Topic() string { return p.topic }

// Name is the producer name (the broker's when none was configured); on a partitioned topic,
// the first partition's.
func (p *Producer) Name() string {
	pp := p.partitions[0]
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.name
}

// Send publishes msg and waits for the broker's receipt.
func (p *Producer) Send(ctx context.Context, msg *Message) (MessageID, error) {
	return p.SendAsync(ctx, msg).Wait(ctx)
}

// SendAsync queues msg and returns at once with a future; it blocks only while
// MaxPendingMessages are in flight (until ctx ends). Messages are batched unless batching is
// disabled or the message has a delivery time. msg is encoded before SendAsync returns and
// not kept: the caller may reuse it, its payload and its properties at once.
func (p *Producer) SendAsync(ctx context.Context, msg *Message) *SendFuture {
	f := newSendFuture()
	if msg == nil {
		f.complete(MessageID{}, fmt.Errorf("%w: nil message", ErrInvalidConfig))
		return f
	}
	pp := p.partitions[p.route(msg)]
	select {
	case pp.sem <- struct{}{}:
	case <-pp.stop:
		pp.mu.Lock()
		err := pp.closeErr
		pp.mu.Unlock()
		f.complete(MessageID{}, err)
		return f
	case <-ctx.Done():
		f.complete(MessageID{}, ctxError(ctx, "send"))
		return f
	}
	pp.add(msg, f)
	return f
}

// Flush sends every batched message and waits for all pending receipts.
func (p *Producer) Flush(ctx context.Context) error {
	for _, pp := range p.partitions {
		if err := pp.flush(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close flushes pending messages (for at most the operation timeout), closes the producer
// on the broker and stops its goroutines. Later sends fail with ErrClosed.
func (p *Producer) Close() error {
	p.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), p.cl.opts.OperationTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for _, pp := range p.partitions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pp.close(ctx)
			}()
		}
		wg.Wait()
		p.cl.unregister(p)
	})
	return nil
}

func (p *Producer) closeForClient() { p.Close() }

// route picks the partition of msg.
func (p *Producer) route(msg *Message) int {
	n := len(p.partitions)
	if n == 1 {
		return 0
	}
	if p.opts.Router != nil {
		return ((p.opts.Router(msg, n) % n) + n) % n
	}
	key := msg.OrderingKey
	if key == "" {
		key = msg.Key
	}
	if key != "" {
		return int(p.hash(key) % uint32(n))
	}
	if p.opts.DisableBatching {
		return int((p.rr.Add(1) - 1) % uint32(n))
	}
	// With batching, stay on one partition until a batch would be full or its delay has
	// passed, as upstream's clients do, so batches fill up.
	cur := p.rr.Load()
	cnt := p.rrCount.Add(1)
	if cnt > uint32(p.opts.BatchingMaxMessages) ||
		time.Since(time.Unix(0, p.rrStarted.Load())) > p.opts.BatchingMaxPublishDelay {
		if p.rr.CompareAndSwap(cur, cur+1) {
			p.rrCount.Store(0)
			p.rrStarted.Store(time.Now().UnixNano())
		}
		return int((cur + 1) % uint32(n))
	}
	return int(cur % uint32(n))
}

func (p *Producer) hash(key string) uint32 {
	if p.opts.HashingScheme == Murmur3_32Hash {
		return wire.Murmur3_32([]byte(key), 0) & 0x7fffffff
	}
	return goJavaStringHash(key)
}

// goJavaStringHash is String.hashCode as the official Go client computes it: over the UTF-8
// bytes, as an unsigned 32-bit value that is then taken modulo the partition count without
// clearing the sign bit. Matching it exactly (rather than Java's UTF-16 definition in
// wire.JavaStringHash) is what puts a key on the same partition as that client.
func goJavaStringHash(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		h = 31*h + uint32(s[i])
	}
	return h
}
