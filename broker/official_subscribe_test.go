package broker_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/letterbox-dev/letterbox/broker"
)

// tagged is a message and the index of the consumer that received it.
type tagged struct {
	who int
	m   pulsar.Message
}

// collect receives from every consumer concurrently until ctx ends, tagging each message
// with its consumer's index. The returned wait function blocks until the receivers exit.
func collect(ctx context.Context, consumers ...pulsar.Consumer) (<-chan tagged, func()) {
	out := make(chan tagged, 1024)
	var wg sync.WaitGroup
	for i, c := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := c.Receive(ctx)
				if err != nil {
					return
				}
				select {
				case out <- tagged{i, m}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return out, wg.Wait
}

// Shared: two consumers split the messages, each delivered exactly once overall.
func TestOfficialSharedExactlyOnce(t *testing.T) {
	t.Parallel()
	const n = 1000
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	opts := pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Shared, ReceiverQueueSize: 100}
	c1 := subscribe(t, c, opts)
	c2 := subscribe(t, c, opts)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})

	msgs := make([]*pulsar.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &pulsar.ProducerMessage{Payload: []byte(strconv.Itoa(i))}
	}
	sendAll(t, p, msgs, 20*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, wait := collect(ctx, c1, c2)
	defer wait()
	defer cancel()

	seen := make(map[string]int, n)
	per := [2]int{}
	for len(seen) < n {
		select {
		case tm := <-ch:
			k := string(tm.m.Payload())
			if prev, dup := seen[k]; dup {
				t.Fatalf("message %s delivered twice (consumers %d and %d)", k, prev, tm.who)
			}
			seen[k] = tm.who
			per[tm.who]++
			if err := []pulsar.Consumer{c1, c2}[tm.who].Ack(tm.m); err != nil {
				t.Fatalf("ack: %v", err)
			}
		case <-ctx.Done():
			t.Fatalf("received %d of %d distinct messages (per consumer %v)", len(seen), n, per)
		}
	}
	// Acked messages must not come back; nothing beyond n may arrive.
	select {
	case tm := <-ch:
		t.Fatalf("extra delivery %q to consumer %d (redelivery %d)", tm.m.Payload(), tm.who, tm.m.RedeliveryCount())
	case <-time.After(300 * time.Millisecond):
	}
	for i := range n {
		if _, ok := seen[strconv.Itoa(i)]; !ok {
			t.Fatalf("message %d never delivered", i)
		}
	}
	if per[0] == 0 || per[1] == 0 {
		t.Fatalf("one consumer got everything: per consumer %v", per)
	}
}

// Key_Shared: every key goes to exactly one of two consumers, in order within the key.
func TestOfficialKeySharedSticky(t *testing.T) {
	t.Parallel()
	const keys, perKey = 20, 20
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	opts := pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.KeyShared}
	c1 := subscribe(t, c, opts)
	c2 := subscribe(t, c, opts)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})

	var msgs []*pulsar.ProducerMessage
	for i := range perKey {
		for k := range keys {
			msgs = append(msgs, &pulsar.ProducerMessage{Key: fmt.Sprintf("key-%d", k), Payload: []byte(strconv.Itoa(i))})
		}
	}
	sendAll(t, p, msgs, 20*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, wait := collect(ctx, c1, c2)
	defer wait()
	defer cancel()
	owner := map[string]int{}
	next := map[string]int{}
	per := [2]int{}
	for got := 0; got < keys*perKey; got++ {
		select {
		case tm := <-ch:
			k := tm.m.Key()
			if o, ok := owner[k]; ok && o != tm.who {
				t.Fatalf("key %s delivered to consumer %d and to consumer %d", k, o, tm.who)
			}
			owner[k] = tm.who
			if seq := string(tm.m.Payload()); seq != strconv.Itoa(next[k]) {
				t.Fatalf("key %s: got #%s, want #%d (order within a key broken)", k, seq, next[k])
			}
			next[k]++
			per[tm.who]++
			[]pulsar.Consumer{c1, c2}[tm.who].Ack(tm.m)
		case <-ctx.Done():
			t.Fatalf("received %d of %d messages (per consumer %v)", got, keys*perKey, per)
		}
	}
	if len(owner) != keys {
		t.Fatalf("saw %d keys, want %d", len(owner), keys)
	}
	if per[0] == 0 || per[1] == 0 {
		t.Fatalf("all %d keys went to one consumer (per consumer %v): hash ranges not split", keys, per)
	}
}

// Failover: only the active consumer receives; when it closes, the standby receives the rest.
func TestOfficialFailover(t *testing.T) {
	t.Parallel()
	const n = 20
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	opts := pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Failover}
	cs := []pulsar.Consumer{subscribe(t, c, opts), subscribe(t, c, opts)}
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", n)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	ch, wait := collect(ctx, cs...)
	active := -1
	for i := range n / 2 {
		select {
		case tm := <-ch:
			if active == -1 {
				active = tm.who
			}
			if tm.who != active {
				cancel()
				wait()
				t.Fatalf("message %q went to consumer %d while consumer %d is active", tm.m.Payload(), tm.who, active)
			}
			if want := fmt.Sprintf("m%d", i); string(tm.m.Payload()) != want {
				cancel()
				wait()
				t.Fatalf("active consumer got %q, want %q", tm.m.Payload(), want)
			}
			cs[active].Ack(tm.m)
		case <-ctx.Done():
			wait()
			t.Fatalf("only %d of %d messages received", i, n/2)
		}
	}
	// The standby must stay idle while the active one lives.
	deadline := time.After(300 * time.Millisecond)
idle:
	for {
		select {
		case tm := <-ch:
			if tm.who != active {
				cancel()
				wait()
				t.Fatalf("standby consumer %d received %q", tm.who, tm.m.Payload())
			}
		case <-deadline:
			break idle
		}
	}
	cancel()
	wait()

	standby := cs[1-active]
	cs[active].Close() // flushes its acks; unacked messages go to the standby
	msgs := receiveN(t, standby, n/2, 10*time.Second)
	for i, m := range msgs {
		if want := fmt.Sprintf("m%d", n/2+i); string(m.Payload()) != want {
			t.Fatalf("after failover got %q as #%d, want %q (all: %q)", m.Payload(), i, want, payloads(msgs))
		}
		standby.Ack(m)
	}
	expectNothing(t, standby, 300*time.Millisecond)
}

// A second Exclusive consumer on the same subscription is refused with ConsumerBusy.
func TestOfficialConsumerBusy(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive})
	c2, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive})
	if err == nil {
		c2.Close()
		t.Fatal("second Exclusive consumer on the same subscription was accepted; want ConsumerBusy")
	}
	if !strings.Contains(err.Error(), "ConsumerBusy") {
		t.Errorf("second Exclusive consumer: %v; want ConsumerBusy", err)
	}
	// Another subscription on the same topic is independent.
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "other", Type: pulsar.Exclusive})
}

// Nack on Shared redelivers the message with a rising redelivery count.
func TestOfficialNackRedelivery(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", Type: pulsar.Shared,
		NackRedeliveryDelay: 100 * time.Millisecond,
	})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	sendN(t, p, "n", 1)
	for want := uint32(0); want < 3; want++ {
		m := receiveOne(t, cons, 10*time.Second)
		if string(m.Payload()) != "n0" {
			t.Fatalf("got %q, want n0", m.Payload())
		}
		if m.RedeliveryCount() != want {
			t.Fatalf("delivery #%d: redelivery count %d, want %d", want+1, m.RedeliveryCount(), want)
		}
		cons.Nack(m)
	}
	m := receiveOne(t, cons, 10*time.Second)
	if m.RedeliveryCount() != 3 {
		t.Fatalf("fourth delivery: redelivery count %d, want 3", m.RedeliveryCount())
	}
	cons.Ack(m)
	expectNothing(t, cons, 500*time.Millisecond)
}

// Unsubscribe deletes the subscription: re-subscribing at Latest starts fresh and does not
// see the old backlog, while another subscription keeps its own.
func TestOfficialUnsubscribe(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	keep := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "old", 5)
	if err := cons.Unsubscribe(); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	cons.Close()

	again := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionLatest})
	expectNothing(t, again, 300*time.Millisecond)
	sendN(t, p, "new", 1)
	if m := receiveOne(t, again, 10*time.Second); string(m.Payload()) != "new0" {
		t.Fatalf("re-created subscription got %q first, want new0 (old backlog survived unsubscribe)", m.Payload())
	}
	got := payloads(receiveN(t, keep, 6, 10*time.Second))
	want := []string{"old0", "old1", "old2", "old3", "old4", "new0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("other subscription got %q, want %q", got, want)
	}
}

// A consumer that reconnects resumes from its cursor: acked messages are not redelivered.
func TestOfficialResumeFromCursor(t *testing.T) {
	t.Parallel()
	const n = 20
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	opts := pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive}
	cons, err := c.Subscribe(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", n)
	msgs := receiveN(t, cons, n, 10*time.Second)
	for _, m := range msgs[:n/2] {
		if err := cons.Ack(m); err != nil {
			t.Fatal(err)
		}
	}
	cons.Close()

	again := subscribe(t, c, opts)
	got := payloads(receiveN(t, again, n/2, 10*time.Second))
	for i, g := range got {
		if want := fmt.Sprintf("m%d", n/2+i); g != want {
			t.Fatalf("after reconnect got %q, want m%d..m%d", got, n/2, n-1)
		}
	}
	expectNothing(t, again, 300*time.Millisecond)
}

// AckWithResponse: Ack waits for the broker's ACK_RESPONSE and returns nil; the ack sticks.
// (The wait is bounded by the client's operation timeout, which fails the Ack: how long it took
// is the benchmarks' business, not this test's.)
func TestOfficialAckWithResponse(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	opts := pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", AckWithResponse: true}
	cons, err := c.Subscribe(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", 3)
	for _, m := range receiveN(t, cons, 3, 10*time.Second) {
		if err := cons.Ack(m); err != nil {
			t.Fatalf("ack %q: %v", m.Payload(), err)
		}
	}
	cons.Close()
	again := subscribe(t, c, opts)
	expectNothing(t, again, 300*time.Millisecond)
}

// Batch-index acknowledgement: acking some messages of a batch, then reconnecting, redelivers
// only the unacked ones.
func TestOfficialBatchIndexAck(t *testing.T) {
	t.Parallel()
	const n = 10
	b := startBroker(t, func(cfg *broker.Config) { cfg.AcknowledgmentAtBatchIndexLevelEnabled = true })
	c := newClient(t, b)
	topic := topicName(t)
	opts := pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive,
		EnableBatchIndexAcknowledgment: true}
	cons, err := c.Subscribe(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic,
		BatchingMaxMessages: n, BatchingMaxPublishDelay: 10 * time.Second})
	batch := make([]*pulsar.ProducerMessage, n)
	for i := range batch {
		batch[i] = &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "b%d", i)}
	}
	sendAll(t, p, batch, 20*time.Second)

	msgs := receiveN(t, cons, n, 10*time.Second)
	for i, m := range msgs {
		if !sameEntry(m.ID(), msgs[0].ID()) || m.ID().BatchIdx() != int32(i) {
			t.Fatalf("message %d id %v: the %d messages did not arrive as one batch", i, m.ID(), n)
		}
		if i%2 == 0 {
			if err := cons.Ack(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	cons.Close() // flushes the pending batch-index acks

	again := subscribe(t, c, opts)
	got := payloads(receiveN(t, again, n/2, 10*time.Second))
	want := []string{"b1", "b3", "b5", "b7", "b9"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("redelivered %q, want %q", got, want)
	}
	expectNothing(t, again, 300*time.Millisecond)
}
