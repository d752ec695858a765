package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Broker-side behaviour of the four seed proposals, driven by the official Go client and by
// raw frames for what the Go client does not send.

func rawProducer(c *rawConn, topic, purpose, initialSub string) *pb.BaseCommand {
	id := c.id()
	p := &pb.CommandProducer{Topic: &topic, ProducerId: &id, RequestId: &id}
	if purpose != "" {
		p.TopicPurpose = &purpose
	}
	if initialSub != "" {
		p.InitialSubscriptionName = &initialSub
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: p})
	for {
		f := c.next()
		switch f.Cmd.GetType() {
		case pb.BaseCommand_PRODUCER_SUCCESS, pb.BaseCommand_ERROR:
			return f.Cmd
		}
	}
}

// PIP-139: deleting a topic closes its clients with allow_reconnect=false and a reason.
func TestSeedDeleteClosesForGood(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	topic := topicName(t)
	c, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	if r := rawProducer(c, topic, "", ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("producer: %v", r)
	}
	if err := b.DeleteTopic(topic, true); err != nil {
		t.Fatal(err)
	}
	cp := c.expect(pb.BaseCommand_CLOSE_PRODUCER).GetCloseProducer()
	if cp.GetAllowReconnect() || !strings.Contains(cp.GetReason(), "deleted") {
		t.Fatalf("CLOSE_PRODUCER %v: want allow_reconnect=false and a reason", cp)
	}
	// Within the tombstone the name cannot be auto-created again.
	if r := rawProducer(c, topic, "", ""); r.GetError().GetError() != pb.ServerError_TopicNotFound {
		t.Fatalf("producer on the deleted topic: %v, want TopicNotFound", r)
	}
	// Creating it explicitly lifts the tombstone.
	if err := b.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	if r := rawProducer(c, topic, "", ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("producer after an explicit create: %v", r)
	}
}

// In upstream-compat mode the extension fields are not sent.
func TestSeedCompatUpstreamSendsNoExtensions(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, func(c *broker.Config) { c.CompatUpstream = true })
	topic := topicName(t)
	c, connected := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	if connected.GetProtocolVersion() != 20 {
		t.Errorf("compat broker answered protocol %d, want 20", connected.GetProtocolVersion())
	}
	rawProducer(c, topic, "", "")
	if err := b.DeleteTopic(topic, true); err != nil {
		t.Fatal(err)
	}
	cp := c.expect(pb.BaseCommand_CLOSE_PRODUCER).GetCloseProducer()
	if cp.AllowReconnect != nil || cp.Reason != nil {
		t.Fatalf("compat CLOSE_PRODUCER carries extensions: %v", cp)
	}
}

// PIP-139: a namespace is deleted while official producers keep re-creating topics in it, and
// it stays deleted.
func TestSeedNamespaceDeletionWinsOverReconnectingProducers(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	if err := b.CreateTenant("seed", broker.TenantInfo{AllowedClusters: []string{"standalone"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateNamespace("seed/ns", nil); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, b)
	ctx, cancel := context.WithCancel(testCtx(t, 30*time.Second))
	var wg sync.WaitGroup
	for i := range 10 {
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: fmt.Sprintf("persistent://seed/ns/t%d", i), SendTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("x")})
			}
		}()
	}
	waitFor(t, 10*time.Second, func() bool {
		topics, _ := b.Topics("seed/ns", true)
		return len(topics) == 10
	})
	if err := b.DeleteNamespace("seed/ns", true); err != nil {
		t.Fatalf("delete namespace under load: %v", err)
	}
	// The producers keep trying for a while; the namespace must stay gone.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := b.NamespacePolicies("seed/ns"); !errors.Is(err, broker.ErrNotFound) {
			t.Fatalf("namespace came back: %v", err)
		}
		if topics, _ := b.Topics("seed/ns", true); len(topics) > 0 {
			t.Fatalf("topics re-created in the deleted namespace: %v", topics)
		}
		time.Sleep(100 * time.Millisecond) // sampling over the window, not synchronisation
	}
	cancel()
	wg.Wait()
}

// PIP-139 with official clients: a deleted topic is not brought back by the producer's
// reconnection during its tombstone.
func TestSeedDeletedTopicStaysDeleted(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := topicName(t)
	c := newClient(t, b)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	sendN(t, p, "m", 3)
	if err := b.DeleteTopic(topic, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := b.TopicStats(topic, broker.StatsOptions{}); !errors.Is(err, broker.ErrNotFound) {
			t.Fatalf("deleted topic is back: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // sampling over the window, not synchronisation
	}
}

// Termination: an official Go consumer drains a terminated topic and its connection (shared
// with another producer) survives; a non-Go client is told the end was reached.
func TestSeedTerminatedTopicDrains(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic, other := topicName(t), topicName(t, "other")
	c := newClient(t, b)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", 5)
	if _, err := b.TerminateTopic(topic); err != nil {
		t.Fatal(err)
	}
	if got := payloads(receiveN(t, cons, 5, 10*time.Second)); got[4] != "m4" {
		t.Fatalf("drained %v", got)
	}
	// The same client (one connection) still works for another topic.
	po := createProducer(t, c, pulsar.ProducerOptions{Topic: other})
	sendN(t, po, "o", 2)
	if _, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil || !strings.Contains(err.Error(), "TopicTerminated") {
		t.Fatalf("producer on a terminated topic: %v, want TopicTerminatedError", err)
	}

	// A Java-like raw consumer gets REACHED_END_OF_TOPIC once it has everything.
	rc, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	id := rc.id()
	rc.request(&pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: &pb.CommandSubscribe{
		Topic: &topic, Subscription: ptrTo("raw"), SubType: pb.CommandSubscribe_Exclusive.Enum(),
		ConsumerId: &id, RequestId: &id, InitialPosition: pb.CommandSubscribe_Earliest.Enum(),
	}}, pb.BaseCommand_SUCCESS)
	rc.send(&pb.BaseCommand{Type: pb.BaseCommand_FLOW.Enum(), Flow: &pb.CommandFlow{ConsumerId: &id, MessagePermits: ptrTo(uint32(100))}})
	for range 5 {
		rc.expectMessage()
	}
	rc.expect(pb.BaseCommand_REACHED_END_OF_TOPIC)
}

// PIP-263: dead-letter topics are recognised by name (or by topic_purpose) when auto-created,
// and a DLQ of a DLQ is refused; a user's own …-DLQ topic is just a topic.
func TestSeedDLQPurposeAndNoDLQOfDLQ(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := topicName(t)
	c := newClient(t, b)
	cons := subscribe(t, c, pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", Type: pulsar.Shared, NackRedeliveryDelay: 50 * time.Millisecond,
		DLQ: &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: topic + "-s-DLQ", InitialSubscriptionName: "keep"},
	})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	sendN(t, p, "m", 1)
	cons.Nack(receiveOne(t, cons, 10*time.Second))
	dlq := topic + "-s-DLQ"
	// Until the dead letter is stored: the official client's DLQ producer is then fully built.
	// Closing the client while it is still being built is a data race inside that client.
	waitFor(t, 10*time.Second, func() bool {
		props, err := b.TopicProperties(dlq)
		if err != nil || props[broker.PropertyTopicPurpose] != broker.PurposeDeadLetter {
			return false
		}
		st, err := b.TopicStats(dlq, broker.StatsOptions{})
		return err == nil && st.MsgInCounter == 1
	})

	rc, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	// <DLQ>-<sub>-DLQ: its source is itself a dead-letter topic.
	if r := rawProducer(rc, dlq+"-again-DLQ", "", ""); r.GetError().GetError() != pb.ServerError_NotAllowedError {
		t.Fatalf("DLQ of a DLQ: %v, want NotAllowedError", r)
	}
	if r := rawProducer(rc, dlq+"-again-RETRY", "retry letter", ""); r.GetError().GetError() != pb.ServerError_NotAllowedError {
		t.Fatalf("retry topic of a DLQ: %v, want NotAllowedError", r)
	}
	// A user's own topic named …-DLQ that nothing derives from is just a topic, and is marked
	// standard so that nobody takes it for a DLQ by its name.
	own := "persistent://public/default/" + strings.ReplaceAll(localName(t), "-", "") + "mine-DLQ"
	if strings.Count(own, "-") != 1 {
		t.Fatalf("%s: want one dash, so that no topic can be its source", own)
	}
	if r := rawProducer(rc, own, "", ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("own -DLQ topic: %v", r)
	}
	if props, _ := b.TopicProperties(own); props[broker.PropertyTopicPurpose] != broker.PurposeStandard {
		t.Fatalf("own -DLQ topic got purpose %q, want %q", props[broker.PropertyTopicPurpose], broker.PurposeStandard)
	}
	// Other names get no property at all.
	plain := topicName(t, "plain")
	if r := rawProducer(rc, plain, "", ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("plain topic: %v", r)
	}
	if props, _ := b.TopicProperties(plain); len(props) != 0 {
		t.Fatalf("plain topic got properties %v", props)
	}
	// topic_purpose marks a topic whatever its name.
	custom := topicName(t, "parking-lot")
	if r := rawProducer(rc, custom, broker.PurposeDeadLetter, ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("producer with topic_purpose: %v", r)
	}
	if props, _ := b.TopicProperties(custom); props[broker.PropertyTopicPurpose] != broker.PurposeDeadLetter {
		t.Fatalf("topic_purpose not recorded: %v", props)
	}
}

// PIP-124: the initial subscription is created at Earliest, or refused with NotAllowedError
// when subscriptions may not be auto-created.
func TestSeedInitialSubscription(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, func(c *broker.Config) { c.AllowAutoSubscriptionCreation = false })
	rc, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	r := rawProducer(rc, topicName(t), "", "init")
	if r.GetError().GetError() != pb.ServerError_NotAllowedError {
		t.Fatalf("initial subscription with auto-creation off: %v, want NotAllowedError", r)
	}
}

// PIP-236: an AUTO_CONSUME subscription on an empty topic neither registers a schema nor
// blocks the first real one; stats show each consumer's schema type.
func TestSeedAutoConsumeRecorded(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := topicName(t)
	rc, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	id := rc.id()
	rc.request(&pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: &pb.CommandSubscribe{
		Topic: &topic, Subscription: ptrTo("auto"), SubType: pb.CommandSubscribe_Shared.Enum(),
		ConsumerId: &id, RequestId: &id,
		Schema: &pb.Schema{Name: ptrTo("auto"), SchemaData: []byte{}, Type: pb.Schema_AutoConsume.Enum()},
	}}, pb.BaseCommand_SUCCESS)
	c := newClient(t, b)
	js := pulsar.NewJSONSchema(`{"type":"record","name":"Order","fields":[{"name":"id","type":"int"}]}`, nil)
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "typed", Type: pulsar.Shared, Schema: js})
	versions, err := b.Schemas(topic)
	if err != nil || len(versions) != 1 || versions[0].Type != "JSON" {
		t.Fatalf("schemas after a JSON consumer joined an AUTO_CONSUME one: %+v, %v", versions, err)
	}
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, ss := range st.Subscriptions {
		for _, cs := range ss.Consumers {
			got[name] = cs.SchemaType
		}
	}
	if got["auto"] != "AUTO_CONSUME" || got["typed"] != "JSON" {
		t.Fatalf("consumer schema types %v, want auto=AUTO_CONSUME typed=JSON", got)
	}
}

func ptrTo[T any](v T) *T { return &v }
