package broker_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// What a topic is for (PIP-263): dead-letter and retry topics recognised by name or declared
// purpose when auto-created, never partitioned, and no letter topic of a letter topic.

// PIP-263: dead-letter topics are recognised by name (or by topic_purpose) when auto-created,
// and a DLQ of a DLQ is refused; a user's own …-DLQ topic is just a topic.
func TestDLQPurposeAndNoDLQOfDLQ(t *testing.T) {
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
func TestLetterTopicsNonPartitionedOfficial(t *testing.T) {
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
func TestLetterOfLetterCreatesNothing(t *testing.T) {
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
