package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// 10,000 1 KiB messages through the client's default batching arrive complete and in order
// on an Exclusive subscription.
func TestOfficialBatched10kInOrder(t *testing.T) {
	t.Parallel()
	const n = 10000
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic}) // default batching

	payload := []byte(strings.Repeat("x", 1024))
	msgs := make([]*pulsar.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &pulsar.ProducerMessage{Payload: payload, Properties: map[string]string{"i": strconv.Itoa(i)}}
	}
	sendAll(t, p, msgs, 40*time.Second)

	ctx := testCtx(t, 40*time.Second)
	batched := 0
	for i := range n {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("receive #%d: %v", i, err)
		}
		if got := m.Properties()["i"]; got != strconv.Itoa(i) {
			t.Fatalf("message #%d carries i=%q: out of order or lost", i, got)
		}
		if len(m.Payload()) != 1024 {
			t.Fatalf("message #%d: payload %d bytes, want 1024", i, len(m.Payload()))
		}
		if m.ID().BatchSize() > 1 {
			batched++
		}
		if err := cons.Ack(m); err != nil {
			t.Fatalf("ack #%d: %v", i, err)
		}
	}
	if batched == 0 {
		t.Fatalf("no message arrived in a batch; the producer's default batching was not exercised")
	}
	expectNothing(t, cons, 200*time.Millisecond)
}

// A producer without a name gets one from the broker, and its messages carry it.
func TestOfficialProducerNameGenerated(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p1 := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	p2 := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	if p1.Name() == "" || p2.Name() == "" {
		t.Fatalf("generated producer names %q, %q: want non-empty", p1.Name(), p2.Name())
	}
	if p1.Name() == p2.Name() {
		t.Fatalf("two producers on one topic both named %q", p1.Name())
	}
	ctx := testCtx(t, 10*time.Second)
	if _, err := p1.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("two")}); err != nil {
		t.Fatal(err)
	}
	msgs := receiveN(t, cons, 2, 10*time.Second)
	want := map[string]string{"one": p1.Name(), "two": p2.Name()}
	for _, m := range msgs {
		if got := m.ProducerName(); got != want[string(m.Payload())] {
			t.Errorf("message %q: producer name %q, want %q", m.Payload(), got, want[string(m.Payload())])
		}
	}
}

// A Shared producer is refused with ProducerBusy while an Exclusive producer lives, and the
// exclusive producer is unaffected (a second Exclusive one is fenced: official_producer_test.go).
func TestOfficialProducerBusy(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	p1 := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, ProducerAccessMode: pulsar.ProducerAccessModeExclusive})

	p3, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err == nil {
		p3.Close()
		t.Fatal("Shared producer was created beside an Exclusive one; want ProducerBusy")
	}
	if !strings.Contains(err.Error(), "ProducerBusy") {
		t.Errorf("Shared producer beside Exclusive: %v; want ProducerBusy", err)
	}

	// The exclusive producer is unaffected by the refusal.
	ctx := testCtx(t, 10*time.Second)
	if _, err := p1.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("still mine")}); err != nil {
		t.Fatalf("send on the exclusive producer after refusals: %v", err)
	}
}

// A WaitForExclusive producer stays in CreateProducer while an Exclusive producer holds the
// topic (the broker answers PRODUCER_SUCCESS with producer_ready=false), and completes once
// the holder closes.
func TestOfficialWaitForExclusive(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	var notReady atomic.Int32
	intercept(t, b, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Outbound && cmd.GetType() == pb.BaseCommand_PRODUCER_SUCCESS &&
			cmd.GetProducerSuccess() != nil && !cmd.GetProducerSuccess().GetProducerReady() {
			notReady.Add(1)
		}
		return broker.Verdict{}
	})
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p1, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, ProducerAccessMode: pulsar.ProducerAccessModeExclusive})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 20*time.Second)
	if _, err := p1.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("first")}); err != nil {
		t.Fatal(err)
	}

	type result struct {
		p   pulsar.Producer
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, ProducerAccessMode: pulsar.ProducerAccessModeWaitForExclusive})
		done <- result{p, err}
	}()

	// The waiting producer must be queued (producer_ready=false) and must not complete.
	waitFor(t, 10*time.Second, func() bool { return notReady.Load() > 0 })
	select {
	case r := <-done:
		if r.p != nil {
			r.p.Close()
		}
		t.Fatalf("WaitForExclusive producer completed while the Exclusive one is open: err=%v", r.err)
	case <-time.After(300 * time.Millisecond):
	}

	p1.Close()
	var p2 pulsar.Producer
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("WaitForExclusive producer after the holder closed: %v", r.err)
		}
		p2 = r.p
		t.Cleanup(p2.Close)
	case <-ctx.Done():
		t.Fatal("WaitForExclusive producer still waiting after the Exclusive producer closed")
	}
	if _, err := p2.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("second")}); err != nil {
		t.Fatalf("send on the promoted producer: %v", err)
	}
	got := payloads(receiveN(t, cons, 2, 10*time.Second))
	if got[0] != "first" || got[1] != "second" {
		t.Fatalf("received %q, want [first second]", got)
	}
}

// Messages on a non-persistent topic reach a consumer that subscribed before they were sent.
func TestOfficialNonPersistent(t *testing.T) {
	t.Parallel()
	const n = 200
	b := startBroker(t)
	c := newClient(t, b)
	topic := "non-persistent://public/default/" + localName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	batch := make([]*pulsar.ProducerMessage, n)
	for i := range batch {
		batch[i] = &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "np-%d", i)}
	}
	sendAll(t, p, batch, 20*time.Second)
	msgs := receiveN(t, cons, n, 10*time.Second)
	for i, m := range msgs {
		if want := fmt.Sprintf("np-%d", i); string(m.Payload()) != want {
			t.Fatalf("message #%d = %q, want %q", i, m.Payload(), want)
		}
		if m.Topic() != topic {
			t.Fatalf("message topic %q, want %q", m.Topic(), topic)
		}
	}
}

// A message sent with DeliverAfter(2s) on a Shared subscription arrives no earlier than 2 s
// after it was sent, and does not hold back an undelayed message sent after it.
func TestOfficialDeliverAfter(t *testing.T) {
	t.Parallel()
	const delay = 2 * time.Second
	// Strict: by default, as upstream, a message may go up to a tick (1 s) early.
	b := startBroker(t, func(c *broker.Config) { c.DelayedDeliveryDeliverAtTimeStrict = true })
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Shared})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	ctx := testCtx(t, 20*time.Second)

	sent := time.Now()
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("delayed"), DeliverAfter: delay}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("now")}); err != nil {
		t.Fatal(err)
	}
	first := receiveOne(t, cons, 10*time.Second)
	if string(first.Payload()) != "now" {
		t.Fatalf("first message %q after %v, want the undelayed one", first.Payload(), time.Since(sent))
	}
	cons.Ack(first)
	second := receiveOne(t, cons, 10*time.Second)
	arrived := time.Now()
	if string(second.Payload()) != "delayed" {
		t.Fatalf("second message %q, want delayed", second.Payload())
	}
	// deliver_at_time has millisecond resolution, so the earliest correct delivery is the
	// send instant plus the delay, truncated to the millisecond.
	if earliest := time.UnixMilli(sent.Add(delay).UnixMilli()); arrived.Before(earliest) {
		t.Fatalf("delayed message arrived %v after send, want >= %v", arrived.Sub(sent), delay)
	}
	cons.Ack(second)
}

// Batches of 128 KiB arrive in pooled frame buffers that go back to the pool once the entry is
// trimmed and written to every consumer. With the test brokers' poisoned pool, a buffer reused
// too early turns into 0xEE bytes that the official consumer's checksum rejects: every message
// must arrive intact, on a non-persistent topic (trimmed right after dispatch) and on a
// persistent one with two subscriptions acknowledging as they go.
func TestOfficialLargeBatchesFromPooledBuffers(t *testing.T) {
	t.Parallel()
	const n = 8000 // about 8 MiB: past the point where the in-memory log trims at once
	b := startBroker(t)
	c := newClient(t, b)
	payload := func(i int) []byte { return fmt.Appendf(make([]byte, 0, 1024), "%-1024d", i) }
	for _, topic := range []string{"non-persistent://public/default/" + localName(t), topicName(t)} {
		var subs []pulsar.Consumer
		for _, name := range []string{"a", "b"} {
			subs = append(subs, subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: name, ReceiverQueueSize: 2 * n}))
		}
		p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
		got := make([]chan error, len(subs))
		for k, cons := range subs {
			got[k] = make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				for i := range n {
					m, err := cons.Receive(ctx)
					if err != nil {
						got[k] <- fmt.Errorf("received %d of %d: %w", i, n, err)
						return
					}
					if !bytes.Equal(m.Payload(), payload(i)) {
						got[k] <- fmt.Errorf("message #%d is %.20q", i, m.Payload())
						return
					}
					cons.Ack(m)
				}
				got[k] <- nil
			}()
		}
		msgs := make([]*pulsar.ProducerMessage, n)
		for i := range msgs {
			msgs[i] = &pulsar.ProducerMessage{Payload: payload(i)}
		}
		sendAll(t, p, msgs, 30*time.Second)
		for k := range subs {
			if err := <-got[k]; err != nil {
				t.Fatalf("%s, subscription %d: %v", topic, k, err)
			}
		}
	}
}
