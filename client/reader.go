package client

import (
	"context"
	"fmt"
	"time"
)

// ReaderOptions configure a Reader. Topic is required.
type ReaderOptions struct {
	Topic string
	// StartMessageID is where reading starts: EarliestMessageID(), LatestMessageID() or the
	// id of a message (excluded unless StartMessageIDInclusive).
	StartMessageID          MessageID
	StartMessageIDInclusive bool
	// SubscriptionName of the non-durable subscription; "reader-<random>" by default.
	SubscriptionName  string
	Name              string
	ReceiverQueueSize int
	// ReceiverQueueBytes bounds the prefetch by payload bytes too (ConsumerOptions).
	ReceiverQueueBytes int64
	Schema             Schema
	ReadCompacted      bool
}

// Reader reads a topic from a position without a durable subscription: nothing is retained
// for it. It acknowledges what it reads (cumulatively, grouped), as the official clients'
// readers do: a broker otherwise keeps every message delivered as pending on the reader's
// subscription, which costs it memory while the reader lives and work when it closes.
type Reader struct {
	c *Consumer
}

// CreateReader creates a reader. A zero StartMessageID reads from the earliest message.
func (cl *Client) CreateReader(ctx context.Context, opts ReaderOptions) (*Reader, error) {
	start := opts.StartMessageID
	if start == (MessageID{}) {
		start = EarliestMessageID()
	}
	sub := opts.SubscriptionName
	if sub == "" {
		sub = "reader-" + randomName(5)
	}
	c, err := cl.Subscribe(ctx, ConsumerOptions{
		Topic:              opts.Topic,
		SubscriptionName:   sub,
		Name:               opts.Name,
		Type:               Exclusive,
		ReceiverQueueSize:  opts.ReceiverQueueSize,
		ReceiverQueueBytes: opts.ReceiverQueueBytes,
		Schema:             opts.Schema,
		ReadCompacted:      opts.ReadCompacted,
		nonDurable:         true,
		startID:            start,
		startInclusive:     opts.StartMessageIDInclusive,
	})
	if err != nil {
		return nil, err
	}
	r := &Reader{c: c}
	if start.isLatest() {
		for _, pc := range c.partitionList() {
			last, err := pc.lastMessageID(ctx)
			if err != nil {
				c.Close()
				return nil, err
			}
			pc.mu.Lock()
			pc.baseline = last
			pc.mu.Unlock()
			if opts.StartMessageIDInclusive && last.Entry >= 0 {
				// Read the last message itself: seek to it (the broker resubscribes us).
				if err := c.seekPartition(ctx, pc, last); err != nil {
					c.Close()
					return nil, err
				}
			}
		}
	}
	return r, nil
}

// Connected reports whether the reader is connected to its broker now (false while it
// reconnects: it resumes after the last message it returned once the broker is back).
func (r *Reader) Connected() bool { return r.c.Connected() }

// Topic is the reader's topic.
func (r *Reader) Topic() string { return r.c.topic }

// Next returns the next message, waiting for one.
func (r *Reader) Next(ctx context.Context) (*Message, error) {
	m, err := r.c.next(ctx)
	if err != nil {
		return nil, err
	}
	return r.took(m)
}

// NextQueued returns the next message when one is already queued, and nil, nil when none
// is, without waiting (Consumer.ReceiveQueued).
func (r *Reader) NextQueued() (*Message, error) {
	m, err := r.c.queued()
	if m == nil || err != nil {
		return nil, err
	}
	return r.took(m)
}

func (r *Reader) took(m *Message) (*Message, error) {
	if err := r.c.AckCumulative(m); err != nil {
		return nil, fmt.Errorf("acknowledge %v: %w", m.ID, err)
	}
	return m, nil
}

// HasNext reports whether a message is available after the last one read: queued locally,
// or published on the topic (asking the broker for its last message id).
func (r *Reader) HasNext(ctx context.Context) (bool, error) {
	if r.c.incoming.len() > 0 {
		return true, nil
	}
	for _, pc := range r.c.partitionList() {
		last, err := pc.lastMessageID(ctx)
		if err != nil {
			return false, err
		}
		if last.Entry < 0 {
			continue
		}
		pc.mu.Lock()
		after, inclusive, has := pc.startID, pc.startInclusive, pc.hasStart
		if !has {
			if pc.startID.isLatest() {
				after, inclusive, has = pc.baseline, false, true
			}
		}
		pc.mu.Unlock()
		if !has {
			return true, nil // reading from the earliest: anything counts
		}
		cmp := compareLast(last, after)
		if cmp > 0 || (cmp == 0 && inclusive) {
			return true, nil
		}
	}
	return false, nil
}

// compareLast compares the broker's last id with a position; a last id naming a batch's
// final index is compared entry-wise when the position has no batch index.
func compareLast(last, pos MessageID) int {
	if pos.BatchIndex < 0 {
		last.BatchIndex = -1
	}
	return last.Compare(pos)
}

// LastMessageIDs returns, per partition (by partition topic name), the id of the last message
// published; its Entry is -1 for an empty partition.
func (r *Reader) LastMessageIDs(ctx context.Context) (map[string]MessageID, error) {
	return r.c.LastMessageIDs(ctx)
}

// Seek moves the reader to id (read next, inclusive).
func (r *Reader) Seek(ctx context.Context, id MessageID) error { return r.c.Seek(ctx, id) }

// SeekByTime moves the reader to the first message published at or after t.
func (r *Reader) SeekByTime(ctx context.Context, t time.Time) error { return r.c.SeekByTime(ctx, t) }

// Close closes the reader.
func (r *Reader) Close() error { return r.c.Close() }

func (r *Reader) String() string { return fmt.Sprintf("reader on %s", r.c.topic) }
