package broker_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// storedDedup is the deduplication snapshot the store holds for topic: producer name → highest
// sequence id (nil: none taken yet).
func storedDedup(t *testing.T, store storage.Store, topic string) map[string]int64 {
	t.Helper()
	v, ok, err := store.Metadata().Get(storage.BucketDedup, topic)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return nil
	}
	var rec struct {
		Seqs map[string]int64 `json:"seqs"`
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Seqs
}

// storedMarkDelete is the entry of the mark-delete position the store holds for topic's
// subscription sub (−2: none stored).
func storedMarkDelete(t *testing.T, store storage.Store, topic, sub string) int64 {
	t.Helper()
	v, ok, err := store.Metadata().Get(storage.BucketCursors, topic+"\x00"+sub)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return -2
	}
	var rec struct {
		MarkDelete [2]int64 `json:"markDelete"`
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.MarkDelete[1]
}

// The deduplication snapshot interval (a topic policy here) decides when a topic's producer
// sequence ids are snapshotted, on the broker's clock: not while the interval has not passed
// (the cursor written in the same flush proves the flush looked), then at the first flush after
// it. brokerDeduplicationEntriesInterval snapshots after that many entries whatever the time.
func TestDedupSnapshotInterval(t *testing.T) {
	t.Parallel()
	t.Run("interval", func(t *testing.T) {
		t.Parallel()
		clk := newFakeClock()
		store, err := storage.OpenFileStore(t.TempDir(), storage.FileStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := startBroker(t, clk.Use, func(c *broker.Config) { c.Store = store })
		topic := topicName(t)
		setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) {
			on, interval := true, 10
			tp.DeduplicationEnabled, tp.DeduplicationSnapshotIntervalSeconds = &on, &interval
		})
		c := newClient(t, b)
		cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
		p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Name: "p", DisableBatching: true})
		sendN(t, p, "m", 1)
		for _, m := range receiveN(t, cons, 1, 10*time.Second) {
			if err := cons.Ack(m); err != nil {
				t.Fatal(err)
			}
		}
		// The acknowledgement is written by a flush that came after the message was stored.
		waitFor(t, 10*time.Second, func() bool { return storedMarkDelete(t, store, topic, "s") == 0 })
		if seqs := storedDedup(t, store, topic); seqs != nil {
			t.Fatalf("snapshot taken before its interval: %v", seqs)
		}
		clk.Advance(10 * time.Second)
		waitFor(t, 10*time.Second, func() bool { return storedDedup(t, store, topic)["p"] == 0 })
	})
	t.Run("entries", func(t *testing.T) {
		t.Parallel()
		store, err := storage.OpenFileStore(t.TempDir(), storage.FileStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A fake clock that never moves: only the entries can make the snapshot due.
		b := startBroker(t, newFakeClock().Use, func(c *broker.Config) {
			c.Store = store
			c.BrokerDeduplicationEnabled = true
			c.BrokerDeduplicationEntriesInterval = 3
		})
		topic := topicName(t)
		c := newClient(t, b)
		p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, Name: "p", DisableBatching: true})
		sendN(t, p, "m", 3)
		waitFor(t, 10*time.Second, func() bool { return storedDedup(t, store, topic)["p"] == 2 })
	})
}
