package data

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// A flow's "latest dead letters" are the newest letters of the DLQ's subscription, newest
// first; letterbox's own readers (a scan running) are no subscription of the DLQ and no part of
// its backlog; the DLQ's main subscription is its router's initial one.
func TestLatestLettersAndOwnReaders(t *testing.T) {
	env := brokertest.Start(t)
	a, err := NewAdmin(AdminOptions{AdminURL: env.AdminURL, ServiceURL: env.ServiceURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	const n = 250
	origin, dlq := "persistent://public/default/orders", "persistent://public/default/orders-billing-DLQ"
	env.RouteDeadLetters(t, brokertest.Route{Origin: origin, Subscription: "billing", DLQ: dlq, InitialSubscription: "billing-keep",
		N: n, Message: func(i int) *pulsar.ProducerMessage {
			return &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "%d", i), Key: fmt.Sprintf("k%03d", i)}
		}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A reader of letterbox's own, open on the DLQ while the stats are read.
	page, err := a.Browse(ctx, dlq, View{}, From{Earliest: true}, 10)
	if err != nil || len(page.Msgs) != 10 {
		t.Fatalf("browse: %v", err)
	}
	cl, err := a.pulsarClient()
	if err != nil {
		t.Fatal(err)
	}
	held, err := cl.CreateReader(ctx, readerOptions(dlq))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	d, err := a.TopicDetail(ctx, dlq)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Subscriptions) != 1 || d.Subscriptions[0].Name != "billing-keep" || d.Stats.Subscriptions != 1 ||
		d.Stats.Main.Sub != "billing-keep" || d.Stats.Main.N != n || d.Stats.Backlog != n || d.Stats.Main.EntriesOnly {
		t.Errorf("with a reader of letterbox's own open: %+v, stats %+v", d.Subscriptions, d.Stats)
	}

	f, err := LoadFlow(ctx, a, origin, "billing", "", time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	if f.DLQ.Sub != "billing-keep" || len(f.Latest) != FlowPeek || f.DLQPeeked != FlowPeek {
		t.Fatalf("flow: DLQ through %q, %d latest", f.DLQ.Sub, len(f.Latest))
	}
	for i, l := range f.Latest {
		if want := fmt.Sprintf("k%03d", n-1-i); l.Key != want {
			t.Fatalf("latest letter %d is %s, want %s (the newest first)", i, l.Key, want)
		}
	}
}

// readerOptions open a reader as letterbox's own readers are: under a letterbox- name.
func readerOptions(topic string) client.ReaderOptions {
	return client.ReaderOptions{Topic: topic, SubscriptionName: naming.OwnReader("scan")}
}
