package broker_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

type person struct {
	Name string `json:"name" avro:"name"`
	Age  int    `json:"age" avro:"age"`
}

const personSchema = `{"type":"record","name":"Person","namespace":"letterbox.test",` +
	`"fields":[{"name":"name","type":"string"},{"name":"age","type":"int"}]}`

// countGetSchema counts GET_SCHEMA requests reaching b.
func countGetSchema(t testing.TB, b *broker.Broker) *atomic.Int32 {
	var n atomic.Int32
	intercept(t, b, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_GET_SCHEMA {
			n.Add(1)
		}
		return broker.Verdict{}
	})
	return &n
}

// A JSON schema is stored with the producer: messages carry an 8-byte schema version, two
// producers with the same schema share it, a consumer with the schema decodes values, and a
// consumer without one decodes them after fetching the schema by version (GET_SCHEMA).
func TestOfficialSchemaJSON(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	getSchema := countGetSchema(t, b)
	c := newClient(t, b)
	topic := topicName(t)
	typed := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "typed",
		Schema: pulsar.NewJSONSchema(personSchema, nil)})
	untyped := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "untyped"})

	ctx := testCtx(t, 20*time.Second)
	want := []person{{"ada", 36}, {"grace", 85}}
	for _, v := range want {
		p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Schema: pulsar.NewJSONSchema(personSchema, nil)})
		if _, err := p.Send(ctx, &pulsar.ProducerMessage{Value: &v}); err != nil {
			t.Fatalf("send %v: %v", v, err)
		}
	}

	msgs := receiveN(t, typed, 2, 10*time.Second)
	for i, m := range msgs {
		if len(m.SchemaVersion()) != 8 {
			t.Fatalf("message %d schema version %x: want 8 bytes", i, m.SchemaVersion())
		}
		var got person
		if err := m.GetSchemaValue(&got); err != nil {
			t.Fatalf("typed consumer: decode message %d: %v", i, err)
		}
		if got != want[i] {
			t.Errorf("typed consumer: message %d = %+v, want %+v", i, got, want[i])
		}
	}
	if !bytes.Equal(msgs[0].SchemaVersion(), msgs[1].SchemaVersion()) {
		t.Errorf("same schema from two producers got versions %x and %x", msgs[0].SchemaVersion(), msgs[1].SchemaVersion())
	}

	for i, m := range receiveN(t, untyped, 2, 10*time.Second) {
		if len(m.SchemaVersion()) == 0 {
			t.Fatalf("untyped consumer: message %d has no schema version", i)
		}
		var got person
		if err := m.GetSchemaValue(&got); err != nil {
			t.Fatalf("untyped consumer: decode message %d with the fetched schema: %v", i, err)
		}
		if got != want[i] {
			t.Errorf("untyped consumer: message %d = %+v, want %+v", i, got, want[i])
		}
	}
	if getSchema.Load() == 0 {
		t.Error("no GET_SCHEMA reached the broker")
	}
}

// An Avro schema: a reader with the same schema decodes what the producer wrote.
func TestOfficialSchemaAvro(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Schema: pulsar.NewAvroSchema(personSchema, nil)})
	ctx := testCtx(t, 20*time.Second)
	want := person{"edsger", 72}
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Value: &want}); err != nil {
		t.Fatal(err)
	}
	r := createReader(t, c, pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID(),
		Schema: pulsar.NewAvroSchema(personSchema, nil)})
	m, err := r.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got person
	if err := m.GetSchemaValue(&got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got != want {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	if len(m.SchemaVersion()) != 8 {
		t.Errorf("schema version %x: want 8 bytes", m.SchemaVersion())
	}
}
