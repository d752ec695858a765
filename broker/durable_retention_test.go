package broker_test

// Retention on the durable store, as upstream's default policy: a topic keeps only what some
// subscription still needs, in whole segments.

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
)

// retentionSegment is small so that a few hundred KiB roll over many segments.
const retentionSegment = 64 << 10

// publishKiB sends n 1 KiB messages, unbatched, so that each is an entry of its own.
func publishKiB(t *testing.T, c pulsar.Client, topic string, n int) {
	t.Helper()
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	msgs := make([]*pulsar.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &pulsar.ProducerMessage{Payload: fmt.Appendf(make([]byte, 0, 1024), "%-1024d", i)}
	}
	sendAll(t, p, msgs, 20*time.Second)
}

// diskUsage returns the number of files in topic's directory (segments, and trimmed segments
// being deleted or kept for reuse) and their total size.
func diskUsage(t *testing.T, dir, topic string) (files int, bytes int64) {
	t.Helper()
	for _, f := range topicFiles(t, dir, topic, "*") {
		fi, err := os.Stat(f)
		if err != nil {
			continue // deleted meanwhile
		}
		files++
		bytes += fi.Size()
	}
	return files, bytes
}

// Once every subscription has acknowledged everything, the topic's disk usage falls to its
// open segment; while one subscription still needs the messages, they stay.
func TestDurableRetentionAfterAcks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	topic := topicName(t)
	const n = 400 // about 6 segments
	b := startStore(t, dir, storage.FileStoreOptions{SegmentSize: retentionSegment})
	c := newClient(t, b)
	early := pulsar.SubscriptionPositionEarliest
	fast := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "fast", SubscriptionInitialPosition: early})
	slow := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "slow", SubscriptionInitialPosition: early})
	publishKiB(t, c, topic, n)
	files, size := diskUsage(t, dir, topic)
	if files < 4 {
		t.Fatalf("%d KiB in %d segment files; want several with %d KiB segments", n, files, retentionSegment>>10)
	}
	t.Logf("before acks: %d segment files, %d bytes", files, size)

	ackAll := func(cons pulsar.Consumer, sub string, n int) {
		t.Helper()
		for _, m := range receiveN(t, cons, n, 20*time.Second) {
			if err := cons.Ack(m); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, 10*time.Second, func() bool {
			st, err := b.TopicStats(topic, broker.StatsOptions{})
			return err == nil && st.Subscriptions[sub].MsgBacklog == 0
		})
	}
	ackAll(fast, "fast", n)
	// The broker has every ack of "fast"; "slow" still needs all of it. A publish kicks the
	// retention check once more before looking.
	publishKiB(t, c, topic, 1)
	ackAll(fast, "fast", 1)
	if got, _ := diskUsage(t, dir, topic); got < files {
		t.Fatalf("with one subscription still behind, %d segment files are left of %d", got, files)
	}

	ackAll(slow, "slow", n+1)
	// Only the open segment is left, and it is no bigger than a segment (plus the record that
	// went over). A trimmed segment's file waits a few seconds for reuse before it goes.
	waitFor(t, 20*time.Second, func() bool {
		files, size := diskUsage(t, dir, topic)
		return files == 1 && size <= retentionSegment+2<<10
	})
	files, size = diskUsage(t, dir, topic)
	t.Logf("after acks: %d segment file, %d bytes", files, size)
}

// On a topic without subscriptions nothing is kept: the segments it rolls over are deleted.
func TestDurableRetentionNoSubscription(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	topic := topicName(t)
	b := startStore(t, dir, storage.FileStoreOptions{SegmentSize: retentionSegment})
	c := newClient(t, b)
	publishKiB(t, c, topic, 400)
	waitFor(t, 20*time.Second, func() bool {
		files, size := diskUsage(t, dir, topic)
		return files == 1 && size <= retentionSegment+2<<10
	})
}
