package client_test

import (
	"context"
	"maps"
	"regexp"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// letter is what identifies a dead or retry letter, ids masked.
type letter struct {
	Topic   string
	Payload string
	Key     string
	Props   map[string]string
}

var idPattern = regexp.MustCompile(`^-?\d+:-?\d+:-?\d+$`)

func maskIDs(props map[string]string) map[string]string {
	out := maps.Clone(props)
	for k, v := range out {
		if idPattern.MatchString(v) {
			out[k] = "<id>"
		}
	}
	return out
}

// readAll reads n messages of topic from the beginning with the official client.
func readAll(t *testing.T, c pulsar.Client, topic string, n int) []letter {
	t.Helper()
	r, err := c.CreateReader(pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()})
	if err != nil {
		t.Fatalf("reader on %s: %v", topic, err)
	}
	defer r.Close()
	ctx := brokertest.Ctx(t, 15*time.Second)
	var out []letter
	for len(out) < n {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("read %s (%d of %d): %v", topic, len(out)+1, n, err)
		}
		out = append(out, letter{Topic: topic, Payload: string(m.Payload()), Key: m.Key(), Props: maskIDs(m.Properties())})
	}
	return out
}

const (
	dlqTopic = "persistent://public/default/orders"
	dlqSub   = "billing"
)

func produceOne(t *testing.T, b server) {
	t.Helper()
	c := newOfficial(t, b)
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: dlqTopic})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Send(brokertest.Ctx(t, 10*time.Second), &pulsar.ProducerMessage{
		Payload: []byte("order 1"), Key: "customer-7", Properties: map[string]string{"app": "x"}}); err != nil {
		t.Fatal(err)
	}
}

// TestDeadLetterParityNack: a message nacked until MaxDeliveries lands in the same DLQ topic
// with the same properties from our consumer and from the official one.
func TestDeadLetterParityNack(t *testing.T) {
	t.Parallel()
	bOurs, bOfficial := pulsartest.Start(t), pulsartest.Start(t)
	for _, b := range []*pulsartest.Broker{bOurs, bOfficial} {
		produceOne(t, b)
	}
	ctx := brokertest.Ctx(t, 30*time.Second)

	// Ours.
	oc := newClient(t, bOurs)
	cons := mustSubscribe(t, oc, client.ConsumerOptions{
		Topic: dlqTopic, SubscriptionName: dlqSub, Type: client.Shared, InitialPosition: client.Earliest,
		RetryEnable: true, DLQ: &client.DLQPolicy{MaxDeliveries: 2}, NackRedeliveryDelay: 50 * time.Millisecond,
	})
	for i := range 2 {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.RedeliveryCount != uint32(i) {
			t.Errorf("delivery %d: redelivery count %d", i, m.RedeliveryCount)
		}
		cons.Nack(m)
	}

	// Official.
	off := newOfficial(t, bOfficial)
	ocons, err := off.Subscribe(pulsar.ConsumerOptions{
		Topic: dlqTopic, SubscriptionName: dlqSub, Type: pulsar.Shared,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
		RetryEnable:                 true, DLQ: &pulsar.DLQPolicy{MaxDeliveries: 2}, NackRedeliveryDelay: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ocons.Close()
	for range 2 {
		m, err := ocons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ocons.Nack(m)
	}

	dlq := dlqTopic + "-" + dlqSub + "-DLQ"
	ours := readAll(t, newOfficial(t, bOurs), dlq, 1)
	theirs := readAll(t, newOfficial(t, bOfficial), dlq, 1)
	compareLetters(t, ours, theirs)
	if ours[0].Props["REAL_TOPIC"] != dlqTopic {
		t.Errorf("REAL_TOPIC %q", ours[0].Props["REAL_TOPIC"])
	}
}

// TestRetryParity: ReconsumeLater until the DLQ, from both clients; every retry letter and
// the dead letter match.
func TestRetryParity(t *testing.T) {
	t.Parallel()
	bOurs, bOfficial := pulsartest.Start(t), pulsartest.Start(t)
	for _, b := range []*pulsartest.Broker{bOurs, bOfficial} {
		produceOne(t, b)
	}
	ctx := brokertest.Ctx(t, 30*time.Second)
	const hops = 3 // MaxDeliveries 2: two retries, then the DLQ

	oc := newClient(t, bOurs)
	cons := mustSubscribe(t, oc, client.ConsumerOptions{
		Topic: dlqTopic, SubscriptionName: dlqSub, Type: client.Shared, InitialPosition: client.Earliest,
		RetryEnable: true, DLQ: &client.DLQPolicy{MaxDeliveries: 2},
	})
	for i := range hops {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := cons.ReconsumeLater(ctx, m, 10*time.Millisecond, map[string]string{"hop": "x"}); err != nil {
			t.Fatalf("reconsume %d: %v", i, err)
		}
	}

	off := newOfficial(t, bOfficial)
	ocons, err := off.Subscribe(pulsar.ConsumerOptions{
		Topic: dlqTopic, SubscriptionName: dlqSub, Type: pulsar.Shared,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
		RetryEnable:                 true, DLQ: &pulsar.DLQPolicy{MaxDeliveries: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ocons.Close()
	for range hops {
		m, err := ocons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ocons.ReconsumeLaterWithCustomProperties(m, map[string]string{"hop": "x"}, 10*time.Millisecond)
	}

	retry := dlqTopic + "-" + dlqSub + "-RETRY"
	dlq := dlqTopic + "-" + dlqSub + "-DLQ"
	compareLetters(t, readAll(t, newOfficial(t, bOurs), retry, 2), readAll(t, newOfficial(t, bOfficial), retry, 2))
	compareLetters(t, readAll(t, newOfficial(t, bOurs), dlq, 1), readAll(t, newOfficial(t, bOfficial), dlq, 1))
}

func compareLetters(t *testing.T, ours, theirs []letter) {
	t.Helper()
	for i := range ours {
		o, th := ours[i], theirs[i]
		if o.Topic != th.Topic || o.Payload != th.Payload || o.Key != th.Key || !maps.Equal(o.Props, th.Props) {
			t.Errorf("letter %d differs:\n ours:     %+v\n official: %+v", i, o, th)
		}
	}
	t.Logf("letters: %+v", ours)
}

var _ = context.Background

// PIP-263 on the client: a consumer of a dead-letter topic never gets a DLQ or retry topic of
// its own; its failures are redelivered instead.
func TestNoDLQOfDLQ(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)
	dlq := uniqueTopic(t) + "-s-DLQ"
	cons := mustSubscribe(t, c, client.ConsumerOptions{
		Topic: dlq, SubscriptionName: "inspect", Type: client.Shared, NackRedeliveryDelay: 20 * time.Millisecond,
		DLQ: &client.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq + "-inspect-DLQ"},
	})
	p := mustProducer(t, c, client.ProducerOptions{Topic: dlq})
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("dead")}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
		cons.Nack(m)
	}
	if _, err := b.Admin().Stats(ctx, dlq+"-inspect-DLQ"); !admin.IsNotFound(err) {
		t.Fatalf("a DLQ of the DLQ was created: %v", err)
	}
}
