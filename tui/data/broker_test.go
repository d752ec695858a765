package data

import (
	"context"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// startEmbedded starts a broker on a free loopback port with its admin API (pulsartest), and
// the Admin source on both; all three stop when the test ends.
func startEmbedded(t *testing.T) (*pulsartest.Broker, *Admin) {
	t.Helper()
	b := pulsartest.Start(t)
	a, err := NewAdmin(AdminOptions{AdminURL: b.AdminURL(), ServiceURL: b.ServiceURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return b, a
}

// TestAdminOnEmbeddedBroker runs the Admin source against the real broker in-process: produce,
// list, stats with a consumer's schema type, peek, tail.
func TestAdminOnEmbeddedBroker(t *testing.T) {
	b, a := startEmbedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "persistent://public/default/tui-e2e"

	// A consumer with a JSON schema, subscribed before anything is sent, so the peek sees a
	// backlog.
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.DefaultNopLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "audit", Name: "auditor",
		Type: pulsar.Shared, Schema: pulsar.NewJSONSchema(`{"type":"record","name":"E","fields":[{"name":"a","type":"int"}]}`, nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)

	msgs, stop, err := a.Tail(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, p := range []string{`{"a":1}`, `{"a":2}`} {
		if _, err := a.Produce(ctx, topic, ProduceRequest{Key: "k", Properties: map[string]string{"RECONSUMETIMES": "1"}, Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case ev := <-msgs:
		m := ev.Msg
		if string(m.Payload) != `{"a":1}` || !m.RedeliveriesKnown {
			t.Errorf("tailed %+v", m)
		}
	case <-ctx.Done():
		t.Fatal("tail got nothing")
	}

	rows, err := a.Topics(ctx, "public/default")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		found = found || r.Name == topic
	}
	if !found {
		t.Errorf("topic not listed: %+v", rows)
	}
	d, err := a.TopicDetail(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var auditor *Consumer
	for _, s := range d.Subscriptions {
		for i, c := range s.Consumers {
			if s.Name == "audit" && c.Name == "auditor" {
				auditor = &s.Consumers[i]
			}
		}
	}
	// The embedded broker records each consumer's schema type (the tail's reader is a
	// consumer too, on a subscription of its own).
	if auditor == nil || auditor.SchemaType != "JSON" || !d.SchemaTypesReported {
		t.Fatalf("auditor = %+v in %+v", auditor, d.Subscriptions)
	}

	peeked, err := a.Peek(ctx, topic, "audit", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked) != 2 || string(peeked[1].Payload) != `{"a":2}` || peeked[0].Key != "k" {
		t.Fatalf("peeked %+v", peeked)
	}
	if v, _ := peeked[0].ReconsumeTimes(); v != "1" {
		t.Errorf("RECONSUMETIMES = %q, properties %v", v, peeked[0].Properties)
	}
}

// TestAdminRetentionOnEmbeddedBroker reads a namespace's retention and message TTL from the real
// broker: unset (the broker answers 204, no body), then set.
func TestAdminRetentionOnEmbeddedBroker(t *testing.T) {
	b, a := startEmbedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const dlq = "persistent://public/default/orders-billing-DLQ"

	r, err := a.Retention(ctx, dlq)
	if err != nil || r != (Retention{}) {
		t.Errorf("no policies: %+v, %v; want none and no error", r, err)
	}
	week, ttl := 7*24*60, 3600
	if err := b.Admin().SetRetention(ctx, "public/default", adminapi.RetentionPolicies{RetentionTimeInMinutes: week, RetentionSizeInMB: -1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Admin().SetMessageTTL(ctx, "public/default", ttl); err != nil {
		t.Fatal(err)
	}
	r, err = a.Retention(ctx, dlq)
	if want := (Retention{Minutes: int64(week), SizeMB: -1, TTL: time.Hour}); err != nil || r != want {
		t.Errorf("with policies: %+v, %v; want %+v", r, err, want)
	}
}
