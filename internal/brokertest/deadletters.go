package brokertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
)

// Route is a DLQ for RouteDeadLetters to fill: the official Go client's dead-letter router
// moves N messages of Origin, which a consumer on Subscription fails, to DLQ, whose
// subscription InitialSubscription the router creates (PIP-124). Message makes message i
// (default: payload "letter-i", key "k<i mod 10>").
type Route struct {
	Origin, Subscription     string
	DLQ, InitialSubscription string
	N                        int
	Message                  func(i int) *pulsar.ProducerMessage
}

// RouteDeadLetters has the official Go client fill r.DLQ as its dead-letter router does: a
// Shared consumer with MaxDeliveries 1 nacks every message once, and the router publishes the
// redelivery through its producer, which batches (the client's default), so that the DLQ
// holds many letters an entry. The origin's messages go one an entry: the Go client redelivers
// a batch once per message nacked, and its router would dead-letter each copy. It returns once
// the DLQ holds all N.
func (e *Env) RouteDeadLetters(t testing.TB, r Route) {
	t.Helper()
	ctx := Ctx(t, 3*time.Minute)
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: e.ServiceURL, OperationTimeout: 10 * time.Second,
		Logger: plog.NewLoggerWithSlog(PrefixLogger(t, "official client: "))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: r.Origin, SubscriptionName: r.Subscription, Type: pulsar.Shared,
		NackRedeliveryDelay: 20 * time.Millisecond, ReceiverQueueSize: 2000,
		DLQ: &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: r.DLQ, InitialSubscriptionName: r.InitialSubscription}})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: r.Origin, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	mk := r.Message
	if mk == nil {
		mk = func(i int) *pulsar.ProducerMessage {
			return &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "letter-%d", i), Key: fmt.Sprintf("k%d", i%10)}
		}
	}
	errs := make(chan error, 1)
	for i := range r.N {
		p.SendAsync(ctx, mk(i), func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			if err != nil {
				select {
				case errs <- fmt.Errorf("send %d: %w", i, err):
				default:
				}
			}
		})
	}
	if err := p.FlushWithCtx(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	for range r.N {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("receive from %s: %v", r.Origin, err)
		}
		cons.Nack(m) // redelivered once more, then the router takes it
	}
	WaitForNil(t, 2*time.Minute, "the dead letters in "+r.DLQ, func() error {
		st, err := e.Admin.Stats(context.Background(), r.DLQ)
		if err != nil {
			return err
		}
		if st.MsgInCounter != int64(r.N) {
			return fmt.Errorf("%d of %d", st.MsgInCounter, r.N)
		}
		return nil
	})
}
