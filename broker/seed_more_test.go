package broker_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// More of the seed proposals end to end (issue 5): what seed_test.go does not cover.

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
func TestSeedMoreInitialSubscriptionOfficial(t *testing.T) {
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
func TestSeedMoreInitialSubscriptionNotAllowed(t *testing.T) {
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
	if err := b.UpdateNamespacePolicies("public/default", func(p *broker.Policies) error {
		p.AutoSubscriptionCreationOverride = &broker.AutoSubscriptionCreationOverride{AllowAutoSubscriptionCreation: true}
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

// partitionedBroker auto-creates topics partitioned, 3 partitions: DLQ and retry topics must
// still come out non-partitioned.
func partitionedBroker(c *broker.Config) {
	c.AllowAutoTopicCreationType = "partitioned"
	c.DefaultNumPartitions = 3
}

// PIP-263 with the official client: on a broker that auto-creates partitioned topics, the
// retry and DLQ topics of a subscription on a partitioned topic are auto-created with 0
// partitions and marked with their purpose; the legacy names the client probes first are not
// created at all.
func TestSeedMoreLetterTopicsNonPartitionedOfficial(t *testing.T) {
	t.Parallel()
	b := startBroker(t, partitionedBroker)
	c := newClient(t, b)
	topic := topicName(t)
	retry, dlq := topic+"-s-RETRY", topic+"-s-DLQ"
	cons := subscribe(t, c, pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", Type: pulsar.Shared, RetryEnable: true,
		DLQ: &pulsar.DLQPolicy{MaxDeliveries: 2},
	})
	if n, err := b.PartitionedMetadata(topic); err != nil || n != 3 {
		t.Fatalf("source topic: %d partitions, %v; want 3", n, err)
	}
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	sendN(t, p, "m", 1)
	for range 3 { // two retries, then the DLQ (RECONSUMETIMES 3 > MaxDeliveries 2)
		cons.ReconsumeLater(receiveOne(t, cons, 10*time.Second), 10*time.Millisecond)
	}
	waitFor(t, 15*time.Second, func() bool {
		st, err := b.TopicStats(dlq, broker.StatsOptions{})
		return err == nil && st.MsgInCounter == 1
	})
	for _, tc := range []struct{ name, purpose string }{{retry, broker.PurposeRetryLetter}, {dlq, broker.PurposeDeadLetter}} {
		if n, err := b.PartitionedMetadata(tc.name); err != nil || n != 0 {
			t.Errorf("%s: %d partitions, %v; want 0", tc.name, n, err)
		}
		if props, err := b.TopicProperties(tc.name); err != nil || props[broker.PropertyTopicPurpose] != tc.purpose {
			t.Errorf("%s: properties %v, %v; want purpose %q", tc.name, props, err, tc.purpose)
		}
	}
	for _, legacy := range []string{"persistent://public/default/s-RETRY", "persistent://public/default/s-DLQ"} {
		if n, err := b.PartitionedMetadata(legacy); err == nil && n > 0 {
			t.Errorf("legacy name %s was created with %d partitions", legacy, n)
		}
	}
}

// PIP-263: a DLQ of a DLQ and a retry topic of a retry topic are refused with NotAllowedError
// naming the rule, whether the client declares the purpose or only the name implies it, and
// nothing is created — not even partitioned metadata on a broker that auto-creates partitioned
// topics.
func TestSeedMoreLetterOfLetterCreatesNothing(t *testing.T) {
	t.Parallel()
	b := startBroker(t, partitionedBroker)
	src := topicName(t)
	if err := b.CreatePartitionedTopic(src, 3, nil); err != nil {
		t.Fatal(err)
	}
	rc, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	dlq, retry := src+"-s-DLQ", src+"-s-RETRY"
	// The DLQ's purpose comes from its name (its source exists), the retry topic's from
	// topic_purpose.
	if r := rawProducer(rc, dlq, "", ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("DLQ producer: %v", r)
	}
	if r := rawProducer(rc, retry, broker.PurposeRetryLetter, ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("retry producer: %v", r)
	}
	for _, tc := range []struct{ topic, purpose string }{
		{dlq + "-x-DLQ", ""},
		{dlq + "-x-DLQ", broker.PurposeDeadLetter},
		{retry + "-x-RETRY", ""},
		{retry + "-x-RETRY", broker.PurposeRetryLetter},
		{retry + "-x-DLQ", ""},
	} {
		r := rawProducer(rc, tc.topic, tc.purpose, "init")
		if e := r.GetError(); e.GetError() != pb.ServerError_NotAllowedError || !strings.Contains(e.GetMessage(), "cannot have one") {
			t.Errorf("%s (purpose %q): %v, want NotAllowedError naming the rule", tc.topic, tc.purpose, r)
		}
		if _, err := b.TopicStats(tc.topic, broker.StatsOptions{}); !errors.Is(err, broker.ErrNotFound) {
			t.Errorf("%s: stats %v, want not found", tc.topic, err)
		}
		if n, err := b.PartitionedMetadata(tc.topic); !errors.Is(err, broker.ErrNotFound) {
			t.Errorf("%s: partitioned metadata %d, %v; want not found", tc.topic, n, err)
		}
	}
	topics, err := b.Topics("public/default", true)
	if err != nil {
		t.Fatal(err)
	}
	parted, err := b.PartitionedTopics("public/default", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append(topics, parted...) {
		if strings.Contains(n, "-x-") {
			t.Errorf("created anyway: %s", n)
		}
	}
}

const (
	orderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"}]}`
	// orderRequiredEmail adds a field without a default: old data cannot be read with it.
	orderRequiredEmail = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"},{"name":"email","type":"string"}]}`
	// orderOptionalNote adds a field with a default: compatible both ways.
	orderOptionalNote = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"},{"name":"note","type":"string","default":""}]}`
)

// PIP-236 with the official client: on a topic whose Avro schema a producer registered, a
// consumer with an incompatible Avro schema (a required field added, under the default FULL
// strategy) is refused with IncompatibleSchema and registers nothing; a compatible one joins.
func TestSeedMoreIncompatibleAvroConsumer(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	type order struct {
		ID   int    `avro:"id"`
		Item string `avro:"item"`
	}
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Schema: pulsar.NewAvroSchema(orderV1, nil)})
	if _, err := p.Send(testCtx(t, 10*time.Second), &pulsar.ProducerMessage{Value: &order{ID: 1, Item: "book"}}); err != nil {
		t.Fatal(err)
	}
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "strict",
		Schema: pulsar.NewAvroSchema(orderRequiredEmail, nil)})
	if err == nil {
		cons.Close()
		t.Fatal("a consumer with an incompatible Avro schema subscribed")
	}
	if !strings.Contains(err.Error(), "IncompatibleSchema") {
		t.Fatalf("incompatible consumer: %v, want IncompatibleSchema", err)
	}
	// A refused consumer leaves no subscription behind, as upstream.
	if subs, err := b.Subscriptions(topic); err != nil || slices.Contains(subs, "strict") {
		t.Fatalf("subscriptions after the refusal: %v, %v", subs, err)
	}
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "lenient",
		Schema: pulsar.NewAvroSchema(orderOptionalNote, nil)})
	versions, err := b.Schemas(topic)
	if err != nil || len(versions) != 1 || versions[0].Type != "AVRO" {
		t.Fatalf("schemas: %+v, %v; want only the producer's AVRO schema", versions, err)
	}
}
