package broker_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// PIP-124: a producer's initial subscription, from raw frames and from the official client's
// DLQ producer.

// PIP-124: the initial subscription is created at Earliest, or refused with NotAllowedError
// when subscriptions may not be auto-created.
func TestInitialSubscription(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, func(c *broker.Config) { c.AllowAutoSubscriptionCreation = false })
	rc, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	r := rawProducer(rc, topicName(t), "", "init")
	if r.GetError().GetError() != pb.ServerError_NotAllowedError {
		t.Fatalf("initial subscription with auto-creation off: %v, want NotAllowedError", r)
	}
}

// initialSubState returns the backlog and consumer count of sub on topic, ok=false when the
// topic or the subscription does not exist.
func initialSubState(b *broker.Broker, topic, sub string) (backlog int64, consumers int, ok bool) {
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		return 0, 0, false
	}
	ss, ok := st.Subscriptions[sub]
	if !ok {
		return 0, 0, false
	}
	return ss.MsgBacklog, len(ss.Consumers), true
}

// PIP-124 with the official client: dead letters written before anyone subscribed to the DLQ
// are kept by the initial subscription, which admin stats show before any consumer attaches,
// and all reach a consumer that subscribes to it later at Latest — whether the DLQ topic was
// auto-created by the DLQ producer or created beforehand by an admin.
func TestInitialSubscriptionOfficial(t *testing.T) {
	t.Parallel()
	for _, precreate := range []bool{false, true} {
		name := "auto-created"
		if precreate {
			name = "pre-created"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := startBroker(t)
			c := newClient(t, b)
			topic := topicName(t)
			dlq := topic + "-s-DLQ"
			if precreate {
				if err := b.CreateTopic(dlq, nil); err != nil {
					t.Fatal(err)
				}
			}
			cons := subscribe(t, c, pulsar.ConsumerOptions{
				Topic: topic, SubscriptionName: "s", Type: pulsar.Shared, NackRedeliveryDelay: 50 * time.Millisecond,
				DLQ: &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq, InitialSubscriptionName: "keep"},
			})
			p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
			sendN(t, p, "m", 3)
			for _, m := range receiveN(t, cons, 3, 10*time.Second) {
				cons.Nack(m)
			}
			// Routed and acknowledged at the source, kept at the DLQ (the official DLQ
			// producer batches, so the backlog counts entries, not messages).
			waitFor(t, 15*time.Second, func() bool {
				routed, _, _ := initialSubState(b, topic, "s")
				backlog, consumers, ok := initialSubState(b, dlq, "keep")
				return routed == 0 && ok && backlog > 0 && consumers == 0
			})
			if st, err := b.TopicStats(dlq, broker.StatsOptions{}); err != nil || st.MsgInCounter != 3 {
				t.Fatalf("DLQ stats: %+v, %v; want 3 messages in", st, err)
			}
			if subs, err := b.Subscriptions(dlq); err != nil || !slices.Equal(subs, []string{"keep"}) {
				t.Fatalf("subscriptions of the DLQ: %v, %v; want [keep]", subs, err)
			}
			late := subscribe(t, c, pulsar.ConsumerOptions{Topic: dlq, SubscriptionName: "keep",
				SubscriptionInitialPosition: pulsar.SubscriptionPositionLatest})
			got := payloads(receiveN(t, late, 3, 10*time.Second))
			slices.Sort(got)
			if !slices.Equal(got, []string{"m0", "m1", "m2"}) {
				t.Fatalf("dead letters through the initial subscription: %v", got)
			}
		})
	}
}

// PIP-124: with auto-subscription-creation off, a producer naming an initial subscription is
// refused with NotAllowedError and upstream's message, and no subscription exists afterwards
// — on a new topic and on one that already existed. A namespace override turns it back on.
func TestInitialSubscriptionNotAllowed(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, func(c *broker.Config) { c.AllowAutoSubscriptionCreation = false })
	rc, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	existing := topicName(t, "existing")
	if err := b.CreateTopic(existing, nil); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{topicName(t, "new"), existing} {
		r := rawProducer(rc, topic, broker.PurposeDeadLetter, "init")
		if e := r.GetError(); e.GetError() != pb.ServerError_NotAllowedError ||
			!strings.Contains(e.GetMessage(), "auto subscription creation is not allowed") {
			t.Fatalf("%s: %v, want NotAllowedError with upstream's message", topic, r)
		}
		subs, err := b.Subscriptions(topic)
		if err != nil && !errors.Is(err, broker.ErrNotFound) {
			t.Fatal(err)
		}
		if len(subs) > 0 {
			t.Fatalf("%s: subscriptions %v after a refused initial subscription", topic, subs)
		}
	}
	if err := b.UpdateNamespacePolicies("public/default", func(p *adminapi.Policies) error {
		p.AutoSubscriptionCreationOverride = &adminapi.AutoSubscriptionCreationOverride{AllowAutoSubscriptionCreation: true}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if r := rawProducer(rc, existing, "", "init"); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("with the namespace override: %v", r)
	}
	if subs, _ := b.Subscriptions(existing); !slices.Equal(subs, []string{"init"}) {
		t.Fatalf("subscriptions with the namespace override: %v, want [init]", subs)
	}
}
