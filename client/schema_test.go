package client_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

type order struct {
	ID    int    `json:"id" avro:"id"`
	Item  string `json:"item" avro:"item"`
	Price int    `json:"price" avro:"price"`
}

const orderAvro = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"},{"name":"price","type":"int"}]}`

func TestSchemas(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)

	t.Run("json typed and auto-consume", func(t *testing.T) {
		topic := uniqueTopic(t)
		auto := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "auto", Schema: client.AutoConsumeSchema{}})
		typed := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "typed", Schema: client.JSONSchema{Definition: orderAvro}})
		p := mustProducer(t, c, client.ProducerOptions{Topic: topic, Schema: client.JSONSchema{Definition: orderAvro}})
		if _, err := p.Send(ctx, &client.Message{Value: order{ID: 1, Item: "book", Price: 12}}); err != nil {
			t.Fatal(err)
		}
		m, err := typed.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var o order
		if err := m.Decode(&o); err != nil || o.Item != "book" {
			t.Fatalf("typed decode: %+v %v", o, err)
		}
		m, err = auto.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.DecodeGeneric(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if mv, ok := v.(map[string]any); !ok || mv["item"] != "book" {
			t.Fatalf("auto-consume value %#v", v)
		}
	})

	t.Run("avro from the official client, auto-consume", func(t *testing.T) {
		topic := uniqueTopic(t)
		auto := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "auto", Schema: client.AutoConsumeSchema{}})
		off := newOfficial(t, b)
		p, err := off.CreateProducer(pulsar.ProducerOptions{Topic: topic, Schema: pulsar.NewAvroSchema(orderAvro, nil)})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := p.Send(ctx, &pulsar.ProducerMessage{Value: &order{ID: 2, Item: "pen", Price: 3}}); err != nil {
			t.Fatal(err)
		}
		m, err := auto.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.DecodeGeneric(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if mv, ok := v.(map[string]any); !ok || mv["item"] != "pen" {
			t.Fatalf("auto-consume avro value %#v", v)
		}
	})

	t.Run("string", func(t *testing.T) {
		topic := uniqueTopic(t)
		cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Schema: client.StringSchema{}})
		p := mustProducer(t, c, client.ProducerOptions{Topic: topic, Schema: client.StringSchema{}})
		if _, err := p.Send(ctx, &client.Message{Value: "hello"}); err != nil {
			t.Fatal(err)
		}
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var s string
		if err := m.Decode(&s); err != nil || s != "hello" {
			t.Fatalf("decode: %q %v", s, err)
		}
	})
}

// TestAutoConsumeOnSubscribe: AUTO_CONSUME is announced on SUBSCRIBE to a v21 broker and
// left out for an upstream (v20) one.
func TestAutoConsumeOnSubscribe(t *testing.T) {
	t.Parallel()
	for _, compat := range []bool{false, true} {
		// internal/brokertest, not pulsartest: the test intercepts the broker's commands.
		b := brokertest.StartBroker(t, func(c *broker.Config) { c.CompatUpstream = compat })
		var sent atomic.Int32 // 1 = no schema, 2 = AutoConsume
		b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
			if s := cmd.GetSubscribe(); s != nil {
				if s.GetSchema().GetType() == pb.Schema_AutoConsume {
					sent.Store(2)
				} else if s.Schema == nil {
					sent.Store(1)
				}
			}
			return broker.Verdict{}
		})
		c := newClient(t, b)
		mustSubscribe(t, c, client.ConsumerOptions{Topic: uniqueTopic(t), SubscriptionName: "s", Schema: client.AutoConsumeSchema{}})
		want := int32(2)
		if compat {
			want = 1
		}
		if got := sent.Load(); got != want {
			t.Errorf("compat=%v: subscribe schema marker %d, want %d", compat, got, want)
		}
	}
}
