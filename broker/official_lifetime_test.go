package broker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
)

// produceAll sends n messages "<prefix><i>" of at least size bytes, one entry each, and
// waits for every receipt.
func produceAll(t *testing.T, p pulsar.Producer, prefix string, n, size int) {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := range n {
		payload := fmt.Appendf(nil, "%s%d", prefix, i)
		if len(payload) < size {
			payload = append(payload, make([]byte, size-len(payload))...)
		}
		wg.Add(1)
		p.SendAsync(ctx, &pulsar.ProducerMessage{Payload: payload}, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("producing %d messages: %v", n, firstErr)
	}
}

// receiveInOrder receives "<prefix><from>" … "<prefix><to−1>" in order, acknowledging each,
// and returns the first one's id.
func receiveInOrder(t *testing.T, c pulsar.Consumer, prefix string, from, to int) (first pulsar.MessageID) {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	for i := from; i < to; i++ {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatalf("received %d of %d messages: %v", i-from, to-from, err)
		}
		want := fmt.Sprintf("%s%d", prefix, i)
		if got := string(m.Payload()[:min(len(m.Payload()), len(want))]); got != want || len(m.Payload()) > len(want) && m.Payload()[len(want)] != 0 {
			t.Fatalf("message #%d is %q, want %q", i-from, got, want)
		}
		if err := c.Ack(m); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = m.ID()
		}
	}
	return first
}

// settle waits until the broker has taken every acknowledgement of sub (no backlog), then a
// little longer, so that whatever trimming the acknowledgements cause has happened.
func settle(t *testing.T, b *broker.Broker, topic, sub string) {
	t.Helper()
	waitFor(t, 30*time.Second, func() bool {
		st, err := b.TopicStats(topic, broker.StatsOptions{})
		if err != nil {
			return false
		}
		ss, ok := st.Subscriptions[sub]
		return ok && ss.MsgBacklog == 0
	})
	time.Sleep(300 * time.Millisecond) // a dispatch round or two: not a timed assertion
}

// upstreamRollover is an in-memory broker's configuration with upstream's minimum ledger age
// (managedLedgerMinLedgerRolloverTimeMinutes=10, upstream's default) set in broker.conf: in
// memory, ledgers are otherwise full at 2 MiB and closed at once.
func upstreamRollover(t *testing.T) func(*broker.Config) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("managedLedgerMinLedgerRolloverTimeMinutes=10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := broker.LoadConf(conf, broker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return func(c *broker.Config) { c.Rollover = cfg.Rollover }
}

// Upstream frees data a closed ledger at a time: with the default rollover (50,000 entries and
// ten minutes), 10,000 messages produced before anyone subscribes all reach a subscription from
// the earliest position, and after all of them were acknowledged a seek to the earliest
// position replays them all, since the topic's first ledger is still open. On disk, and in
// memory with upstream's minimum ledger age in broker.conf; small messages, and large ones
// that the broker reads into pooled buffers.
func TestOfficialOpenLedgerStaysReadable(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"memory", "durable"} {
		for _, tc := range []struct {
			name    string
			n, size int
		}{{"small", 10_000, 100}, {"large", 300, 40 << 10}} {
			t.Run(store+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				var b *broker.Broker
				if store == "memory" {
					b = startBroker(t, upstreamRollover(t))
				} else {
					b = startDurable(t, t.TempDir())
				}
				c := newClient(t, b)
				topic := topicName(t)
				p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
				produceAll(t, p, "m", tc.n, tc.size)

				// Inclusive: a seek to the first message's id is a seek to the earliest position
				// (the official client does not seek a consumer to EarliestMessageID).
				cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive,
					SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest, StartMessageIDInclusive: true})
				first := receiveInOrder(t, cons, "m", 0, tc.n)
				settle(t, b, topic, "s")
				if err := cons.Seek(first); err != nil {
					t.Fatalf("seek: %v", err)
				}
				receiveInOrder(t, cons, "m", 0, tc.n)
			})
		}
	}
}

// In memory, by default, a ledger is full at 2 MiB and closed at once, whatever its age,
// so that what every subscription acknowledged is freed soon after: after 12 MiB of messages
// of 1 KiB (copied into the store's slabs) and 40 KiB (kept in the buffers they arrived in)
// were acknowledged, the store holds about one ledger's worth, and a seek to the earliest
// position replays the open ledger only, in order.
func TestOfficialInMemoryFreesAcknowledgedLedgers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		n, size int
	}{{"small", 12_000, 1 << 10}, {"large", 300, 40 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := startBroker(t)
			c := newClient(t, b)
			topic := topicName(t)
			cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive,
				StartMessageIDInclusive: true})
			p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
			produceAll(t, p, "m", tc.n, tc.size)
			first := receiveInOrder(t, cons, "m", 0, tc.n)
			settle(t, b, topic, "s")
			ledger := int64(storage.DefaultMemoryLedgerBytes)
			waitFor(t, 30*time.Second, func() bool {
				inUse, _ := b.MemoryBudget()
				return inUse < 2*ledger
			})
			st, err := b.InternalStats(topic)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Ledgers) != 1 || st.CurrentLedgerEntries >= int64(tc.n) {
				t.Fatalf("%d ledgers kept, %d entries in the open one: want the open ledger only", len(st.Ledgers), st.CurrentLedgerEntries)
			}
			if err := cons.Seek(first); err != nil {
				t.Fatalf("seek: %v", err)
			}
			from := tc.n - int(st.CurrentLedgerEntries)
			receiveInOrder(t, cons, "m", from, tc.n)
			expectNothing(t, cons, 200*time.Millisecond)
		})
	}
}

// A topic without subscriptions keeps what it was sent for upstream's minimum ledger age, in
// memory too, where ledgers close as soon as they are full: 12 MiB produced before anyone
// subscribes all reach a subscription from the earliest position, as against upstream.
func TestOfficialInMemoryKeepsWhatNobodyRead(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	produceAll(t, p, "m", 300, 40<<10)
	waitFor(t, 30*time.Second, func() bool {
		st, err := b.InternalStats(topic)
		return err == nil && len(st.Ledgers) > 3 // several ledgers closed, none of them freed
	})
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "late", Type: pulsar.Exclusive,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	receiveInOrder(t, cons, "m", 0, 300)
}

// Ledgers roll over as managedLedgerMaxEntriesPerLedger and
// managedLedgerMinLedgerRolloverTimeMinutes say (here 100 entries, no minimum age), and the
// acknowledged closed ledgers are freed, whole: after acknowledging 250 messages a seek to the
// earliest position replays the open ledger's 50.
func TestOfficialClosedLedgersAreFreed(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("managedLedgerMaxEntriesPerLedger=100\nmanagedLedgerMinLedgerRolloverTimeMinutes=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"memory", "durable"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			cfg, err := broker.LoadConf(conf, broker.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if want := (storage.Rollover{MaxEntries: 100, MinAge: -1}); cfg.Rollover != want {
				t.Fatalf("rollover from %s: %+v, want %+v", conf, cfg.Rollover, want)
			}
			apply := func(c *broker.Config) { c.Rollover = cfg.Rollover }
			var b *broker.Broker
			if store == "memory" {
				b = startBroker(t, apply)
			} else {
				st, err := storage.OpenFileStore(t.TempDir(), storage.FileStoreOptions{Rollover: cfg.Rollover})
				if err != nil {
					t.Fatal(err)
				}
				b = startBroker(t, apply, func(c *broker.Config) { c.Store = st })
			}
			c := newClient(t, b)
			topic := topicName(t)
			cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive,
				StartMessageIDInclusive: true})
			p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
			produceAll(t, p, "m", 250, 10)
			first := receiveInOrder(t, cons, "m", 0, 250)
			settle(t, b, topic, "s")
			waitFor(t, 30*time.Second, func() bool {
				st, err := b.InternalStats(topic)
				return err == nil && len(st.Ledgers) == 1
			})
			// The first message's ledger is gone: the seek lands on the first one stored.
			if err := cons.Seek(first); err != nil {
				t.Fatalf("seek: %v", err)
			}
			receiveInOrder(t, cons, "m", 200, 250)
			expectNothing(t, cons, 200*time.Millisecond)
		})
	}
}

// A reader's seek by time holds: the reader goes on from the first message published at or
// after the time, as against upstream, instead of reading again from its start (the seek
// closes the reader's consumer, and the official client resubscribes with its start).
func TestOfficialReaderSeekByTime(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "a", 5)
	split := time.Now().UnixMilli() + 1
	waitFor(t, time.Second, func() bool { return time.Now().UnixMilli() >= split })
	sendN(t, p, "b", 5)

	r := createReader(t, c, pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()})
	if got := readN(t, r, 10, 10*time.Second); !eq(got, append(seq("a", 0, 5), seq("b", 0, 5)...)) {
		t.Fatalf("read %q", got)
	}
	if err := r.SeekByTime(time.UnixMilli(split)); err != nil {
		t.Fatalf("seek by time: %v", err)
	}
	if got := readN(t, r, 5, 10*time.Second); !eq(got, seq("b", 0, 5)) {
		t.Fatalf("after seeking to the second half read %q, want %q", got, seq("b", 0, 5))
	}
	expectNoRead(t, r, 200*time.Millisecond)
	// The subscription came back with the reader: nothing is left parked.
	subs, err := b.Subscriptions(topic)
	if err != nil || len(subs) != 1 {
		t.Fatalf("subscriptions after the seek: %v, %v; want the reader's", subs, err)
	}
}

// The broker's default retention (defaultRetentionTimeInMinutes, here −1: without limit by
// time) applies to topics whose namespace sets none: acknowledged closed ledgers are kept, and
// a seek to the earliest position replays all of them.
func TestOfficialDefaultRetentionKeepsLedgers(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("managedLedgerMaxEntriesPerLedger=100\nmanagedLedgerMinLedgerRolloverTimeMinutes=0\n"+
		"defaultRetentionTimeInMinutes=-1\ndefaultRetentionSizeInMB=-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := broker.LoadConf(conf, broker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultRetentionMinutes != -1 || cfg.DefaultRetentionSizeMB != -1 {
		t.Fatalf("default retention from %s: %d minutes, %d MB", conf, cfg.DefaultRetentionMinutes, cfg.DefaultRetentionSizeMB)
	}
	b := startBroker(t, func(c *broker.Config) {
		c.Rollover, c.DefaultRetentionMinutes, c.DefaultRetentionSizeMB = cfg.Rollover, cfg.DefaultRetentionMinutes, cfg.DefaultRetentionSizeMB
	})
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Exclusive,
		StartMessageIDInclusive: true})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	produceAll(t, p, "m", 250, 10)
	first := receiveInOrder(t, cons, "m", 0, 250)
	settle(t, b, topic, "s")
	if st, err := b.InternalStats(topic); err != nil || len(st.Ledgers) != 3 {
		t.Fatalf("internal stats: %v; want the three ledgers kept", err)
	}
	if err := cons.Seek(first); err != nil {
		t.Fatalf("seek: %v", err)
	}
	receiveInOrder(t, cons, "m", 0, 250)
}
