package pulsartest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// DefaultWait bounds WaitForBacklog and WaitForMessages when their context has no deadline.
const DefaultWait = 10 * time.Second

// pollEvery is how often the waits look again.
const pollEvery = 10 * time.Millisecond

// ErrNoTopic is returned (wrapped) by Messages for a topic the broker does not have. Messages
// does not create it, as a reader would: a test waiting for a dead-letter topic must not create
// it before the client's dead-letter producer does.
var ErrNoTopic = errors.New("no such topic")

// Message is a message as Messages reads it.
type Message struct {
	// Topic is the topic the message is in: the partition's name on a partitioned topic.
	Topic string
	// The message's id: Partition is -1 on a non-partitioned topic, BatchIndex -1 for a
	// message that is not in a batch.
	Ledger, Entry         int64
	Partition, BatchIndex int32
	Key                   string
	Payload               []byte
	Properties            map[string]string
	ProducerName          string
	PublishTime           time.Time
	EventTime             time.Time // zero when the producer set none
}

// withDeadline gives ctx DefaultWait when it has no deadline of its own.
func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultWait)
}

// WaitForBacklog waits until the subscription's backlog on topic (a short name such as
// "orders" works, as with the clients) is n, and returns nil; or returns an error saying what
// the backlog last was once ctx is done (DefaultWait when ctx has no deadline). The backlog is
// the admin API's msgBacklog, which counts entries, as upstream's does: a batch of messages is
// one. A partitioned topic's backlog is its partitions' sum.
func (b *Broker) WaitForBacklog(ctx context.Context, topic, subscription string, n int64) error {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	last := "no subscription " + subscription
	for {
		backlog, found, err := b.backlog(ctx, topic, subscription)
		switch {
		case err != nil && !expired(ctx) && !admin.IsNotFound(err):
			return fmt.Errorf("pulsartest: backlog of %s on %s: %w", subscription, topic, err)
		case found && backlog == n:
			return nil
		case found:
			last = fmt.Sprintf("backlog %d", backlog)
		}
		if err := sleep(ctx); err != nil {
			return fmt.Errorf("pulsartest: waiting for a backlog of %d on %s of %s: %w (%s)", n, subscription, topic, err, last)
		}
	}
}

// backlog is the subscription's msgBacklog, and whether topic has the subscription.
func (b *Broker) backlog(ctx context.Context, topic, subscription string) (int64, bool, error) {
	name, err := topicName(topic)
	if err != nil {
		return 0, false, err
	}
	var st adminapi.TopicStats
	if parts, err := b.ad.Partitions(ctx, name); err == nil && parts > 0 {
		pst, err := b.ad.PartitionedStats(ctx, name, false)
		if err != nil {
			return 0, false, err
		}
		st = pst.TopicStats
	} else if st, err = b.ad.Stats(ctx, name); err != nil {
		return 0, false, err
	}
	sub, ok := st.Subscriptions[subscription]
	return sub.MsgBacklog, ok, nil
}

// Messages reads every message topic holds, from its first retained message to its last one
// at the time of the call, in order (partition by partition on a partitioned topic), without
// consuming them: through a reader, whose subscription is gone once it is done. A topic the
// broker does not have is ErrNoTopic. A short name such as "orders" works, as with the clients.
func (b *Broker) Messages(ctx context.Context, topic string) ([]Message, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	name, err := topicName(topic)
	if err != nil {
		return nil, err
	}
	topics := []string{name}
	if parts, err := b.ad.Partitions(ctx, name); err == nil && parts > 0 {
		topics = topics[:0]
		for i := range parts {
			topics = append(topics, naming.PartitionName(name, i))
		}
	} else if _, err := b.ad.Stats(ctx, name); err != nil {
		if admin.IsNotFound(err) {
			return nil, fmt.Errorf("pulsartest: %s: %w", name, ErrNoTopic)
		}
		return nil, fmt.Errorf("pulsartest: %s: %w", name, err)
	}
	env, err := b.running()
	if err != nil {
		return nil, err
	}
	opts, err := b.sec.clientOptions(env.ServiceURL)
	if err != nil {
		return nil, err
	}
	cl, err := client.New(opts)
	if err != nil {
		return nil, fmt.Errorf("pulsartest: %w", err)
	}
	defer cl.Close()
	var out []Message
	for _, t := range topics {
		msgs, err := readAll(ctx, cl, t)
		if err != nil {
			return nil, fmt.Errorf("pulsartest: reading %s: %w", t, err)
		}
		out = append(out, msgs...)
	}
	return out, nil
}

// readAll reads topic (not a partitioned one) from its first message to its last.
func readAll(ctx context.Context, cl *client.Client, topic string) ([]Message, error) {
	r, err := cl.CreateReader(ctx, client.ReaderOptions{Topic: topic, StartMessageID: client.EarliestMessageID()})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []Message
	for {
		more, err := r.HasNext(ctx)
		if err != nil {
			return nil, err
		}
		if !more {
			return out, nil
		}
		m, err := r.Next(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, Message{
			Topic: m.Topic, Ledger: m.ID.Ledger, Entry: m.ID.Entry, Partition: m.ID.Partition, BatchIndex: m.ID.BatchIndex,
			Key: m.Key, Payload: m.Payload, Properties: m.Properties, ProducerName: m.ProducerName,
			PublishTime: m.PublishTime, EventTime: m.EventTime,
		})
	}
}

// WaitForMessages waits until topic holds at least n messages and returns them all, as
// Messages reads them; or returns an error saying how many it last held once ctx is done
// (DefaultWait when ctx has no deadline). The topic need not exist yet: a dead-letter topic
// appears with its first letter.
func (b *Broker) WaitForMessages(ctx context.Context, topic string, n int) ([]Message, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	last := "the topic does not exist"
	for {
		msgs, err := b.Messages(ctx, topic)
		switch {
		case err == nil && len(msgs) >= n:
			return msgs, nil
		case err == nil:
			last = fmt.Sprintf("%d messages", len(msgs))
		case !errors.Is(err, ErrNoTopic) && !expired(ctx):
			return nil, err
		}
		if err := sleep(ctx); err != nil {
			return nil, fmt.Errorf("pulsartest: waiting for %d messages on %s: %w (%s)", n, topic, err, last)
		}
	}
}

// topicName is topic's full name, from the short forms the clients take.
func topicName(topic string) (string, error) {
	tn, err := admin.ParseTopic(topic)
	if err != nil {
		return "", fmt.Errorf("pulsartest: %w", err)
	}
	return tn.String(), nil
}

// expired reports whether ctx is done or its deadline has passed. A call that failed on the
// deadline, a dial's i/o timeout, can return before the context's own timer marks it done, and
// the wait must then end as a wait that ran out does, not with that call's error.
func expired(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(d)
}

// sleep waits pollEvery, or returns ctx's error.
func sleep(ctx context.Context) error {
	t := time.NewTimer(pollEvery)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
