package broker_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/letterbox-dev/letterbox/broker"
)

// With allowAutoTopicCreationType=partitioned and 3 default partitions, a new topic is created
// with 3 partitions that the producer spreads messages over; names ending in -DLQ or -RETRY
// are still created non-partitioned.
func TestOfficialPartitionedAutoCreate(t *testing.T) {
	t.Parallel()
	const n = 30
	b := startBroker(t, func(cfg *broker.Config) {
		cfg.AllowAutoTopicCreationType = "partitioned"
		cfg.DefaultNumPartitions = 3
	})
	c := newClient(t, b)
	topic := topicName(t)

	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	parts, err := c.TopicPartitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{topic + "-partition-0", topic + "-partition-1", topic + "-partition-2"}
	if fmt.Sprint(parts) != fmt.Sprint(want) {
		t.Fatalf("partitions %q, want %q", parts, want)
	}
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	if p.Topic() != topic {
		t.Errorf("producer topic %q, want %q", p.Topic(), topic)
	}
	sendN(t, p, "", n)

	last := map[string]int{} // per partition: last sequence received
	got := map[int]bool{}
	for _, m := range receiveN(t, cons, n, 10*time.Second) {
		i, err := strconv.Atoi(string(m.Payload()))
		if err != nil || got[i] {
			t.Fatalf("unexpected or duplicate payload %q", m.Payload())
		}
		got[i] = true
		if !strings.HasPrefix(m.Topic(), topic+"-partition-") {
			t.Fatalf("message from %q, want a partition of %q", m.Topic(), topic)
		}
		if prev, ok := last[m.Topic()]; ok && prev > i {
			t.Fatalf("%s: %d after %d (order within a partition broken)", m.Topic(), i, prev)
		}
		last[m.Topic()] = i
		if m.ID().PartitionIdx() < 0 || m.ID().PartitionIdx() > 2 {
			t.Errorf("message id partition index %d", m.ID().PartitionIdx())
		}
		cons.Ack(m)
	}
	if len(last) != 3 {
		t.Fatalf("messages came from %d partitions, want 3: %v", len(last), last)
	}

	for _, suffix := range []string{"-s-DLQ", "-s-RETRY"} {
		name := topic + suffix
		parts, err := c.TopicPartitions(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(parts) != 1 || parts[0] != name {
			t.Errorf("%s auto-created as %q, want non-partitioned", name, parts)
		}
		dp := createProducer(t, c, pulsar.ProducerOptions{Topic: name})
		if _, err := dp.Send(testCtx(t, 10*time.Second), &pulsar.ProducerMessage{Payload: []byte("x")}); err != nil {
			t.Fatalf("send to %s: %v", name, err)
		}
		if parts, _ := c.TopicPartitions(name); len(parts) != 1 {
			t.Errorf("%s has %d partitions after a producer used it, want non-partitioned", name, len(parts))
		}
	}
}

// A pattern consumer picks up a matching topic created after it subscribed, and ignores one
// that does not match.
func TestOfficialRegexConsumer(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	prefix := "persistent://public/default/" + localName(t)
	pa := createProducer(t, c, pulsar.ProducerOptions{Topic: prefix + "-a"})
	sendN(t, pa, "a", 1)

	cons := subscribe(t, c, pulsar.ConsumerOptions{
		TopicsPattern:               prefix + "-.*",
		SubscriptionName:            "s",
		AutoDiscoveryPeriod:         500 * time.Millisecond,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	if m := receiveOne(t, cons, 10*time.Second); string(m.Payload()) != "a0" || m.Topic() != prefix+"-a" {
		t.Fatalf("got %q from %q, want a0 from %s-a", m.Payload(), m.Topic(), prefix)
	}

	other := createProducer(t, c, pulsar.ProducerOptions{Topic: "persistent://public/default/other-" + localName(t)})
	sendN(t, other, "x", 1)
	pb := createProducer(t, c, pulsar.ProducerOptions{Topic: prefix + "-b"})
	sendN(t, pb, "b", 1)

	m := receiveOne(t, cons, 15*time.Second)
	if string(m.Payload()) != "b0" || m.Topic() != prefix+"-b" {
		t.Fatalf("got %q from %q, want b0 from %s-b", m.Payload(), m.Topic(), prefix)
	}
	cons.Ack(m)
	expectNothing(t, cons, 1500*time.Millisecond) // longer than the discovery period
}
