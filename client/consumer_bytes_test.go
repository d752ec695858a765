package client_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// dispatched is how many messages the broker has sent the subscription's consumers.
func dispatched(t *testing.T, b *pulsartest.Broker, topic, sub string) int64 {
	t.Helper()
	st, err := b.Admin().Stats(brokertest.Ctx(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	return st.Subscriptions[sub].MsgOutCounter
}

// settled waits until the broker has dispatched nothing more for a while and returns the count.
func settled(t *testing.T, b *pulsartest.Broker, topic, sub string) int64 {
	t.Helper()
	last := dispatched(t, b, topic, sub)
	for still := 0; still < 5; {
		time.Sleep(40 * time.Millisecond)
		if n := dispatched(t, b, topic, sub); n != last {
			last, still = n, 0
		} else {
			still++
		}
	}
	return last
}

// filledTopic starts a broker and publishes n messages, made by payload, to a new topic, kept
// for the subscription s.
func filledTopic(t *testing.T, po client.ProducerOptions, n int, payload func(i int) []byte) (*pulsartest.Broker, *client.Client, context.Context, string) {
	t.Helper()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 30*time.Second)
	po.Topic = uniqueTopic(t)
	// The subscription first: a topic without one keeps nothing (no retention), and the
	// broker frees a full ledger of it at once, as upstream may.
	sub, err := c.Subscribe(ctx, client.ConsumerOptions{Topic: po.Topic, SubscriptionName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	p := mustProducer(t, c, po)
	for i := range n {
		p.SendAsync(ctx, &client.Message{Payload: payload(i)})
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return b, c, ctx, po.Topic
}

// With ReceiverQueueBytes, large messages are prefetched only as many as fit, however large
// ReceiverQueueSize is, and all of them still arrive, in order.
func TestReceiverQueueBytesLargeMessages(t *testing.T) {
	t.Parallel()
	const n, size, limit = 200, 64 << 10, 1 << 20
	b, c, ctx, topic := filledTopic(t, client.ProducerOptions{DisableBatching: true}, n, func(i int) []byte {
		return append([]byte(fmt.Sprintf("%04d", i)), bytes.Repeat([]byte{'x'}, size)...)
	})
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", InitialPosition: client.Earliest,
		ReceiverQueueSize: 1000, ReceiverQueueBytes: limit})
	// Before anything is taken: the first window, 1000/64 messages.
	if got := settled(t, b, topic, "s"); got > 1000/64 {
		t.Fatalf("%d messages of %d KiB prefetched before any was received, want at most %d", got, size>>10, 1000/64)
	}
	for i := range n {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := fmt.Sprintf("%04d", i); string(m.Payload[:4]) != want || len(m.Payload) != size+4 {
			t.Fatalf("message %d is %q… (%d bytes), want %s…", i, m.Payload[:4], len(m.Payload), want)
		}
		_ = cons.Ack(m)
		if i == n/2 {
			// Halfway: what was sent and not yet taken stays within the bound (plus the
			// window granted while it was under half of it).
			if ahead := settled(t, b, topic, "s") - int64(i+1); ahead*size > 2*limit {
				t.Fatalf("%d messages (%d KiB) queued ahead of the application, want about %d KiB at most", ahead, ahead*size>>10, limit>>10)
			}
		}
	}
}

// Small messages widen the window to the whole ReceiverQueueSize: the byte bound does not
// keep a consumer of small messages at its first window.
func TestReceiverQueueBytesSmallMessagesWiden(t *testing.T) {
	t.Parallel()
	b, c, ctx, topic := filledTopic(t, client.ProducerOptions{}, 5000, func(i int) []byte { return []byte(fmt.Sprint(i)) })
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", InitialPosition: client.Earliest,
		ReceiverQueueSize: 1000, ReceiverQueueBytes: 1 << 20})
	const taken = 2000
	for i := range taken {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if string(m.Payload) != fmt.Sprint(i) {
			t.Fatalf("message %d is %q", i, m.Payload)
		}
	}
	// Batched by the producer, so counted in entries' messages: what is queued ahead is close
	// to the full window once it has widened.
	if ahead := settled(t, b, topic, "s") - taken; ahead < 500 {
		t.Fatalf("%d messages queued ahead after %d taken, want the window widened towards 1000", ahead, taken)
	}
}
