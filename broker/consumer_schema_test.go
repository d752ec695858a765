package broker_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// A subscribing consumer's schema (PIP-236): AUTO_CONSUME registers nothing, a typed consumer
// must be compatible with the topic's schema.

// PIP-236: an AUTO_CONSUME subscription on an empty topic neither registers a schema nor
// blocks the first real one; stats show each consumer's schema type.
func TestAutoConsumeRecorded(t *testing.T) {
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

// PIP-236 with the official client: on a topic whose Avro schema a producer registered, a
// consumer with an incompatible Avro schema (a required field added, under the default FULL
// strategy) is refused with IncompatibleSchema and registers nothing; a compatible one joins.
func TestIncompatibleAvroConsumer(t *testing.T) {
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

const (
	orderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"}]}`
	// orderRequiredEmail adds a field without a default: old data cannot be read with it.
	orderRequiredEmail = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"},{"name":"email","type":"string"}]}`
	// orderOptionalNote adds a field with a default: compatible both ways.
	orderOptionalNote = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"},{"name":"note","type":"string","default":""}]}`
)
