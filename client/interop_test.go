package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

var codecs = []struct {
	ours     client.Compression
	official pulsar.CompressionType
}{
	{client.NoCompression, pulsar.NoCompression},
	{client.LZ4, pulsar.LZ4},
	{client.ZLIB, pulsar.ZLib},
	{client.ZSTD, pulsar.ZSTD},
	{client.SNAPPY, pulsar.SNAPPY},
}

func payloadFor(i int) []byte {
	// Compressible and not: half the messages repeat, half are varied.
	if i%2 == 0 {
		return []byte(fmt.Sprintf("message %d %s", i, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
	}
	return []byte(fmt.Sprintf("m%d-%x", i, i*7919))
}

func TestOursToOfficial(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	ours := newClient(t, b)
	official := newOfficial(t, b)
	event := time.UnixMilli(1700000000123)
	for _, cd := range codecs {
		for _, batching := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/batching=%v", cd.ours, batching), func(t *testing.T) {
				topic := uniqueTopic(t)
				cons, err := official.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s",
					SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
				if err != nil {
					t.Fatal(err)
				}
				defer cons.Close()
				p := mustProducer(t, ours, client.ProducerOptions{Topic: topic, Compression: cd.ours, DisableBatching: !batching})
				ctx := brokertest.Ctx(t, 15*time.Second)
				const n = 20
				var futs []*client.SendFuture
				for i := range n {
					futs = append(futs, p.SendAsync(ctx, &client.Message{
						Payload: payloadFor(i), Key: fmt.Sprint("key-", i), OrderingKey: fmt.Sprint("ok-", i),
						Properties: map[string]string{"i": fmt.Sprint(i)}, EventTime: event,
					}))
				}
				for i, f := range futs {
					if _, err := f.Wait(ctx); err != nil {
						t.Fatalf("send %d: %v", i, err)
					}
				}
				for i := range n {
					m, err := cons.Receive(ctx)
					if err != nil {
						t.Fatalf("official receive %d: %v", i, err)
					}
					if string(m.Payload()) != string(payloadFor(i)) || m.Key() != fmt.Sprint("key-", i) ||
						m.OrderingKey() != fmt.Sprint("ok-", i) || m.Properties()["i"] != fmt.Sprint(i) || !m.EventTime().Equal(event) {
						t.Fatalf("message %d: payload %q key %q ordering %q props %v event %v", i, m.Payload(), m.Key(), m.OrderingKey(), m.Properties(), m.EventTime())
					}
					if m.ProducerName() != p.Name() {
						t.Errorf("producer name %q, want %q", m.ProducerName(), p.Name())
					}
					cons.Ack(m)
				}
			})
		}
	}
}

func TestOfficialToOurs(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	ours := newClient(t, b)
	official := newOfficial(t, b)
	event := time.UnixMilli(1700000000456)
	for _, cd := range codecs {
		for _, batching := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/batching=%v", cd.ours, batching), func(t *testing.T) {
				topic := uniqueTopic(t)
				cons := mustSubscribe(t, ours, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", InitialPosition: client.Earliest})
				p, err := official.CreateProducer(pulsar.ProducerOptions{Topic: topic, CompressionType: cd.official, DisableBatching: !batching})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				ctx := brokertest.Ctx(t, 15*time.Second)
				const n = 20
				for i := range n {
					p.SendAsync(ctx, &pulsar.ProducerMessage{
						Payload: payloadFor(i), Key: fmt.Sprint("key-", i), OrderingKey: fmt.Sprint("ok-", i),
						Properties: map[string]string{"i": fmt.Sprint(i)}, EventTime: event,
					}, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
						if err != nil {
							t.Errorf("official send: %v", err)
						}
					})
				}
				if err := p.FlushWithCtx(ctx); err != nil {
					t.Fatal(err)
				}
				msgs := receiveN(t, cons, n, 15*time.Second)
				for i, m := range msgs {
					if string(m.Payload) != string(payloadFor(i)) || m.Key != fmt.Sprint("key-", i) ||
						m.OrderingKey != fmt.Sprint("ok-", i) || m.Properties["i"] != fmt.Sprint(i) || !m.EventTime.Equal(event) {
						t.Fatalf("message %d: payload %q key %q ordering %q props %v event %v", i, m.Payload, m.Key, m.OrderingKey, m.Properties, m.EventTime)
					}
					if m.ProducerName != p.Name() {
						t.Errorf("producer name %q, want %q", m.ProducerName, p.Name())
					}
					if batching != (m.ID.BatchIndex >= 0) {
						t.Errorf("batching=%v but id %+v", batching, m.ID)
					}
					cons.Ack(m)
				}
			})
		}
	}
}

func TestDelayedDeliveryInterop(t *testing.T) {
	t.Parallel()
	// Strict: by upstream's default a message due within a tick goes at once, up to a tick early.
	b := pulsartest.Start(t, pulsartest.Conf("delayedDeliveryTickTimeMillis", "50"),
		pulsartest.Conf("isDelayedDeliveryDeliverAtTimeStrict", "true"))
	ours := newClient(t, b)
	official := newOfficial(t, b)
	const delay = 700 * time.Millisecond

	t.Run("ours-to-official", func(t *testing.T) {
		topic := uniqueTopic(t)
		cons, err := official.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Shared})
		if err != nil {
			t.Fatal(err)
		}
		defer cons.Close()
		p := mustProducer(t, ours, client.ProducerOptions{Topic: topic})
		ctx := brokertest.Ctx(t, 10*time.Second)
		start := time.Now()
		if _, err := p.Send(ctx, &client.Message{Payload: []byte("later"), DeliverAfter: delay}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(ctx, &client.Message{Payload: []byte("now")}); err != nil {
			t.Fatal(err)
		}
		first, err := cons.Receive(ctx)
		if err != nil || string(first.Payload()) != "now" {
			t.Fatalf("first: %v %v", first, err)
		}
		second, err := cons.Receive(ctx)
		if err != nil || string(second.Payload()) != "later" {
			t.Fatalf("second: %v %v", second, err)
		}
		if el := time.Since(start); el < delay-50*time.Millisecond {
			t.Errorf("delayed message after %v, want ≥ %v", el, delay)
		}
	})
	t.Run("official-to-ours", func(t *testing.T) {
		topic := uniqueTopic(t)
		cons := mustSubscribe(t, ours, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.Shared})
		p, err := official.CreateProducer(pulsar.ProducerOptions{Topic: topic})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		ctx := brokertest.Ctx(t, 10*time.Second)
		start := time.Now()
		if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("later"), DeliverAfter: delay}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("now")}); err != nil {
			t.Fatal(err)
		}
		msgs := receiveN(t, cons, 2, 10*time.Second)
		if string(msgs[0].Payload) != "now" || string(msgs[1].Payload) != "later" {
			t.Fatalf("order: %q, %q", msgs[0].Payload, msgs[1].Payload)
		}
		if el := time.Since(start); el < delay-50*time.Millisecond {
			t.Errorf("delayed message after %v, want ≥ %v", el, delay)
		}
	})
}

func TestKeyPartitionMatchesOfficial(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Conf("allowAutoTopicCreationType", "partitioned"),
		pulsartest.Conf("defaultNumPartitions", "5"))
	ours := newClient(t, b)
	official := newOfficial(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)
	for _, scheme := range []struct {
		ours     client.HashingScheme
		official pulsar.HashingScheme
	}{{client.JavaStringHash, pulsar.JavaStringHash}, {client.Murmur3_32Hash, pulsar.Murmur3_32Hash}} {
		topic := uniqueTopic(t)
		keys := []string{"a", "order-42", "customer/7", "zzzzzzzzzzzzzzzzzzzz", "ключ", "日本語のキー", "🙂", "K"}
		op, err := official.CreateProducer(pulsar.ProducerOptions{Topic: topic, HashingScheme: scheme.official})
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		p := mustProducer(t, ours, client.ProducerOptions{Topic: topic, HashingScheme: scheme.ours})
		for _, k := range keys {
			oid, err := op.Send(ctx, &pulsar.ProducerMessage{Payload: []byte(k), Key: k})
			if err != nil {
				t.Fatal(err)
			}
			id, err := p.Send(ctx, &client.Message{Payload: []byte(k), Key: k})
			if err != nil {
				t.Fatal(err)
			}
			if id.Partition != oid.PartitionIdx() {
				t.Errorf("scheme %v key %q: ours on partition %d, official on %d", scheme.ours, k, id.Partition, oid.PartitionIdx())
			}
		}
	}
}
