package web_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// produceKeyed sends, in batches, v1 for k0…k9, then v2 for k0…k4, a tombstone (empty payload)
// for k9 and two messages without a key, and returns what compaction must keep: the latest
// value of each key, k9 gone.
func produceKeyed(t *testing.T, c pulsar.Client, topic string) map[string]string {
	t.Helper()
	p, err := c.CreateProducer(pulsar.ProducerOptions{
		Topic: topic, Schema: pulsar.NewStringSchema(nil),
		BatchingMaxPublishDelay: 50 * time.Millisecond, BatchingMaxMessages: 4,
	})
	must(t, err)
	defer p.Close()
	want := map[string]string{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sendErr error
	send := func(m *pulsar.ProducerMessage) {
		wg.Add(1)
		p.SendAsync(context.Background(), m, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			mu.Lock()
			if err != nil && sendErr == nil {
				sendErr = err
			}
			mu.Unlock()
			wg.Done()
		})
	}
	for i := range 10 {
		k := fmt.Sprintf("k%d", i)
		send(&pulsar.ProducerMessage{Key: k, Value: k + "=v1"})
		want[k] = k + "=v1"
	}
	send(&pulsar.ProducerMessage{Value: "no key 1"})
	for i := range 5 {
		k := fmt.Sprintf("k%d", i)
		send(&pulsar.ProducerMessage{Key: k, Value: k + "=v2"})
		want[k] = k + "=v2"
	}
	send(&pulsar.ProducerMessage{Key: "k9"}) // tombstone
	delete(want, "k9")
	send(&pulsar.ProducerMessage{Value: "no key 2"})
	must(t, p.FlushWithCtx(context.Background()))
	wg.Wait()
	must(t, sendErr)
	return want
}

// compact triggers a compaction and waits for it to succeed.
func compact(t *testing.T, e *env, tn utils.TopicName) {
	t.Helper()
	must(t, e.adm.Topics().Compact(tn))
	brokertest.WaitForNil(t, 10*time.Second, "compaction status SUCCESS", func() error {
		st, err := e.adm.Topics().CompactStatus(tn)
		if err != nil {
			return err
		}
		if st.Status != utils.SUCCESS {
			return fmt.Errorf("status %s %s", st.Status, st.LastError)
		}
		return nil
	})
}

// readCompacted reads the topic from the earliest message with a read_compacted reader until
// it has nothing more, and returns key → last value of what it got and how many messages.
func readCompacted(t *testing.T, c pulsar.Client, topic string) (map[string]string, int) {
	t.Helper()
	r, err := c.CreateReader(pulsar.ReaderOptions{
		Topic: topic, StartMessageID: pulsar.EarliestMessageID(), ReadCompacted: true, Schema: pulsar.NewStringSchema(nil),
	})
	must(t, err)
	defer r.Close()
	got := map[string]string{}
	n := 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for r.HasNext() {
		msg, err := r.Next(ctx)
		must(t, err)
		n++
		got[msg.Key()] = string(msg.Payload())
	}
	return got, n
}

// A compaction keeps the latest value of each key, drops tombstoned keys and messages without
// a key; a read_compacted reader reads exactly that, and a TableView of the official client
// holds it, also once the log before the horizon is trimmed.
func TestCompactionReadCompactedAndTableView(t *testing.T) {
	t.Parallel()
	cfg := broker.DefaultConfig()
	cfg.Logger = quiet
	cfg.RetentionCheckInterval = 50 * time.Millisecond // idle topics free their closed ledgers
	e := newEnv(t, broker.WithConfig(cfg))
	topic := "persistent://public/default/compacted"
	tn := *topicName(t, topic)
	c := e.client(t)
	// A subscription keeps the log until the compaction holds it.
	keep, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
	must(t, err)
	keep.Close()
	st, err := e.adm.Topics().CompactStatus(tn)
	must(t, err)
	if st.Status != utils.NOTRUN {
		t.Errorf("status before any compaction %q, want NOT_RUN", st.Status)
	}
	want := produceKeyed(t, c, topic)
	compact(t, e, tn)

	got, n := readCompacted(t, c, topic)
	if !maps.Equal(got, want) || n != len(want) {
		t.Errorf("read_compacted reader got %d messages %v, want %v", n, got, want)
	}
	internal, err := e.adm.Topics().GetInternalStats(tn)
	must(t, err)
	if internal.CompactedLedger.Entries <= 0 || internal.CompactedLedger.LedgerID < 0 {
		t.Errorf("compactedLedger %+v, want the compacted view", internal.CompactedLedger)
	}
	if _, ok := internal.Cursors["__compaction"]; !ok {
		t.Errorf("cursors %v: want __compaction", internal.Cursors)
	}

	// Without the other subscription, and its ledger closed by an unload, the log is freed up to
	// the horizon: the view remains.
	must(t, e.adm.Subscriptions().Delete(tn, "keep"))
	must(t, e.adm.Topics().Unload(tn))
	brokertest.WaitForNil(t, 10*time.Second, "the compacted ledger freed", func() error {
		internal, err := e.adm.Topics().GetInternalStats(tn)
		if err != nil {
			return err
		}
		if internal.NumberOfEntries != 0 {
			return fmt.Errorf("%d entries stored", internal.NumberOfEntries)
		}
		return nil
	})
	tv, err := c.CreateTableView(pulsar.TableViewOptions{
		Topic: topic, Schema: pulsar.NewStringSchema(nil), SchemaValueType: reflect.TypeOf(new(string)),
	})
	must(t, err)
	defer tv.Close()
	entries := map[string]string{}
	for k, v := range tv.Entries() {
		entries[k] = *v.(*string)
	}
	if !maps.Equal(entries, want) {
		t.Errorf("table view %v, want %v", entries, want)
	}

	// What comes after the horizon is read from the log, after the view.
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Schema: pulsar.NewStringSchema(nil)})
	must(t, err)
	defer p.Close()
	_, err = p.Send(context.Background(), &pulsar.ProducerMessage{Key: "k1", Value: "k1=v3"})
	must(t, err)
	want["k1"] = "k1=v3"
	brokertest.WaitForNil(t, 10*time.Second, "the table view sees a new value", func() error {
		if v, ok := tv.Get("k1").(*string); !ok || *v != "k1=v3" {
			return fmt.Errorf("k1 = %v", tv.Get("k1"))
		}
		return nil
	})
	if got, n := readCompacted(t, c, topic); n != len(want)+1 || got["k1"] != "k1=v3" {
		t.Errorf("after the horizon: %d messages %v, want the view's %d then k1=v3", n, got, len(want))
	}

	// A second compaction folds the new message in.
	compact(t, e, tn)
	if got, n := readCompacted(t, c, topic); !maps.Equal(got, want) || n != len(want) {
		t.Errorf("after the second compaction: %d messages %v, want %v", n, got, want)
	}
}

// read_compacted is refused on Shared subscriptions, as upstream.
func TestCompactionReadCompactedOnSharedRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(t)
	_, err := c.Subscribe(pulsar.ConsumerOptions{
		Topic: "persistent://public/default/compacted-shared", SubscriptionName: "s",
		Type: pulsar.Shared, ReadCompacted: true,
	})
	if err == nil {
		t.Fatal("read_compacted on a Shared subscription was accepted")
	}
}

// The compacted view is stored with a durable store: a restarted broker serves it.
func TestCompactionDurable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := func() *env {
		store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return newEnv(t, broker.WithStore(store))
	}
	e := start()
	topic := "persistent://public/default/compacted-durable"
	tn := *topicName(t, topic)
	c := e.client(t)
	keep, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
	must(t, err)
	keep.Close()
	want := produceKeyed(t, c, topic)
	compact(t, e, tn)
	must(t, e.adm.Subscriptions().Delete(tn, "keep"))
	c.Close()
	e.s.Close()
	e.b.Close()

	e = start()
	c = e.client(t)
	if got, n := readCompacted(t, c, topic); !maps.Equal(got, want) || n != len(want) {
		t.Errorf("after a restart: %d messages %v, want %v", n, got, want)
	}
	st, err := e.adm.Topics().CompactStatus(tn)
	must(t, err)
	if st.Status != utils.NOTRUN {
		t.Errorf("status after a restart %q, want NOT_RUN (upstream keeps it in memory)", st.Status)
	}
}

// The compactionThreshold policy compacts a topic by itself once the backlog of its
// __compaction subscription (its whole size before any compaction) is over it, as upstream's
// checkCompaction.
func TestCompactionThresholdTriggers(t *testing.T) {
	t.Parallel()
	cfg := broker.DefaultConfig()
	cfg.Logger = quiet
	cfg.CompactionMonitorInterval = 50 * time.Millisecond
	e := newEnv(t, broker.WithConfig(cfg))
	must(t, e.adm.Tenants().Create(utils.TenantData{Name: "auto", AllowedClusters: []string{"standalone"}}))
	must(t, e.adm.Namespaces().CreateNamespace("auto/ns"))
	ns := mustNS(t, "auto/ns")
	topic := "persistent://auto/ns/compacted-by-threshold"
	tn := *topicName(t, topic)
	c := e.client(t)
	keep, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
	must(t, err)
	keep.Close()
	want := produceKeyed(t, c, topic)
	// Nothing happens without a threshold.
	time.Sleep(200 * time.Millisecond)
	st, err := e.adm.Topics().CompactStatus(tn)
	must(t, err)
	if st.Status != utils.NOTRUN {
		t.Fatalf("status without a threshold %q, want NOT_RUN", st.Status)
	}
	must(t, e.adm.Namespaces().SetCompactionThreshold(*ns, 100))
	brokertest.WaitForNil(t, 10*time.Second, "compaction by threshold", func() error {
		st, err := e.adm.Topics().CompactStatus(tn)
		if err != nil {
			return err
		}
		if st.Status != utils.SUCCESS {
			return fmt.Errorf("status %s %s", st.Status, st.LastError)
		}
		return nil
	})
	if got, n := readCompacted(t, c, topic); !maps.Equal(got, want) || n != len(want) {
		t.Errorf("read_compacted reader got %d messages %v, want %v", n, got, want)
	}
}

// Compacting a partitioned topic compacts every partition; the official TableView, which reads
// each partition, holds the latest value per key.
func TestCompactionPartitionedTableView(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := "persistent://public/default/compacted-partitioned"
	tn := *topicName(t, topic)
	must(t, e.adm.Topics().Create(tn, 2))
	c := e.client(t)
	keep, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
	must(t, err)
	keep.Close()
	want := produceKeyed(t, c, topic)
	must(t, e.adm.Topics().Compact(tn))
	for i := range 2 {
		part := *topicName(t, fmt.Sprintf("%s-partition-%d", topic, i))
		brokertest.WaitForNil(t, 10*time.Second, "partition compacted", func() error {
			st, err := e.adm.Topics().CompactStatus(part)
			if err != nil {
				return err
			}
			if st.Status != utils.SUCCESS {
				return fmt.Errorf("partition %d: %s %s", i, st.Status, st.LastError)
			}
			return nil
		})
	}
	tv, err := c.CreateTableView(pulsar.TableViewOptions{
		Topic: topic, Schema: pulsar.NewStringSchema(nil), SchemaValueType: reflect.TypeOf(new(string)),
	})
	must(t, err)
	defer tv.Close()
	entries := map[string]string{}
	for k, v := range tv.Entries() {
		entries[k] = *v.(*string)
	}
	if !maps.Equal(entries, want) {
		t.Errorf("table view %v, want %v", entries, want)
	}
}

// A durable read_compacted consumer (Exclusive) reads the compacted view, then what comes after
// the horizon; acknowledging the last leaves no backlog.
func TestCompactionReadCompactedConsumer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := "persistent://public/default/compacted-consumer"
	tn := *topicName(t, topic)
	c := e.client(t)
	keep, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
	must(t, err)
	keep.Close()
	want := produceKeyed(t, c, topic)
	compact(t, e, tn)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "table", ReadCompacted: true,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	must(t, err)
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	must(t, err)
	defer p.Close()
	_, err = p.Send(context.Background(), &pulsar.ProducerMessage{Key: "k8", Payload: []byte("k8=v2")})
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := map[string]string{}
	var last pulsar.Message
	for range len(want) + 1 {
		msg, err := cons.Receive(ctx)
		must(t, err)
		if _, dup := got[msg.Key()]; dup && msg.Key() != "k8" {
			t.Errorf("key %s received twice", msg.Key())
		}
		got[msg.Key()] = string(msg.Payload())
		last = msg
	}
	want["k8"] = "k8=v2"
	if !maps.Equal(got, want) || string(last.Payload()) != "k8=v2" {
		t.Errorf("got %v (last %s), want %v then k8=v2", got, last.Payload(), want)
	}
	must(t, cons.AckCumulative(last))
	brokertest.WaitForNil(t, 10*time.Second, "no backlog", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if b := st.Subscriptions["table"].MsgBacklog; b != 0 {
			return fmt.Errorf("backlog %d", b)
		}
		return nil
	})
}
