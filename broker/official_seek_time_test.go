package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
)

// Seek by time as upstream's resetCursor by timestamp: a seek to a time after the last message's
// publish time leaves the cursor after it (its mark-delete position on the last message), so a reader that
// sought to now has nothing next and receives only what is published later. As the official
// client's TestReaderWithSeekByTime: readers from the earliest and from the latest message, on
// partitioned and non-partitioned topics, in memory and durable.
func TestOfficialReaderSeekByTimeToNow(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"memory", "durable"} {
		for _, partitions := range []int{0, 3} {
			for _, start := range []string{"earliest", "latest"} {
				t.Run(fmt.Sprintf("%s/partitions=%d/%s", store, partitions, start), func(t *testing.T) {
					t.Parallel()
					b := startSeekBroker(t, store)
					c := newClient(t, b)
					topic := topicName(t)
					if partitions > 0 {
						if err := b.CreatePartitionedTopic(topic, partitions, nil); err != nil {
							t.Fatal(err)
						}
					}
					p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
					sendN(t, p, "old", 10)
					from := pulsar.EarliestMessageID()
					if start == "latest" {
						from = pulsar.LatestMessageID()
					}
					r := createReader(t, c, pulsar.ReaderOptions{Topic: topic, StartMessageID: from})
					// Publish and seek times are milliseconds, and a message published in the
					// millisecond sought is not before it (upstream's isEntryPublishedEarlierThan
					// is strict): the seek is to a millisecond after the last message's.
					sent := time.Now().UnixMilli()
					waitFor(t, time.Second, func() bool { return time.Now().UnixMilli() > sent })
					if err := r.SeekByTime(time.Now()); err != nil {
						t.Fatalf("seek by time: %v", err)
					}
					if partitions == 0 && r.HasNext() {
						t.Fatal("HasNext after a seek to now: true, want false")
					}
					expectNoRead(t, r, 500*time.Millisecond)
					sendN(t, p, "new", 10)
					got := readN(t, r, 10, 10*time.Second)
					if partitions == 0 {
						if !eq(got, seq("new", 0, 10)) {
							t.Fatalf("after the seek read %q, want %q", got, seq("new", 0, 10))
						}
					} else if !sameSet(got, seq("new", 0, 10)) {
						t.Fatalf("after the seek read %q, want the ten new ones", got)
					}
					expectNoRead(t, r, 200*time.Millisecond)
				})
			}
		}
	}
}

// A fresh consumer of a subscription that acknowledged everything, seeking by time to 0, gets
// all of it again: the open ledger keeps what was acknowledged (upstream's managed ledger frees
// closed ledgers only).
func TestOfficialConsumerSeekByTimeToZero(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"memory", "durable"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			b := startSeekBroker(t, store)
			c := newClient(t, b)
			topic := topicName(t)
			p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
			first := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
			sendN(t, p, "m", 10)
			for _, m := range receiveN(t, first, 10, 10*time.Second) {
				if err := first.Ack(m); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, 10*time.Second, func() bool {
				st, err := b.TopicStats(topic, broker.StatsOptions{})
				return err == nil && st.Subscriptions["s"].MsgBacklog == 0
			})
			first.Close()

			fresh := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
			expectNothing(t, fresh, 200*time.Millisecond)
			if err := fresh.SeekByTime(time.UnixMilli(0)); err != nil {
				t.Fatalf("seek by time to 0: %v", err)
			}
			if got := payloads(receiveN(t, fresh, 10, 10*time.Second)); !eq(got, seq("m", 0, 10)) {
				t.Fatalf("after a seek to 0 received %q, want %q", got, seq("m", 0, 10))
			}
		})
	}
}

// startSeekBroker starts an in-memory or a durable broker.
func startSeekBroker(t *testing.T, store string) *broker.Broker {
	t.Helper()
	if store == "memory" {
		return startBroker(t)
	}
	st, err := storage.OpenFileStore(t.TempDir(), storage.FileStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return startBroker(t, func(c *broker.Config) { c.Store = st })
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}
