package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
)

// idString is the Go client's text form of a message id (ledger:entry:partition), the form it
// writes into ORIGIN_MESSAGE_ID.
func idString(id pulsar.MessageID) string {
	return fmt.Sprintf("%d:%d:%d", id.LedgerID(), id.EntryID(), id.PartitionIdx())
}

// nackUntilDead receives the single message on cons maxDeliveries times, checking that the
// application sees redelivery counts 0..maxDeliveries-1 (Go routes to the DLQ before the
// application sees count == MaxDeliveries), and nacks it each time. It returns the first
// delivery.
func nackUntilDead(t *testing.T, cons pulsar.Consumer, maxDeliveries uint32) pulsar.Message {
	t.Helper()
	var first pulsar.Message
	for want := uint32(0); want < maxDeliveries; want++ {
		m := receiveOne(t, cons, 10*time.Second)
		if m.RedeliveryCount() != want {
			t.Fatalf("delivery #%d: redelivery count %d, want %d", want+1, m.RedeliveryCount(), want)
		}
		if first == nil {
			first = m
		}
		cons.Nack(m)
	}
	return first
}

// checkDeadLetter checks the properties Go's DLQ router writes on a dead letter.
func checkDeadLetter(t *testing.T, dead, orig pulsar.Message, realTopic string) {
	t.Helper()
	if string(dead.Payload()) != string(orig.Payload()) || dead.Key() != orig.Key() {
		t.Errorf("dead letter %q key %q, want %q key %q", dead.Payload(), dead.Key(), orig.Payload(), orig.Key())
	}
	props := dead.Properties()
	if got := props["REAL_TOPIC"]; got != realTopic {
		t.Errorf("REAL_TOPIC = %q, want %q", got, realTopic)
	}
	if got, want := props["ORIGIN_MESSAGE_ID"], idString(orig.ID()); got != want {
		t.Errorf("ORIGIN_MESSAGE_ID = %q, want %q", got, want)
	}
	if got := props["app"]; got != orig.Properties()["app"] {
		t.Errorf("application property app = %q, want %q", got, orig.Properties()["app"])
	}
}

// DLQ on Shared with MaxDeliveries=3: after three nacked deliveries the message lands on
// <topic>-<sub>-DLQ (watched by a subscription made before anything was produced).
func TestOfficialDLQ(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	dlqTopic := topic + "-s-DLQ"
	dlq := subscribe(t, c, pulsar.ConsumerOptions{Topic: dlqTopic, SubscriptionName: "watch",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	cons := subscribe(t, c, pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", Type: pulsar.Shared,
		NackRedeliveryDelay: 100 * time.Millisecond,
		DLQ:                 &pulsar.DLQPolicy{MaxDeliveries: 3, DeadLetterTopic: dlqTopic},
	})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	ctx := testCtx(t, 20*time.Second)
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("poison"), Key: "k",
		Properties: map[string]string{"app": "v"}}); err != nil {
		t.Fatal(err)
	}

	orig := nackUntilDead(t, cons, 3)
	dead := receiveOne(t, dlq, 15*time.Second)
	checkDeadLetter(t, dead, orig, topic)
	if dead.Topic() != dlqTopic {
		t.Errorf("dead letter on %q, want %q", dead.Topic(), dlqTopic)
	}
	// The application never sees a fourth delivery, and only one dead letter is written.
	expectNothing(t, cons, 500*time.Millisecond)
	expectNothing(t, dlq, 100*time.Millisecond)
}

// DLQPolicy.InitialSubscriptionName: the DLQ producer creates that subscription at Earliest,
// so a consumer attaching to it after the fact (at Latest) still finds the dead letter.
func TestOfficialDLQInitialSubscription(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	dlqTopic := topic + "-s-DLQ"
	cons := subscribe(t, c, pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", Type: pulsar.Shared,
		NackRedeliveryDelay: 100 * time.Millisecond,
		DLQ: &pulsar.DLQPolicy{MaxDeliveries: 3, DeadLetterTopic: dlqTopic,
			InitialSubscriptionName: "dlq-sub"},
	})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	ctx := testCtx(t, 30*time.Second)
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("poison"), Key: "k",
		Properties: map[string]string{"app": "v"}}); err != nil {
		t.Fatal(err)
	}
	orig := nackUntilDead(t, cons, 3)

	// Wait until the dead letter exists, with a reader: non-durable, it creates no subscription.
	r, err := c.CreateReader(pulsar.ReaderOptions{Topic: dlqTopic, StartMessageID: pulsar.EarliestMessageID()})
	if err != nil {
		t.Fatal(err)
	}
	seen, err := r.Next(ctx)
	r.Close()
	if err != nil {
		t.Fatalf("no dead letter on %s: %v", dlqTopic, err)
	}
	checkDeadLetter(t, seen, orig, topic)

	late := subscribe(t, c, pulsar.ConsumerOptions{Topic: dlqTopic, SubscriptionName: "dlq-sub",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionLatest})
	dead := receiveOne(t, late, 10*time.Second)
	checkDeadLetter(t, dead, orig, topic)
}

// ReconsumeLater(1s) with RetryEnable: the message comes back through <topic>-<sub>-RETRY no
// earlier than 1 s later, with RECONSUMETIMES counting the hops and the origin recorded.
func TestOfficialReconsumeLater(t *testing.T) {
	t.Parallel()
	const delay = time.Second
	// Strict: by default, as upstream, a message may go up to a tick (1 s) early.
	b := startBroker(t, func(c *broker.Config) { c.DelayedDeliveryDeliverAtTimeStrict = true })
	c := newClient(t, b)
	topic := topicName(t)
	retryTopic := topic + "-s-RETRY"
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s",
		Type: pulsar.Shared, RetryEnable: true})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	ctx := testCtx(t, 20*time.Second)
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("again"), Key: "k",
		Properties: map[string]string{"app": "v"}}); err != nil {
		t.Fatal(err)
	}

	orig := receiveOne(t, cons, 10*time.Second)
	if orig.Topic() != topic {
		t.Fatalf("first delivery from %q, want %q", orig.Topic(), topic)
	}
	asked := time.Now()
	cons.ReconsumeLater(orig, delay)

	retry := receiveOne(t, cons, 10*time.Second)
	arrived := time.Now()
	// deliver_at_time has millisecond resolution.
	if earliest := time.UnixMilli(asked.Add(delay).UnixMilli()); arrived.Before(earliest) {
		t.Fatalf("retried message arrived %v after ReconsumeLater, want >= %v", arrived.Sub(asked), delay)
	}
	if retry.Topic() != retryTopic {
		t.Errorf("retried message from %q, want %q", retry.Topic(), retryTopic)
	}
	props := retry.Properties()
	want := map[string]string{
		"RECONSUMETIMES":    "1",
		"DELAY_TIME":        "1000",
		"REAL_TOPIC":        topic,
		"ORIGIN_MESSAGE_ID": idString(orig.ID()),
		"app":               "v",
	}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("property %s = %q, want %q", k, props[k], v)
		}
	}
	if string(retry.Payload()) != "again" || retry.Key() != "k" {
		t.Errorf("retried message %q key %q, want again key k", retry.Payload(), retry.Key())
	}

	// A second hop without delay keeps the origin and counts 2.
	cons.ReconsumeLater(retry, 0)
	second := receiveOne(t, cons, 10*time.Second)
	if got := second.Properties()["RECONSUMETIMES"]; got != "2" {
		t.Errorf("second hop RECONSUMETIMES = %q, want 2", got)
	}
	if got := second.Properties()["REAL_TOPIC"]; got != topic {
		t.Errorf("second hop REAL_TOPIC = %q, want %q", got, topic)
	}
	if err := cons.Ack(second); err != nil {
		t.Fatal(err)
	}
	expectNothing(t, cons, 300*time.Millisecond)
}
