package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// A producer that takes over a name whose earlier producer stored sequence ids up to 9 sends
// ids 5 to 19, batching: 5 to 9 go alone and are dropped as duplicates, 10 to 19 are batched,
// and the topic holds every id once. In one batch, 5 to 19 would be judged together: stored
// again by a broker that judges a batch by its highest id, lost by one that judges it by its
// lowest.
func TestResumedProducerSendsStoredIdsAlone(t *testing.T) {
	t.Parallel()
	be := brokertest.Start(t, func(c *broker.Config) { c.BrokerDeduplicationEnabled = true })
	cl := newClient(t, be.Broker)
	topic := uniqueTopic(t)
	cons := mustSubscribe(t, cl, client.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	send := func(from, to int) {
		t.Helper()
		ctx := brokertest.Ctx(t, 10*time.Second)
		p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: topic, Name: "resumer", BatchingMaxPublishDelay: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var futs []*client.SendFuture
		for i := from; i <= to; i++ {
			seq := int64(i)
			futs = append(futs, p.SendAsync(ctx, &client.Message{Payload: fmt.Appendf(nil, "%d", i), SequenceID: &seq}))
		}
		if err := p.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for i, f := range futs {
			if _, err := f.Wait(ctx); err != nil {
				t.Fatalf("send %d: %v", from+i, err)
			}
		}
	}
	send(0, 9)
	send(5, 19)

	got := map[string]int{}
	batched := false
	for _, m := range receiveN(t, cons, 20, 10*time.Second) {
		got[string(m.Payload)]++
		if *m.SequenceID >= 10 && m.ID.BatchSize > 1 {
			batched = true
		}
		cons.Ack(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	for {
		m, err := cons.Receive(ctx)
		if err != nil {
			break
		}
		got[string(m.Payload)]++
	}
	for i := range 20 {
		if n := got[fmt.Sprint(i)]; n != 1 {
			t.Errorf("message %d received %d times", i, n)
		}
	}
	if !batched {
		t.Error("ids 10 to 19 were not batched")
	}
}
