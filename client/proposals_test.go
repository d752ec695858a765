package client_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// The four proposals (PIP-124, PIP-263, PIP-139, PIP-236) end to end with our client: what
// upstream_compat_test.go, dlq_test.go and reconnect_test.go do not cover.

// nackAll receives n messages and nacks each, so that with MaxDeliveries 1 their next
// delivery goes to the DLQ.
func nackAll(t *testing.T, cons *client.Consumer, n int) {
	t.Helper()
	for _, m := range receiveN(t, cons, n, 10*time.Second) {
		cons.Nack(m)
	}
}

// PIP-124 with our client: dead letters written before anyone subscribed to the DLQ all reach
// a consumer that subscribes later, at Latest, to the initial subscription — whether the DLQ
// producer auto-created the topic or an admin created it first. The subscription shows in admin
// stats before any consumer attaches.
func TestProposalInitialSubscription(t *testing.T) {
	t.Parallel()
	for _, precreate := range []bool{false, true} {
		name := "auto-created"
		if precreate {
			name = "pre-created"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := pulsartest.Start(t)
			c := newClient(t, b)
			topic := uniqueTopic(t)
			dlq := topic + "-s-DLQ"
			if precreate {
				if err := b.Admin().CreateTopic(brokertest.Ctx(t, 10*time.Second), dlq, 0, nil); err != nil {
					t.Fatal(err)
				}
			}
			cons := mustSubscribe(t, c, client.ConsumerOptions{
				Topic: topic, SubscriptionName: "s", Type: client.Shared, NackRedeliveryDelay: 20 * time.Millisecond,
				DLQ: &client.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq, InitialSubscriptionName: "keep"},
			})
			p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
			publish(t, p, 3)
			nackAll(t, cons, 3)
			brokertest.WaitFor(t, 15*time.Second, "3 dead letters kept by the initial subscription", func() bool {
				st, err := b.Admin().Stats(brokertest.Ctx(t, 10*time.Second), dlq)
				if err != nil {
					return false
				}
				ss, ok := st.Subscriptions["keep"]
				return ok && ss.MsgBacklog == 3 && len(ss.Consumers) == 0
			})
			late := mustSubscribe(t, c, client.ConsumerOptions{Topic: dlq, SubscriptionName: "keep", InitialPosition: client.Latest})
			var got []string
			for _, m := range receiveN(t, late, 3, 10*time.Second) {
				got = append(got, string(m.Payload))
				if m.Properties[client.PropertyRealTopic] != topic || m.Properties[client.PropertyOriginMessageID] == "" {
					t.Errorf("dead letter properties %v", m.Properties)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, []string{"0", "1", "2"}) {
				t.Fatalf("dead letters through the initial subscription: %v", got)
			}
		})
	}
}

// PIP-124 with auto-subscription-creation off: our DLQ producer is refused with
// NotAllowedError, no subscription exists on the DLQ and nothing is written to it. The error
// is permanent, so the router does not spin on it: it nacks the message, which stays in the
// source subscription's backlog.
func TestProposalInitialSubscriptionNotAllowed(t *testing.T) {
	t.Parallel()
	// internal/brokertest, not pulsartest: the test intercepts the broker's commands.
	b := brokertest.StartBroker(t, func(c *broker.Config) { c.AllowAutoSubscriptionCreation = false })
	var refused atomic.Int32
	b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Outbound && cmd.GetError().GetError() == pb.ServerError_NotAllowedError {
			refused.Add(1)
		}
		return broker.Verdict{}
	})
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)
	topic := uniqueTopic(t)
	dlq := topic + "-s-DLQ"

	// The producer the DLQ router makes, made by hand.
	_, err := c.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: "keep",
		TopicPurpose: client.TopicPurposeDeadLetter})
	var se *client.ServerError
	if !errors.Is(err, client.ErrNotAllowed) || !errors.As(err, &se) ||
		!strings.Contains(se.Message, "auto subscription creation is not allowed") {
		t.Fatalf("DLQ producer with auto-subscription-creation off: %v, want NotAllowedError", err)
	}

	// The router itself.
	if err := b.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "s"}); !errors.Is(err, client.ErrSubscriptionNotFound) {
		t.Fatalf("subscribe with auto-subscription-creation off: %v, want SubscriptionNotFound", err)
	}
	if err := b.CreateSubscription(topic, "s", adminapi.MessageID{LedgerID: -1, EntryID: -1}); err != nil {
		t.Fatal(err)
	}
	cons := mustSubscribe(t, c, client.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", Type: client.Shared, NackRedeliveryDelay: 20 * time.Millisecond,
		DLQ: &client.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq, InitialSubscriptionName: "keep"},
	})
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
	publish(t, p, 1)
	before := refused.Load()
	nackAll(t, cons, 1)
	brokertest.WaitFor(t, 10*time.Second, "the router's producer to be refused", func() bool { return refused.Load() > before })
	subs, err := b.Subscriptions(dlq)
	if err != nil && !errors.Is(err, broker.ErrNotFound) {
		t.Fatal(err)
	}
	if len(subs) > 0 {
		t.Fatalf("subscriptions on the DLQ after the refusal: %v", subs)
	}
	if st, err := b.TopicStats(dlq, broker.StatsOptions{}); err == nil && st.MsgInCounter > 0 {
		t.Fatalf("%d messages reached a DLQ nobody could keep", st.MsgInCounter)
	}
	if st, err := b.TopicStats(topic, broker.StatsOptions{}); err != nil || st.Subscriptions["s"].MsgBacklog != 1 {
		t.Fatalf("source stats %v: the refused dead letter must stay in the backlog", err)
	}
}

// PIP-263 with our client: on a broker that auto-creates partitioned topics (3 partitions),
// the retry and DLQ topics of a subscription on a partitioned topic have 0 partitions.
func TestProposalLetterTopicsNonPartitioned(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Conf("allowAutoTopicCreationType", "partitioned"),
		pulsartest.Conf("defaultNumPartitions", "3"))
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 30*time.Second)
	topic := uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", Type: client.Shared, RetryEnable: true,
		DLQ: &client.DLQPolicy{MaxDeliveries: 1},
	})
	parts, err := c.TopicPartitions(ctx, topic)
	if err != nil || len(parts) != 3 {
		t.Fatalf("source partitions %v, %v; want 3", parts, err)
	}
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
	publish(t, p, 1)
	for hop := range 2 { // one retry, then the DLQ (RECONSUMETIMES 2 > MaxDeliveries 1)
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("hop %d: %v", hop, err)
		}
		if err := cons.ReconsumeLater(ctx, m, 0, nil); err != nil {
			t.Fatalf("reconsume %d: %v", hop, err)
		}
	}
	for _, name := range []string{topic + "-s-RETRY", topic + "-s-DLQ"} {
		brokertest.WaitFor(t, 10*time.Second, name+" to hold a message", func() bool {
			st, err := b.Admin().Stats(ctx, name)
			return err == nil && st.MsgInCounter > 0
		})
		if n, err := b.Admin().Partitions(ctx, name); err != nil || n != 0 {
			t.Errorf("%s: %d partitions, %v; want 0", name, n, err)
		}
		if parts, err := c.TopicPartitions(ctx, name); err != nil || !slices.Equal(parts, []string{name}) {
			t.Errorf("%s: the client sees partitions %v, %v", name, parts, err)
		}
	}
}

// chained matches a name that carries two DLQ/RETRY suffixes, e.g. …-s-RETRY-s-DLQ.
var chained = regexp.MustCompile(`-(DLQ|RETRY)-.*-(DLQ|RETRY)$`)

// PIP-263: a regex consumer with retry enabled, restarted 5 times over a namespace in which
// its own retry and DLQ topics appear, never extends them: no topic name chains two
// DLQ/RETRY suffixes.
func TestProposalRegexConsumerNoLetterChains(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Namespace("seed/apps"))
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 60*time.Second)
	for round := range 5 {
		topic := fmt.Sprintf("persistent://seed/apps/orders-%d", round)
		if err := b.Admin().CreateTopic(ctx, topic, 0, nil); err != nil {
			t.Fatal(err)
		}
		cons, err := c.Subscribe(ctx, client.ConsumerOptions{
			TopicsPattern: "persistent://seed/apps/.*", AutoDiscoveryPeriod: 50 * time.Millisecond,
			SubscriptionName: "s", Type: client.Shared, InitialPosition: client.Earliest,
			RetryEnable: true, DLQ: &client.DLQPolicy{MaxDeliveries: 1,
				RetryLetterTopic: "persistent://seed/apps/orders-s-RETRY", DeadLetterTopic: "persistent://seed/apps/orders-s-DLQ"},
		})
		if err != nil {
			t.Fatalf("round %d: subscribe: %v", round, err)
		}
		p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
		if _, err := p.Send(ctx, &client.Message{Payload: fmt.Appendf(nil, "r%d", round)}); err != nil {
			t.Fatal(err)
		}
		// Retry once, then dead-letter it: both letter topics get written every round.
		for hop := range 2 {
			m, err := cons.Receive(ctx)
			if err != nil {
				t.Fatalf("round %d hop %d: %v", round, hop, err)
			}
			if err := cons.ReconsumeLater(ctx, m, 0, nil); err != nil {
				t.Fatalf("round %d hop %d: reconsume: %v", round, hop, err)
			}
		}
		if err := cons.Close(); err != nil {
			t.Fatalf("round %d: close: %v", round, err)
		}
		p.Close()
	}
	topics, err := b.Admin().Topics(ctx, "seed/apps", true)
	if err != nil {
		t.Fatal(err)
	}
	var letters int
	for _, n := range topics {
		if chained.MatchString(n) {
			t.Errorf("a letter topic of a letter topic: %s", n)
		}
		if strings.HasSuffix(n, "-RETRY") || strings.HasSuffix(n, "-DLQ") {
			letters++
		}
	}
	if letters == 0 {
		t.Fatalf("no retry or DLQ topic was ever written: %v", topics)
	}
	t.Logf("topics: %v", topics)

	// Without explicit names a pattern consumer cannot derive them: refused, nothing created.
	_, err = c.Subscribe(ctx, client.ConsumerOptions{
		TopicsPattern: "persistent://seed/apps/.*", SubscriptionName: "t", RetryEnable: true,
	})
	if !errors.Is(err, client.ErrInvalidConfig) {
		t.Fatalf("pattern consumer with retry and no letter topics: %v, want ErrInvalidConfig", err)
	}
}

// PIP-139: after a forced topic deletion our client reports the typed error with the broker's
// reason and makes no further attempt — no new connection, no PRODUCER or SUBSCRIBE for that
// topic — while the connection keeps serving other topics.
func TestProposalDeletedTopicNoReconnect(t *testing.T) {
	t.Parallel()
	// internal/brokertest, not pulsartest: the test intercepts the broker's commands.
	b := brokertest.StartBroker(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)
	topic := uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if m, err := cons.Receive(ctx); err != nil || string(m.Payload) != "x" {
		t.Fatalf("before the deletion: %v, %v", m, err)
	}
	var deleted atomic.Bool
	attempts := make(chan string, 100)
	b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir != broker.Inbound || !deleted.Load() {
			return broker.Verdict{}
		}
		var what string
		switch {
		case cmd.GetType() == pb.BaseCommand_CONNECT:
			what = "CONNECT"
		case cmd.GetProducer().GetTopic() == topic:
			what = "PRODUCER"
		case cmd.GetSubscribe().GetTopic() == topic:
			what = "SUBSCRIBE"
		case cmd.GetLookupTopic().GetTopic() == topic:
			what = "LOOKUP"
		}
		if what != "" {
			select {
			case attempts <- what:
			default:
			}
		}
		return broker.Verdict{}
	})
	deleted.Store(true)
	if err := b.DeleteTopic(topic, true); err != nil {
		t.Fatal(err)
	}
	var be *client.BrokerClosedError
	if _, err := cons.Receive(ctx); !errors.As(err, &be) || !strings.Contains(be.Reason, "deleted") {
		t.Fatalf("receive after the deletion: %v, want BrokerClosedError with the reason", err)
	}
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("y")}); !errors.As(err, &be) || !strings.Contains(be.Reason, "deleted") {
		t.Fatalf("send after the deletion: %v, want BrokerClosedError with the reason", err)
	}
	// Upstream's first reconnect comes after 100 ms; a quiet 2 s proves there is none.
	select {
	case what := <-attempts:
		t.Fatalf("a %s attempt after the topic was deleted for good", what)
	case <-time.After(2 * time.Second):
	}
	// The same client (and connection) still works for another topic.
	other := mustProducer(t, c, client.ProducerOptions{Topic: uniqueTopic(t)})
	if _, err := other.Send(ctx, &client.Message{Payload: []byte("z")}); err != nil {
		t.Fatal(err)
	}
	select {
	case what := <-attempts:
		t.Fatalf("a %s after the topic was deleted for good", what)
	default:
	}
}

const (
	orderV1Avro = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"}]}`
	// orderV2Avro adds a field with a default: compatible with v1 under FULL.
	orderV2Avro = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"},{"name":"note","type":"string","default":""}]}`
	// orderStrictAvro adds a field without a default: old data cannot be read with it.
	orderStrictAvro = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"},{"name":"email","type":"string"}]}`
)

type orderV1 struct {
	ID   int    `json:"id" avro:"id"`
	Item string `json:"item" avro:"item"`
}

type orderV2 struct {
	ID   int    `json:"id" avro:"id"`
	Item string `json:"item" avro:"item"`
	Note string `json:"note" avro:"note"`
}

// PIP-236: an AUTO_CONSUME consumer decodes each message with the schema version it was
// written with — two Avro versions and two JSON versions on one topic each.
func TestProposalAutoConsumeSchemaVersions(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 30*time.Second)
	avro1, err := client.NewAvroSchema(orderV1Avro)
	if err != nil {
		t.Fatal(err)
	}
	avro2, err := client.NewAvroSchema(orderV2Avro)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		v1, v2 client.Schema
	}{
		{"avro", avro1, avro2},
		{"json", client.JSONSchema{Definition: orderV1Avro}, client.JSONSchema{Definition: orderV2Avro}},
	} {
		topic := uniqueTopic(t)
		auto := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "auto", Schema: client.AutoConsumeSchema{}})
		p1 := mustProducer(t, c, client.ProducerOptions{Topic: topic, Schema: tc.v1})
		if _, err := p1.Send(ctx, &client.Message{Value: orderV1{ID: 1, Item: "book"}}); err != nil {
			t.Fatalf("%s v1: %v", tc.name, err)
		}
		p2 := mustProducer(t, c, client.ProducerOptions{Topic: topic, Schema: tc.v2})
		if _, err := p2.Send(ctx, &client.Message{Value: orderV2{ID: 2, Item: "pen", Note: "gift"}}); err != nil {
			t.Fatalf("%s v2: %v", tc.name, err)
		}
		if versions, err := b.Admin().Schemas(ctx, topic); err != nil || len(versions) != 2 {
			t.Fatalf("%s: schema versions %+v, %v; want 2", tc.name, versions, err)
		}
		msgs := receiveN(t, auto, 2, 10*time.Second)
		if string(msgs[0].SchemaVersion) == string(msgs[1].SchemaVersion) {
			t.Fatalf("%s: both messages carry schema version %x", tc.name, msgs[0].SchemaVersion)
		}
		var got []map[string]any
		for _, m := range msgs {
			v, err := m.DecodeGeneric(ctx)
			if err != nil {
				t.Fatalf("%s: decode: %v", tc.name, err)
			}
			mv, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%s: decoded %#v, want a record", tc.name, v)
			}
			got = append(got, mv)
		}
		if _, has := got[0]["note"]; has || got[0]["item"] != "book" {
			t.Errorf("%s: v1 message decoded as %v", tc.name, got[0])
		}
		if got[1]["note"] != "gift" || got[1]["item"] != "pen" {
			t.Errorf("%s: v2 message decoded as %v", tc.name, got[1])
		}
	}
}

// PIP-236 with our client: a consumer whose Avro schema is incompatible with the topic's (a
// required field added, under the default FULL strategy) is refused with IncompatibleSchema.
func TestProposalIncompatibleAvroConsumer(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)
	topic := uniqueTopic(t)
	avro1, err := client.NewAvroSchema(orderV1Avro)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := client.NewAvroSchema(orderStrictAvro)
	if err != nil {
		t.Fatal(err)
	}
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, Schema: avro1})
	if _, err := p.Send(ctx, &client.Message{Value: orderV1{ID: 1, Item: "book"}}); err != nil {
		t.Fatal(err)
	}
	cons, err := c.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "strict", Schema: strict})
	if err == nil {
		cons.Close()
		t.Fatal("a consumer with an incompatible Avro schema subscribed")
	}
	if !errors.Is(err, client.ErrIncompatibleSchema) {
		t.Fatalf("incompatible consumer: %v, want IncompatibleSchema", err)
	}
	// A compatible reader schema joins.
	avro2, _ := client.NewAvroSchema(orderV2Avro)
	mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "lenient", Schema: avro2})
}
