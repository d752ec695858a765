package broker_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/testwait"
)

// deadLetters has the official Go client's dead-letter router write n letters into topic's DLQ
// (its initial subscription "audit"): the consumer nacks every message once, and on the
// redelivery (MaxDeliveries 1) the router, whose producer batches (the client's default),
// publishes it to the DLQ. It waits until the DLQ holds them all and returns the DLQ's name.
func deadLetters(t *testing.T, b *broker.Broker, c pulsar.Client, topic string, n int) string {
	t.Helper()
	dlq := topic + "-s-DLQ"
	cons := subscribe(t, c, pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", Type: pulsar.Shared,
		NackRedeliveryDelay: 50 * time.Millisecond, ReceiverQueueSize: 2000,
		DLQ: &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq, InitialSubscriptionName: "audit"},
	})
	// The origin's messages go one an entry: nacking the messages of a batch one by one makes the
	// Go client redeliver the batch once per nack, and its router dead-letters each copy.
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	ctx := testCtx(t, 2*time.Minute)
	msgs := make([]*pulsar.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "letter-%d", i), Key: fmt.Sprintf("k%d", i%7)}
	}
	sendAll(t, p, msgs, time.Minute)
	for range n {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		cons.Nack(m)
	}
	testwait.ForNil(t, time.Minute, "the DLQ receives every letter", func() error {
		st, err := b.TopicStats(dlq, broker.StatsOptions{})
		if err != nil {
			return err
		}
		if st.MsgInCounter != int64(n) {
			return fmt.Errorf("the DLQ received %d of %d letters", st.MsgInCounter, n)
		}
		return nil
	})
	return dlq
}

func subStats(t *testing.T, b *broker.Broker, topic, sub string) *adminapi.SubscriptionStats {
	t.Helper()
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ss, ok := st.Subscriptions[sub]
	if !ok {
		t.Fatalf("%s has no subscription %s", topic, sub)
	}
	return &ss
}

// A DLQ written by the official client's batching dead-letter router holds a hundred letters
// an entry: msgBacklog counts its entries, as upstream's does, and msgBacklogMessages its
// letters, exactly, as a consumer acknowledges whole batches, single messages of batches and
// (batch-index acknowledgement) parts of batches; the cursor names the acknowledged indexes.
func TestOfficialBacklogMessagesOfABatchedDLQ(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	const n = 12_000
	dlq := deadLetters(t, b, c, topicName(t), n)
	ss := subStats(t, b, dlq, "audit")
	if ss.MsgBacklogMessages == nil || *ss.MsgBacklogMessages != n {
		t.Fatalf("msgBacklogMessages %v, want %d", ss.MsgBacklogMessages, n)
	}
	if ss.MsgBacklog*10 >= n {
		t.Fatalf("msgBacklog %d entries for %d letters: the router did not batch", ss.MsgBacklog, n)
	}
	entries := ss.MsgBacklog

	// Read every letter through the subscription; acknowledge the whole of the first batches,
	// every third letter of the batches after them, and nothing of the rest.
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: dlq, SubscriptionName: "audit",
		EnableBatchIndexAcknowledgment: true, ReceiverQueueSize: 2000})
	got := receiveN(t, cons, n, time.Minute)
	type entryKey struct{ ledger, entry int64 }
	byEntry := map[entryKey][]pulsar.Message{}
	var order []entryKey
	for _, m := range got {
		k := entryKey{m.ID().LedgerID(), m.ID().EntryID()}
		if byEntry[k] == nil {
			order = append(order, k)
		}
		byEntry[k] = append(byEntry[k], m)
	}
	acked, whole := 0, int64(0)
	partial := map[string][]int32{}
	for i, k := range order {
		var indexes []int32
		for j, m := range byEntry[k] {
			if i >= 25 || (i >= 5 && j%3 != 0) {
				continue
			}
			if err := cons.Ack(m); err != nil {
				t.Fatal(err)
			}
			acked++
			indexes = append(indexes, m.ID().BatchIdx())
		}
		switch {
		case len(indexes) == len(byEntry[k]):
			whole++
		case len(indexes) > 0:
			slices.Sort(indexes)
			partial[fmt.Sprintf("%d:%d", k.ledger, k.entry)] = indexes
		}
	}
	if len(partial) < 10 {
		t.Fatalf("%d batches acknowledged in part", len(partial))
	}
	waitFor(t, 20*time.Second, func() bool {
		ss := subStats(t, b, dlq, "audit")
		return ss.MsgBacklog == entries-whole && *ss.MsgBacklogMessages == int64(n-acked)
	})
	is, err := b.InternalStats(dlq)
	if err != nil {
		t.Fatal(err)
	}
	cur := is.Cursors["audit"]
	if cur.BatchDeletedIndexes == nil {
		t.Fatal("no batchDeletedIndexes in the cursor's stats")
	}
	if gotSets := *cur.BatchDeletedIndexes; fmt.Sprint(gotSets) != fmt.Sprint(partial) {
		t.Errorf("batchDeletedIndexes %v, want %v", gotSets, partial)
	}

	// The count follows the consumer to the end and to zero.
	cons.Close()
	cons = subscribe(t, c, pulsar.ConsumerOptions{Topic: dlq, SubscriptionName: "audit",
		EnableBatchIndexAcknowledgment: true, ReceiverQueueSize: 2000})
	rest := receiveN(t, cons, n-acked, time.Minute)
	for _, m := range rest[:len(rest)/2] {
		cons.Ack(m)
	}
	waitFor(t, 20*time.Second, func() bool {
		return *subStats(t, b, dlq, "audit").MsgBacklogMessages == int64(n-acked-len(rest)/2)
	})
	for _, m := range rest[len(rest)/2:] {
		cons.Ack(m)
	}
	waitFor(t, 20*time.Second, func() bool {
		ss := subStats(t, b, dlq, "audit")
		return ss.MsgBacklog == 0 && *ss.MsgBacklogMessages == 0
	})
	if is, err := b.InternalStats(dlq); err != nil || len(*is.Cursors["audit"].BatchDeletedIndexes) != 0 {
		t.Errorf("cursor after everything was acknowledged: %v %v", is.Cursors["audit"].BatchDeletedIndexes, err)
	}
}

// Without batch-index acknowledgement (upstream's default) the broker keeps no part of a batch:
// acknowledging some letters of a batch leaves the batch, and its letters, in the backlog, and
// the cursor names no acknowledged index.
func TestOfficialBacklogMessagesWithoutBatchIndexAcks(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(c *broker.Config) { c.AcknowledgmentAtBatchIndexLevelEnabled = false })
	c := newClient(t, b)
	const n = 2_000
	dlq := deadLetters(t, b, c, topicName(t), n)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: dlq, SubscriptionName: "audit",
		EnableBatchIndexAcknowledgment: true, AckWithResponse: true, ReceiverQueueSize: 2000})
	got := receiveN(t, cons, n, time.Minute)
	// Three letters of the largest batch, each acknowledgement answered by the broker.
	batches := map[[2]int64][]pulsar.Message{}
	var largest [2]int64
	for _, m := range got {
		k := [2]int64{m.ID().LedgerID(), m.ID().EntryID()}
		batches[k] = append(batches[k], m)
		if len(batches[k]) > len(batches[largest]) {
			largest = k
		}
	}
	if len(batches[largest]) < 4 {
		t.Fatalf("the largest batch holds %d letters", len(batches[largest]))
	}
	for _, m := range batches[largest][:3] {
		if err := cons.Ack(m); err != nil {
			t.Fatal(err)
		}
	}
	ss := subStats(t, b, dlq, "audit")
	if ss.MsgBacklogMessages == nil || *ss.MsgBacklogMessages != n {
		t.Errorf("msgBacklogMessages %v after acknowledging part of a batch the broker does not keep, want %d", ss.MsgBacklogMessages, n)
	}
	if is, err := b.InternalStats(dlq); err != nil || len(*is.Cursors["audit"].BatchDeletedIndexes) != 0 {
		t.Errorf("batchDeletedIndexes %v without batch-index acks (%v)", *is.Cursors["audit"].BatchDeletedIndexes, err)
	}
}

// --compat upstream answers as an upstream broker: neither extension field is in the JSON.
func TestCompatUpstreamHasNoBacklogMessages(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(c *broker.Config) { c.CompatUpstream = true })
	c := newClient(t, b)
	dlq := deadLetters(t, b, c, topicName(t), 300)
	st, err := b.TopicStats(dlq, broker.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	is, err := b.InternalStats(dlq)
	if err != nil {
		t.Fatal(err)
	}
	for what, v := range map[string]any{"stats": st, "internal stats": is} {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"msgBacklogMessages", "batchDeletedIndexes"} {
			if strings.Contains(string(raw), field) {
				t.Errorf("%s carry %s in upstream-compat mode: %s", what, field, raw)
			}
		}
	}
}

// A durable broker counts the same letters after a restart: the acknowledged ranges and batch
// indexes are stored with the cursor, and the segments' indexes keep each entry's count.
func TestDurableBacklogMessagesSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startDurable(t, dir)
	c := newClient(t, b)
	const n = 3_000
	dlq := deadLetters(t, b, c, topicName(t), n)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: dlq, SubscriptionName: "audit",
		EnableBatchIndexAcknowledgment: true, AckWithResponse: true, ReceiverQueueSize: 2000})
	got := receiveN(t, cons, n, time.Minute)
	acked := 0
	for i, m := range got {
		if i%5 == 0 || (i > 1000 && i < 1500) {
			if err := cons.Ack(m); err != nil {
				t.Fatal(err)
			}
			acked++
		}
	}
	before := subStats(t, b, dlq, "audit")
	if *before.MsgBacklogMessages != int64(n-acked) {
		t.Fatalf("msgBacklogMessages %d, want %d", *before.MsgBacklogMessages, n-acked)
	}
	cons.Close()
	c.Close()
	b.Close()

	b2 := startDurable(t, dir)
	after := subStats(t, b2, dlq, "audit")
	if *after.MsgBacklogMessages != int64(n-acked) || after.MsgBacklog != before.MsgBacklog {
		t.Errorf("after a restart: %d letters in %d entries, before: %d in %d",
			*after.MsgBacklogMessages, after.MsgBacklog, *before.MsgBacklogMessages, before.MsgBacklog)
	}
}
