package broker_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// setTopicPolicies creates topic and applies fn to its topic-level policies.
func setTopicPolicies(t *testing.T, b *broker.Broker, topic string, fn func(*adminapi.TopicPolicies)) {
	t.Helper()
	if err := b.CreateTopic(topic, nil); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatal(err)
	}
	if err := b.UpdateTopicPolicies(topic, func(tp *adminapi.TopicPolicies) error { fn(tp); return nil }); err != nil {
		t.Fatal(err)
	}
}

func setNamespacePolicies(t *testing.T, b *broker.Broker, ns string, fn func(*adminapi.Policies)) {
	t.Helper()
	if err := b.UpdateNamespacePolicies(ns, func(p *adminapi.Policies) error { fn(p); return nil }); err != nil {
		t.Fatal(err)
	}
}

// A topic's maxMessageSize, below the broker's, refuses a larger SEND with upstream's
// NotAllowedError "Exceed maximum message size" (the connection stays); the chunks of a chunked
// message pass whatever their size, and the official client's chunked message arrives whole.
func TestTopicMaxMessageSize(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	topic := rawTopic(t)
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) { tp.MaxMessageSize = ptrTo(2048) })

	c, _ := connectRaw(t, b, javaClientVersion, 21)
	producerID := c.id()
	name := c.createProducer(topic, producerID)
	c.sendPayload(rawSendCommand(producerID, 0), rawMetadata(name, 0), bytes.Repeat([]byte("x"), 4096))
	e := c.expect(pb.BaseCommand_SEND_ERROR).GetSendError()
	if e.GetError() != pb.ServerError_NotAllowedError || e.GetMessage() != "Exceed maximum message size" || e.GetSequenceId() != 0 {
		t.Fatalf("SEND over the topic's max message size: %v, want NotAllowedError \"Exceed maximum message size\"", e)
	}
	// The connection goes on: a small message, and a chunk over the limit, are stored.
	c.sendPayload(rawSendCommand(producerID, 1), rawMetadata(name, 1), []byte("small"))
	c.expect(pb.BaseCommand_SEND_RECEIPT)
	meta := rawMetadata(name, 2)
	meta.Uuid, meta.NumChunksFromMsg, meta.ChunkId = proto.String(name+"-2"), proto.Int32(2), proto.Int32(0)
	meta.TotalChunkMsgSize = proto.Int32(8192)
	send := rawSendCommand(producerID, 2)
	send.GetSend().IsChunk = proto.Bool(true)
	c.sendPayload(send, meta, bytes.Repeat([]byte("c"), 4096))
	c.expect(pb.BaseCommand_SEND_RECEIPT)

	// The official client: a chunked message of chunks over the topic's limit arrives whole.
	client := newOfficialClient(t, b)
	ctopic := rawTopic(t) + "-chunked"
	setTopicPolicies(t, b, ctopic, func(tp *adminapi.TopicPolicies) { tp.MaxMessageSize = ptrTo(2048) })
	cons, err := client.Subscribe(pulsar.ConsumerOptions{Topic: ctopic, SubscriptionName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	p, err := client.CreateProducer(pulsar.ProducerOptions{Topic: ctopic, EnableChunking: true, DisableBatching: true,
		ChunkMaxMessageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	whole := bytes.Repeat([]byte("0123456789"), 1500)
	if _, err := p.Send(testCtx(t, rawTimeout), &pulsar.ProducerMessage{Payload: whole}); err != nil {
		t.Fatalf("chunked send over the topic's max message size: %v", err)
	}
	m, err := cons.Receive(testCtx(t, rawTimeout))
	if err != nil || !bytes.Equal(m.Payload(), whole) {
		t.Fatalf("chunked message: %v, %d bytes; want the %d sent", err, len(m.Payload()), len(whole))
	}
}

// A Shared subscription stops delivering to a consumer at its maxUnackedMessagesOnConsumer and
// starts again once it has acknowledged half; a subscription at its
// maxUnackedMessagesOnSubscription stops delivering to all its consumers likewise.
func TestOfficialMaxUnackedMessages(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"consumer", "subscription"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			b := startBroker(t)
			c := newClient(t, b)
			topic := topicName(t)
			setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) {
				if level == "consumer" {
					tp.MaxUnackedMessagesOnConsumer = ptrTo(10)
				} else {
					tp.MaxUnackedMessagesOnSubscription = ptrTo(10)
				}
			})
			cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Shared})
			p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
			sendN(t, p, "m", 30)

			first := receiveN(t, cons, 10, 10*time.Second)
			expectNothing(t, cons, 300*time.Millisecond)
			st, err := b.TopicStats(topic, broker.StatsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sub := st.Subscriptions["s"]
			if level == "consumer" && (len(sub.Consumers) != 1 || !sub.Consumers[0].BlockedConsumerOnUnackedMsgs) {
				t.Errorf("consumer stats at the limit: %+v, want blockedConsumerOnUnackedMsgs", sub.Consumers)
			}
			if level == "subscription" && !sub.BlockedSubscriptionOnUnackedMsgs {
				t.Errorf("subscription stats at the limit: blockedSubscriptionOnUnackedMsgs false")
			}
			// Acknowledging 4 leaves 6, over half: still blocked.
			for _, m := range first[:4] {
				cons.Ack(m)
			}
			expectNothing(t, cons, 300*time.Millisecond)
			// The fifth takes it to half: unblocked, 5 more arrive (to the limit again).
			cons.Ack(first[4])
			more := receiveN(t, cons, 5, 10*time.Second)
			if got := payloads(more); !eq(got, seq("m", 10, 15)) {
				t.Fatalf("after acknowledging half received %q, want %q", got, seq("m", 10, 15))
			}
			expectNothing(t, cons, 300*time.Millisecond)
		})
	}
}

// The delayed delivery policy: active, a delayed message waits on a Shared subscription (and
// one due within a tick goes at once, as upstream unless strict); inactive, it goes at once; a
// delay longer than maxDeliveryDelayInMillis is refused with upstream's NotAllowedError.
func TestOfficialDelayedDeliveryPolicy(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	client := newOfficialClient(t, b)
	topic := rawTopic(t)
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) {
		tp.DelayedDeliveryEnabled, tp.DelayedDeliveryTickTimeMillis = ptrTo(true), ptrTo(int64(100))
	})
	cons, err := client.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Shared})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	p, err := client.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := testCtx(t, 20*time.Second)
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("later"), DeliverAfter: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("within a tick"), DeliverAfter: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if m := receiveOne(t, cons, 10*time.Second); string(m.Payload()) != "within a tick" {
		t.Fatalf("received %q first, want the message due within a tick", m.Payload())
	}
	expectNothing(t, cons, 300*time.Millisecond) // "later" waits its hour

	// Delayed delivery off for the topic: the hour-delayed message goes now.
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) { tp.DelayedDeliveryEnabled = ptrTo(false) })
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("kick")}); err != nil {
		t.Fatal(err)
	}
	got := payloads(receiveN(t, cons, 2, 10*time.Second))
	if !sameSet(got, []string{"later", "kick"}) {
		t.Fatalf("with delayed delivery off received %q, want the delayed message at once", got)
	}

	// A maximum delay: a longer deliver-at time is refused.
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) {
		tp.DelayedDeliveryEnabled, tp.DelayedDeliveryMaxDelayInMillis = ptrTo(true), ptrTo(int64(60_000))
	})
	c, _ := connectRaw(t, b, javaClientVersion, 21)
	producerID := c.id()
	name := c.createProducer(topic, producerID)
	meta := rawMetadata(name, 0)
	meta.DeliverAtTime = proto.Int64(int64(meta.GetPublishTime()) + 120_000)
	c.sendPayload(rawSendCommand(producerID, 0), meta, []byte("too late"))
	e := c.expect(pb.BaseCommand_SEND_ERROR).GetSendError()
	if e.GetError() != pb.ServerError_NotAllowedError || e.GetMessage() != "Exceeds max allowed delivery delay of 60000 milliseconds" {
		t.Fatalf("SEND delayed beyond the maximum: %v", e)
	}
}

// subscriptionTypesEnabled refuses other types with upstream's NotAllowedError.
func TestOfficialSubscriptionTypesEnabled(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) { tp.SubscriptionTypesEnabled = []string{"Shared"} })
	if cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "x", Type: pulsar.Exclusive}); err == nil {
		cons.Close()
		t.Fatal("an Exclusive subscription was accepted on a topic that enables Shared only")
	} else if !strings.Contains(err.Error(), "doesn't support Exclusive sub type") {
		t.Fatalf("Exclusive refused with %v, want upstream's reason", err)
	}
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "y", Type: pulsar.Shared})
}

// The subscribe rate: one consumer (its address, name and id) may subscribe that many times a
// period; more is refused with upstream's NotAllowedError.
func TestSubscribeRate(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	b := startRawBroker(t, clk.Use)
	topic := rawTopic(t)
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) {
		tp.SubscribeRate = &adminapi.SubscribeRate{SubscribeThrottlingRatePerConsumer: 2, RatePeriodInSecond: 30}
	})
	c, _ := connectRaw(t, b, javaClientVersion, 21)
	consumerID := c.id()
	subscribeOnce := func() *pb.BaseCommand {
		reqID := c.id()
		c.send(&pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: &pb.CommandSubscribe{
			Topic: proto.String(topic), Subscription: proto.String("s"), SubType: pb.CommandSubscribe_Shared.Enum(),
			ConsumerId: proto.Uint64(consumerID), RequestId: proto.Uint64(reqID), ConsumerName: proto.String("looping"),
		}})
		answer := c.next().Cmd
		if answer.GetType() == pb.BaseCommand_SUCCESS {
			c.request(&pb.BaseCommand{Type: pb.BaseCommand_CLOSE_CONSUMER.Enum(), CloseConsumer: &pb.CommandCloseConsumer{
				ConsumerId: proto.Uint64(consumerID), RequestId: proto.Uint64(c.id())}}, pb.BaseCommand_SUCCESS)
		}
		return answer
	}
	for i := range 2 {
		if a := subscribeOnce(); a.GetType() != pb.BaseCommand_SUCCESS {
			t.Fatalf("subscribe %d within the rate: %v", i, a)
		}
	}
	a := subscribeOnce()
	if a.GetType() != pb.BaseCommand_ERROR || a.GetError().GetError() != pb.ServerError_NotAllowedError ||
		a.GetError().GetMessage() != "Subscribe limited by subscribe rate limit per consumer." {
		t.Fatalf("third subscribe in the period: %v, want NotAllowedError", a)
	}
	clk.Advance(15 * time.Second) // half the period: one more allowed
	if a := subscribeOnce(); a.GetType() != pb.BaseCommand_SUCCESS {
		t.Fatalf("subscribe after half the period: %v", a)
	}
}

// A namespace that requires encryption refuses producers that do not encrypt and messages that
// are not encrypted, as upstream.
func TestEncryptionRequired(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	if err := b.CreateNamespace("public/sealed", nil); err != nil {
		t.Fatal(err)
	}
	setNamespacePolicies(t, b, "public/sealed", func(p *adminapi.Policies) { p.EncryptionRequired = true })
	topic := "persistent://public/sealed/" + strings.TrimPrefix(rawTopic(t), "persistent://public/default/")
	c, _ := connectRaw(t, b, javaClientVersion, 21)
	reqID := c.id()
	e := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
		Topic: proto.String(topic), ProducerId: proto.Uint64(c.id()), RequestId: proto.Uint64(reqID),
	}}, pb.BaseCommand_ERROR).GetError()
	if e.GetError() != pb.ServerError_MetadataError || e.GetMessage() != "Encryption is required in "+topic {
		t.Fatalf("unencrypted producer: %v", e)
	}
	producerID := c.id()
	ps := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
		Topic: proto.String(topic), ProducerId: proto.Uint64(producerID), RequestId: proto.Uint64(c.id()), Encrypted: proto.Bool(true),
	}}, pb.BaseCommand_PRODUCER_SUCCESS).GetProducerSuccess()
	c.sendPayload(rawSendCommand(producerID, 0), rawMetadata(ps.GetProducerName(), 0), []byte("plain"))
	if se := c.expect(pb.BaseCommand_SEND_ERROR).GetSendError(); se.GetError() != pb.ServerError_MetadataError ||
		se.GetMessage() != "Messages must be encrypted" {
		t.Fatalf("unencrypted message: %v", se)
	}
}

// Schema validation enforced refuses a producer without a schema on a topic that has one;
// with automatic schema updates off, a new schema is refused and a known one accepted.
func TestOfficialSchemaValidationAndAutoUpdate(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	schema := func(field string) pulsar.Schema {
		return pulsar.NewJSONSchema(`{"type":"record","name":"E","fields":[{"name":"`+field+`","type":["null","int"],"default":null}]}`, nil)
	}
	createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Schema: schema("a")}).Close()
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) { tp.SchemaValidationEnforced = ptrTo(true) })
	if p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil {
		p.Close()
		t.Fatal("a producer without a schema was accepted on a topic with one, validation enforced")
	} else if !strings.Contains(err.Error(), "SchemaValidationEnforced") {
		t.Fatalf("producer without a schema refused with %v, want upstream's reason", err)
	}

	setNamespacePolicies(t, b, "public/default", func(p *adminapi.Policies) { p.IsAllowAutoUpdateSchema = ptrTo(false) })
	createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Schema: schema("a")}).Close()
	if p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Schema: schema("b")}); err == nil {
		p.Close()
		t.Fatal("a new schema was registered with automatic schema updates off")
	} else if !strings.Contains(err.Error(), "schema auto updating is disabled") {
		t.Fatalf("new schema refused with %v, want upstream's reason", err)
	}
}

// A namespace's subscription auth mode Prefix lets a role consume only through subscriptions
// named after it, with upstream's refusal; superusers and tenant admins are not bound by it.
func TestOfficialSubscriptionAuthModePrefix(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	topic := topicName(t)
	if err := b.GrantNamespacePermission("public/default", "app", []string{"consume"}); err != nil {
		t.Fatal(err)
	}
	setNamespacePolicies(t, b.Broker, "public/default", func(p *adminapi.Policies) { p.SubscriptionAuthMode = policy.SubscriptionAuthPrefix })
	app := tokenClient(t, b.ServiceURL(), b.token(t, "app"))
	_, err := trySubscribe(app, topic, "other")
	want := "AuthorizationError: Failed to create consumer - The subscription name needs to be prefixed by the authentication role, like app-xxxx for topic: " + topic
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("subscribe as other: %v, want %q", err, want)
	}
	cons, err := trySubscribe(app, topic, "app-s")
	if err != nil {
		t.Fatalf("subscribe as app-s: %v", err)
	}
	cons.Close()
	admin := tokenClient(t, b.ServiceURL(), b.token(t, "admin"))
	cons, err = trySubscribe(admin, topic, "other")
	if err != nil {
		t.Fatalf("superuser subscribe as other: %v", err)
	}
	cons.Close()
	// Back to None: any name again.
	setNamespacePolicies(t, b.Broker, "public/default", func(p *adminapi.Policies) { p.SubscriptionAuthMode = policy.SubscriptionAuthNone })
	cons, err = trySubscribe(app, topic, "other")
	if err != nil {
		t.Fatalf("subscribe as other in mode None: %v", err)
	}
	cons.Close()
}

// dispatcherPauseOnAckStatePersistent: while a subscription's acknowledgement holes are more
// ranges than its cursor stores (managedLedgerMaxUnackedRangesToPersist), it reads no new
// entries; acknowledging a hole lets it go on. A second subscription without holes, dispatched
// in the same rounds, shows that the new entries were there to read.
func TestOfficialDispatcherPauseOnAckState(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(c *broker.Config) { c.ManagedLedgerMaxUnackedRangesToPersist = 3 })
	c := newClient(t, b)
	topic := topicName(t)
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) { tp.DispatcherPauseOnAckStatePersistentEnabled = ptrTo(true) })
	holes := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "holes", Type: pulsar.Shared,
		AckWithResponse: true})
	other := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "other", Type: pulsar.Shared})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", 10)
	got := receiveN(t, holes, 10, 10*time.Second)
	receiveN(t, other, 10, 10*time.Second)
	// Acknowledged 0, 2, 4, 6, 8: the mark-delete moves past 0, and 2, 4, 6, 8 are 4 ranges.
	for i := 0; i < 10; i += 2 {
		if err := holes.Ack(got[i]); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, func() bool { // the client has asked for more
		st, err := b.TopicStats(topic, broker.StatsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cs := st.Subscriptions["holes"].Consumers
		return len(cs) == 1 && cs[0].AvailablePermits > 0
	})
	sendN(t, p, "n", 5)
	receiveN(t, other, 5, 10*time.Second)
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out := st.Subscriptions["holes"].MsgOutCounter; out != 10 {
		t.Fatalf("the paused subscription was sent %d messages, want the first 10 only", out)
	}
	// Acknowledging 1 closes a hole: 4, 6, 8 are 3 ranges, within the limit.
	if err := holes.Ack(got[1]); err != nil {
		t.Fatal(err)
	}
	if got := payloads(receiveN(t, holes, 5, 10*time.Second)); !eq(got, seq("n", 0, 5)) {
		t.Fatalf("after the hole closed received %q, want %q", got, seq("n", 0, 5))
	}
}
