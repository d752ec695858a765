package admin_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// TestPeekAt reads a backlog entry by entry from any position: a single message with its key,
// event time and properties, then a batch split into its messages with their own keys.
func TestPeekAt(t *testing.T) {
	t.Parallel()
	b, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/peek-at"
	must(t, c.CreateTopic(x, topic, 0, nil))
	must(t, c.CreateSubscription(x, topic, "s", adminapi.Earliest))

	pc, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.DefaultNopLogger()})
	must(t, err)
	t.Cleanup(pc.Close)
	single, err := pc.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	et := time.UnixMilli(1773480412000).UTC()
	_, err = single.Send(x, &pulsar.ProducerMessage{Payload: []byte("one"), Key: "k1", EventTime: et,
		Properties: map[string]string{"RECONSUMETIMES": "2"}})
	must(t, err)
	single.Close()
	batched, err := pc.CreateProducer(pulsar.ProducerOptions{Topic: topic, BatchingMaxPublishDelay: time.Hour, BatchingMaxMessages: 2})
	must(t, err)
	t.Cleanup(batched.Close)
	batched.SendAsync(x, &pulsar.ProducerMessage{Payload: []byte("two"), Key: "k2"}, nil)
	batched.SendAsync(x, &pulsar.ProducerMessage{Payload: []byte("three"), Key: "k3", EventTime: et}, nil)
	must(t, batched.FlushWithCtx(x))

	m1, err := c.PeekAt(x, topic, "s", 1)
	must(t, err)
	if len(m1) != 1 || string(m1[0].Payload) != "one" || m1[0].Key != "k1" || m1[0].EventTime != "2026-03-14T09:26:52.000Z" ||
		m1[0].Properties["RECONSUMETIMES"] != "2" || m1[0].PublishTime == "" {
		t.Fatalf("position 1: %+v", m1)
	}
	m2, err := c.PeekAt(x, topic, "s", 2)
	must(t, err)
	if len(m2) != 2 || string(m2[0].Payload) != "two" || m2[0].Key != "k2" || m2[0].EventTime != "" ||
		string(m2[1].Payload) != "three" || m2[1].Key != "k3" || m2[1].EventTime != "2026-03-14T09:26:52.000Z" || m2[1].ID.BatchIndex != 1 {
		t.Fatalf("position 2: %+v", m2)
	}
	if _, err := c.PeekAt(x, topic, "s", 3); !admin.IsNotFound(err) {
		t.Errorf("past the end: %v, want 404", err)
	}
	// As upstream's, the broker creates a subscription that a peek names, at the earliest
	// position (readers that must not create one look first, as the TUI does).
	if m, err := c.PeekAt(x, topic, "nope", 1); err != nil || len(m) != 1 || string(m[0].Payload) != "one" {
		t.Errorf("peek through a new subscription: %+v %v", m, err)
	}
	if subs, err := c.Subscriptions(x, topic); err != nil || !slices.Contains(subs, "nope") {
		t.Errorf("subscriptions after the peek: %v %v", subs, err)
	}
	if _, err := c.PeekAt(x, topic, "s", 0); err == nil {
		t.Error("position 0 accepted")
	}
}

// TestPeekOldPropertyHeaders reads properties from the one-header-per-property form of older
// brokers, restoring the upper-case names of the retry flow.
func TestPeekOldPropertyHeaders(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Pulsar-Message-ID", "3:4")
		w.Header().Set("X-Pulsar-Property-RECONSUMETIMES", "2")
		w.Header().Set("X-Pulsar-Property-source", "checkout")
		w.Header().Set("X-Pulsar-partition-key", "k1")
		w.Write([]byte("x"))
	}))
	t.Cleanup(srv.Close)
	c, err := admin.New(admin.Options{URL: srv.URL})
	must(t, err)
	msgs, err := c.PeekAt(ctx(t), "orders", "s", 1)
	must(t, err)
	if len(msgs) != 1 || msgs[0].Properties["RECONSUMETIMES"] != "2" || msgs[0].Properties["Source"] != "checkout" || msgs[0].Key != "k1" {
		t.Fatalf("%+v", msgs)
	}
}
