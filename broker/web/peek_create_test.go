package web_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

// A peek through a subscription that does not exist creates it at the earliest position and
// peeks, as upstream's; with automatic subscription creation off it is 412 and creates nothing.
func TestPeekCreatesMissingSubscription(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "persistent://public/default/peek-create"
	tn := *topicName(t, topic)
	c := e.client(t)
	// A subscription that keeps the messages stored.
	keep, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
	must(t, err)
	defer keep.Close()
	prod, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer prod.Close()
	for _, p := range []string{"a", "b", "c"} {
		_, err := prod.Send(ctx, &pulsar.ProducerMessage{Payload: []byte(p)})
		must(t, err)
	}

	msgs, err := e.adm.Subscriptions().PeekMessages(tn, "fresh", 2)
	if err != nil {
		t.Fatalf("peek through a subscription that does not exist: %v", err)
	}
	if len(msgs) != 2 || string(msgs[0].Payload) != "a" || string(msgs[1].Payload) != "b" {
		t.Errorf("peeked %d messages: %v", len(msgs), msgs)
	}
	subs, err := e.adm.Subscriptions().List(tn)
	must(t, err)
	if !slices.Contains(subs, "fresh") {
		t.Errorf("subscriptions after the peek = %v, want fresh among them", subs)
	}
	st, err := e.adm.Topics().GetStats(tn)
	must(t, err)
	if b := st.Subscriptions["fresh"].MsgBacklog; b != 3 {
		t.Errorf("backlog of the subscription the peek created = %d, want 3 (from the earliest)", b)
	}

	// Automatic subscription creation off: 412, and nothing is created.
	// (pulsaradmin has no call for the namespace policy.)
	if resp, body := send(t, "POST", e.s.URL()+"/admin/v2/namespaces/public/default/autoSubscriptionCreation", "application/json",
		[]byte(`{"allowAutoSubscriptionCreation": false}`)); resp.StatusCode != 204 {
		t.Fatalf("turning automatic subscription creation off: %d %s", resp.StatusCode, body)
	}
	_, err = e.adm.Subscriptions().PeekMessages(tn, "refused", 1)
	wantStatus(t, "peek, auto subscription creation off", err, 412)
	subs, err = e.adm.Subscriptions().List(tn)
	must(t, err)
	if slices.Contains(subs, "refused") {
		t.Errorf("subscriptions = %v: the refused peek created one", subs)
	}
}
