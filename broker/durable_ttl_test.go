package broker_test

// Message TTL on the durable store: expired entries leave the subscription's backlog, retention
// then gives their segments back, and the policy and the moved cursor survive a restart. The
// broker measures the messages' age on a clock the test moves.

import (
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

func TestDurableMessageTTL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Segments smaller than a record: every entry opens a segment of its own, so the first
	// entry that has not expired is always the first of its ledger.
	opts := storage.FileStoreOptions{SegmentSize: 1 << 10}
	expiryEvery := func(c *broker.Config) { c.MessageExpiryCheckInterval = 50 * time.Millisecond }
	clk := brokertest.NewClock(time.Now())
	b := startStore(t, dir, opts, expiryEvery, clk.Use)
	topic := topicName(t)
	c := newClient(t, b)
	sub := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "replay",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	sub.Close() // the subscription stays, and nobody reads it
	stats := func(b *broker.Broker) adminapi.SubscriptionStats {
		t.Helper()
		st, err := b.TopicStats(topic, broker.StatsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ss, ok := st.Subscriptions["replay"]
		if !ok {
			t.Fatal("subscription replay is gone from the stats")
		}
		return ss
	}

	// Two batches whose publish times, which the client stamps from the machine's clock to the
	// millisecond, are apart: the first is all at or before cut, the second after it.
	publishKiB(t, c, topic, 5)
	cut := time.Now().UnixMilli()
	waitFor(t, time.Second, func() bool { return time.Now().UnixMilli() > cut })
	publishKiB(t, c, topic, 3)
	// On demand (the admin API's expireMessages): what is older than a second, a second after
	// the first batch.
	clk.AdvanceTo(time.UnixMilli(cut + 1).Add(time.Second))
	if err := b.ExpireMessages(topic, "replay", 1); err != nil {
		t.Fatal(err)
	}
	if s := stats(b); s.MsgBacklog != 3 || s.TotalMsgExpired != 5 || s.LastExpireTimestamp == 0 {
		t.Fatalf("after expiring what is older than 1 s: backlog %d, expired %d, last expiry %d; want 3, 5, set",
			s.MsgBacklog, s.TotalMsgExpired, s.LastExpireTimestamp)
	}
	waitFor(t, 10*time.Second, func() bool { return len(segmentFiles(t, dir, topic)) == 3 })

	// By the namespace's TTL, on the broker's own schedule, once the second batch is older
	// than that: the rest goes too, and with it every segment but the open one.
	clk.AdvanceTo(time.Now().Add(2 * time.Second))
	one := 1
	if err := b.UpdateNamespacePolicies("public/default", func(p *adminapi.Policies) error {
		p.MessageTTLInSeconds = &one
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool {
		s := stats(b)
		return s.MsgBacklog == 0 && s.TotalMsgExpired == 8
	})
	waitFor(t, 10*time.Second, func() bool { return len(segmentFiles(t, dir, topic)) == 1 })

	// A restart keeps the policy and the cursor the expiry moved.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startStore(t, dir, opts)
	p, err := b.NamespacePolicies("public/default")
	if err != nil {
		t.Fatal(err)
	}
	if p.MessageTTLInSeconds == nil || *p.MessageTTLInSeconds != 1 {
		t.Errorf("TTL after restart = %v, want 1", p.MessageTTLInSeconds)
	}
	if s := stats(b); s.MsgBacklog != 0 {
		t.Errorf("backlog after restart = %d, want 0", s.MsgBacklog)
	}
}
