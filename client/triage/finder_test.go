package triage_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/triage"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// officialLetters has the official Go client route dead letters into DLQs named by hand,
// retry letters into a retry topic named by hand, and produce to a topic named x-DLQ that
// nothing derives from.
func officialLetters(t *testing.T, env *pulsartest.Broker) {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: env.ServiceURL(), OperationTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: ns + "orders", SubscriptionName: "billing", Type: pulsar.Shared,
		NackRedeliveryDelay: 20 * time.Millisecond,
		DLQ:                 &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: ns + "orders-dlq", InitialSubscriptionName: "billing-keep"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	retrying, err := c.Subscribe(pulsar.ConsumerOptions{Topic: ns + "payments", SubscriptionName: "ledger", Type: pulsar.Shared,
		RetryEnable: true, DLQ: &pulsar.DLQPolicy{MaxDeliveries: 5, RetryLetterTopic: ns + "payments.retry",
			DeadLetterTopic: ns + "payments.deadletter"}})
	if err != nil {
		t.Fatal(err)
	}
	defer retrying.Close()
	for _, topic := range []string{ns + "orders", ns + "payments", ns + "x-DLQ"} {
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(context.Background(), &pulsar.ProducerMessage{Payload: []byte("hello"), Key: "k1",
			Properties: map[string]string{"reason": "bad card"}}); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	ctx := brokertest.Ctx(t, 30*time.Second)
	m, err := cons.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cons.Nack(m) // redelivered once more, then the DLQ router takes it
	m, err = retrying.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	retrying.ReconsumeLater(m, time.Hour)
	for _, topic := range []string{ns + "orders-dlq", ns + "payments.retry"} {
		brokertest.WaitFor(t, 20*time.Second, "a letter in "+topic, func() bool {
			st, err := env.Admin().Stats(ctx, topic)
			return err == nil && st.MsgInCounter == 1
		})
	}
}

func TestFinderCustomNames(t *testing.T) {
	env := pulsartest.Start(t)
	officialLetters(t, env)
	ctx := brokertest.Ctx(t, 30*time.Second)
	f := triage.NewFinder(env.Admin())
	topics := listing(t, ctx, env.Admin())
	got := f.Classify(ctx, topics)
	want := map[string]deadletter.Verdict{
		ns + "orders":         {},
		ns + "payments":       {},
		ns + "x-DLQ":          {},
		ns + "orders-dlq":     {Kind: deadletter.DeadLetter, Origin: ns + "orders", Subscription: "billing", By: deadletter.BySample},
		ns + "payments.retry": {Kind: deadletter.Retry, Origin: ns + "payments", By: deadletter.BySample},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %+v, want %+v", name, got[name], w)
		}
	}
	props, err := env.Admin().TopicProperties(ctx, ns+"x-DLQ")
	if err != nil || props[deadletter.PropertyTopicPurpose] != broker.PurposeStandard {
		t.Errorf("x-DLQ properties %v, %v: want the broker to mark it standard", props, err)
	}

	// A second call answers from the cache, even with room for one topic only: nothing changed.
	f.MaxSamples = 1
	again := f.Classify(ctx, topics)
	for name, w := range want {
		if again[name] != w {
			t.Errorf("cached %s: %+v, want %+v", name, again[name], w)
		}
	}
}

// TestFinderBudget samples at most MaxSamples topics per call, and the rest on later calls.
func TestFinderBudget(t *testing.T) {
	env := pulsartest.Start(t)
	officialLetters(t, env)
	ctx := brokertest.Ctx(t, 30*time.Second)
	f := triage.NewFinder(env.Admin())
	f.MaxSamples = 1
	topics := listing(t, ctx, env.Admin())
	found := func() int {
		n := 0
		for _, v := range f.Classify(ctx, topics) {
			if v.Kind != deadletter.Standard {
				n++
			}
		}
		return n
	}
	n := 0
	for range len(topics) + 1 {
		n = found()
	}
	if n != 2 {
		t.Errorf("after a call per topic, %d letter topics found, want 2", n)
	}
}

// listing is the namespace's topics as the TUI lists them, with the broker's message counters.
func listing(t *testing.T, ctx context.Context, ad *admin.Client) []triage.Topic {
	t.Helper()
	names, err := ad.Topics(ctx, "public/default", true)
	if err != nil {
		t.Fatal(err)
	}
	var out []triage.Topic
	for _, n := range names {
		st, err := ad.Stats(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, triage.Topic{Name: n, InCounter: st.MsgInCounter})
	}
	return out
}
