package broker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// A resource group's rates bound the topics of all the namespaces attached to it together, on
// the broker's fake clock (official_rates_test.go says why). Two topics in two namespaces of one
// group share its buckets: what passes is the group's rate, not twice it. When two topics take
// tokens at the same moment they may pass the bucket by a little each; that is paid back before
// anything more passes, so over the whole run the rate holds.

// groupOfTwo makes group "g" with rates set by fn and two namespaces attached to it, and
// returns a topic in each.
func groupOfTwo(t *testing.T, b *broker.Broker, fn func(*adminapi.ResourceGroup)) [2]string {
	t.Helper()
	var g adminapi.ResourceGroup
	fn(&g)
	if err := b.PutResourceGroup("g", g); err != nil {
		t.Fatal(err)
	}
	var topics [2]string
	for i, ns := range []string{"public/group-a", "public/group-b"} {
		if err := b.CreateNamespace(ns, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.SetNamespaceResourceGroup(ns, "g"); err != nil {
			t.Fatal(err)
		}
		topics[i] = "persistent://" + ns + "/" + localName(t)
	}
	return topics
}

func TestOfficialResourceGroupPublishRate(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	b := startBroker(t, clk.Use)
	topics := groupOfTwo(t, b, func(g *adminapi.ResourceGroup) { g.PublishRateInMsgs = ptrTo(100) })
	c := newClient(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked atomic.Int64
	// Both producers first: a throttled producer's connection, which the client shares, is not
	// read, lookups included.
	var producers []pulsar.Producer
	for _, topic := range topics {
		producers = append(producers, createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true,
			MaxPendingMessages: 1000, SendTimeout: -1}))
	}
	for _, p := range producers {
		for i := range 1000 {
			p.SendAsync(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)},
				func(pulsar.MessageID, *pulsar.ProducerMessage, error) { acked.Add(1) })
		}
	}
	taken := func() int64 { return msgIn(t, b, topics[0]) + msgIn(t, b, topics[1]) }
	// Each producer's connection is paused after the SEND that empties the bucket; the other's
	// SEND already read may pass it by one.
	const slack = int64(len(topics) - 1)
	waitTaken := func(want int64) {
		t.Helper()
		waitFor(t, 20*time.Second, func() bool {
			n := taken()
			if n > want+slack {
				t.Fatalf("the group's topics took %d messages, want %d (+%d): over its publish rate", n, want, slack)
			}
			return n >= want
		})
	}
	waitTaken(100) // the group's bucket, shared
	want := int64(100)
	for range 50 { // 5 s
		want += 10
		clk.Advance(100 * time.Millisecond)
		waitTaken(want)
	}
	n := taken()
	if rate := float64(n-100) / 5; rate < 90 || rate > 110 {
		t.Fatalf("the group's publish rate over 5 s: %.1f msg/s (%d messages), want 100 ± 10 %%", rate, n-100)
	}
	for _, topic := range topics {
		if msgIn(t, b, topic) == 0 {
			t.Errorf("%s took nothing: the group's rate is shared, not given to one topic", topic)
		}
	}

	// Detached, the namespaces' topics are free again: everything is receipted.
	for _, ns := range []string{"public/group-a", "public/group-b"} {
		if err := b.SetNamespaceResourceGroup(ns, ""); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	waitFor(t, 20*time.Second, func() bool { return acked.Load() == 2000 })
}

func TestOfficialResourceGroupDispatchRate(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	b := startBroker(t, clk.Use)
	const rate = 30
	topics := groupOfTwo(t, b, func(g *adminapi.ResourceGroup) { g.DispatchRateInMsgs = ptrTo(rate) })
	c := newClient(t, b)
	var got atomic.Int64
	for _, topic := range topics {
		p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
		sendN(t, p, "m", 300)
	}
	received := map[string]*atomic.Int64{}
	for _, topic := range topics {
		received[topic] = &atomic.Int64{}
		countReceived(subscribeEarliest(t, c, topic, "s"), &got, received[topic])
	}
	// Two subscriptions that read the shared bucket at once may each deliver what it holds:
	// at most one bucket more than the group's tokens, paid back by the next second's.
	waitGot := func(want int64) {
		t.Helper()
		waitFor(t, 20*time.Second, func() bool {
			n := got.Load()
			if n > want+rate {
				t.Fatalf("the group's topics delivered %d, want at most %d: over its dispatch rate", n, want+rate)
			}
			return n >= want
		})
	}
	waitGot(rate) // the bucket's capacity
	for i := range 10 {
		clk.Advance(time.Second) // a subscription finding the bucket empty looks again after 1 s
		waitGot(int64(rate * (i + 2)))
	}
	n := got.Load()
	if r := float64(n) / 11; r < rate*0.9 || r > rate*1.1 {
		t.Fatalf("the group's dispatch rate over 11 s: %.1f msg/s (%d messages), want %d ± 10 %%", r, n, rate)
	}
	for topic, n := range received {
		if n.Load() == 0 {
			t.Errorf("%s delivered nothing: the group's rate is shared, not given to one topic", topic)
		}
	}
}
