package client_test

import (
	"errors"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// Against a broker that behaves as upstream (no extension fields): a deleted topic's producer
// falls back to upstream's reconnect behaviour and fails rather than hangs, and DLQ and retry
// work as usual.
func TestCompatUpstreamBroker(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.UpstreamCompat())
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 30*time.Second)

	topic := uniqueTopic(t)
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := b.Admin().DeleteTopic(ctx, topic, false, true); err != nil {
		t.Fatal(err)
	}
	var sendErr error
	brokertest.WaitFor(t, 15*time.Second, "the producer to give up", func() bool {
		sctx := brokertest.Ctx(t, time.Second)
		_, sendErr = p.Send(sctx, &client.Message{Payload: []byte("after")})
		return sendErr != nil && !errors.Is(sendErr, client.ErrTimeout)
	})
	var be *client.BrokerClosedError
	if errors.As(sendErr, &be) && be.Reason != "" {
		t.Fatalf("an upstream broker sends no reason, yet the error carries one: %v", sendErr)
	}

	// Retry then DLQ, as on upstream.
	src := uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{
		Topic: src, SubscriptionName: "s", Type: client.Shared, RetryEnable: true,
		DLQ: &client.DLQPolicy{MaxDeliveries: 2, InitialSubscriptionName: "keep"},
	})
	sp := mustProducer(t, c, client.ProducerOptions{Topic: src})
	if _, err := sp.Send(ctx, &client.Message{Payload: []byte("fails")}); err != nil {
		t.Fatal(err)
	}
	for hop := range 3 {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("hop %d: %v", hop, err)
		}
		if err := cons.ReconsumeLater(ctx, m, 10*time.Millisecond, nil); err != nil {
			t.Fatalf("reconsume %d: %v", hop, err)
		}
	}
	dl := mustSubscribe(t, c, client.ConsumerOptions{Topic: src + "-s-DLQ", SubscriptionName: "keep"})
	m, err := dl.Receive(ctx)
	if err != nil || string(m.Payload) != "fails" || m.Properties["RECONSUMETIMES"] == "" {
		t.Fatalf("dead letter: %+v, %v", m, err)
	}
}
