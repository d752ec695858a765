package broker_test

import (
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
)

// startDurable starts a broker on data directory dir.
func startDurable(t *testing.T, dir string, mods ...func(*broker.Config)) *broker.Broker {
	t.Helper()
	store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return startBroker(t, append([]func(*broker.Config){func(c *broker.Config) { c.Store = store }}, mods...)...)
}

// A graceful restart keeps subscriptions with their cursors, partition counts, topic
// properties and schemas.
func TestDurableRestartKeepsState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	topic := topicName(t)
	parted := topicName(t, "parted")
	schema := pulsar.NewStringSchema(nil)

	b := startDurable(t, dir, func(c *broker.Config) { c.AllowAutoTopicCreationType = "partitioned"; c.DefaultNumPartitions = 3 })
	if err := b.CreateTopic(topic, map[string]string{"owner": "team-a"}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, b)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Schema: schema})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Schema: schema, DisableBatching: true})
	sendN(t, p, "m", 10)
	for _, m := range receiveN(t, cons, 5, 10*time.Second) {
		if err := cons.Ack(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.TopicPartitions(parted); err != nil {
		t.Fatal(err)
	}
	// Acks travel in groups; wait until the broker has them all before stopping it.
	waitFor(t, 10*time.Second, func() bool {
		st, err := b.TopicStats(topic, broker.StatsOptions{})
		return err == nil && st.Subscriptions["s"].MsgBacklog == 5
	})
	cons.Close()
	p.Close()
	c.Close()
	b.Close()

	b2 := startDurable(t, dir)
	c2 := newClient(t, b2)
	parts, err := c2.TopicPartitions(parted)
	if err != nil || len(parts) != 3 {
		t.Fatalf("partitions after restart: %v, %v", parts, err)
	}
	props, err := b2.TopicProperties(topic)
	if err != nil || props["owner"] != "team-a" {
		t.Fatalf("properties after restart: %v, %v", props, err)
	}
	// The backlog counts across the ledger the restart opened.
	if st, err := b2.TopicStats(topic, broker.StatsOptions{}); err != nil || st.Subscriptions["s"].MsgBacklog != 5 {
		t.Fatalf("backlog after restart: %+v, %v", st, err)
	}
	cons2 := subscribe(t, c2, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Schema: schema})
	got := payloads(receiveN(t, cons2, 5, 10*time.Second))
	for i, want := range []string{"m5", "m6", "m7", "m8", "m9"} {
		if got[i] != want {
			t.Fatalf("after restart got %v, want m5..m9", got)
		}
	}
	expectNothing(t, cons2, 300*time.Millisecond)
	// The schema survived as the only version.
	if versions, err := b2.Schemas(topic); err != nil || len(versions) != 1 {
		t.Fatalf("schema versions after restart: %+v, %v", versions, err)
	}
	p2 := createProducer(t, c2, pulsar.ProducerOptions{Topic: topic, Schema: schema, DisableBatching: true})
	if _, err := p2.Send(testCtx(t, 10*time.Second), &pulsar.ProducerMessage{Value: "after"}); err != nil {
		t.Fatal(err)
	}
	if m := receiveOne(t, cons2, 10*time.Second); string(m.Payload()) != "after" {
		t.Errorf("got %q after restart, want after", m.Payload())
	}
	if versions, err := b2.Schemas(topic); err != nil || len(versions) != 1 {
		t.Fatalf("schema versions after a producer with the same schema: %+v, %v", versions, err)
	}
}

// With deduplication on, a producer that comes back under the same name continues after its
// last stored sequence id, across a restart, and a resent message is not stored twice.
func TestDurableDeduplicationSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	topic := topicName(t)
	dedup := func(c *broker.Config) { c.BrokerDeduplicationEnabled = true }

	b := startDurable(t, dir, dedup)
	c := newClient(t, b)
	// A subscription keeps the messages: without one the default policy keeps nothing.
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"}).Close()
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Name: "dedup-p", DisableBatching: true})
	sendN(t, p, "m", 5)
	if got := p.LastSequenceID(); got != 4 {
		t.Fatalf("last sequence id %d, want 4", got)
	}
	p.Close()
	c.Close()
	b.Close()

	b2 := startDurable(t, dir, dedup)
	c2 := newClient(t, b2)
	p2 := createProducer(t, c2, pulsar.ProducerOptions{Topic: topic, Name: "dedup-p", DisableBatching: true})
	// An explicit sequence id at or below the mark is a duplicate: acknowledged, not stored.
	ctx := testCtx(t, 10*time.Second)
	dupSeq := int64(3)
	if _, err := p2.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("dup"), SequenceID: &dupSeq}); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	// The producer continued from the mark the restarted broker reported (4), not from 0.
	if got := p2.LastSequenceID(); got != 5 {
		t.Fatalf("after restart the producer's last sequence id is %d, want 5", got)
	}
	r, err := c2.CreateReader(pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	for r.HasNext() {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Payload()))
	}
	want := []string{"m0", "m1", "m2", "m3", "m4", "new"}
	if len(got) != len(want) {
		t.Fatalf("topic holds %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("topic holds %v, want %v", got, want)
		}
	}
}
