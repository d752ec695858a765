package replay

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestOfficialBatchedDeadLetters: the official Go client's DLQ producer batches; a replay
// that selects half of each batch acknowledges those messages one by one (batch-index ack),
// and the other half stays for a later run.
func TestOfficialBatchedDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, 90*time.Second)
	oc, err := pulsar.NewClient(pulsar.ClientOptions{URL: e.b.ServiceURL(), OperationTimeout: 10 * time.Second,
		Logger: plog.NewLoggerWithSlog(brokertest.Logger(t))})
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	const n = 40
	appc, err := oc.Subscribe(pulsar.ConsumerOptions{Topic: origin, SubscriptionName: "app", Type: pulsar.Shared,
		NackRedeliveryDelay: 20 * time.Millisecond,
		DLQ:                 &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq, InitialSubscriptionName: dsub}})
	if err != nil {
		t.Fatal(err)
	}
	defer appc.Close()
	prod, err := oc.CreateProducer(pulsar.ProducerOptions{Topic: origin})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		prod.SendAsync(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%02d", i), Key: fmt.Sprintf("k%02d", i),
			Properties: map[string]string{"even": fmt.Sprint(i%2 == 0)}}, nil)
	}
	if err := prod.FlushWithCtx(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Replayed messages are counted on a subscription made after the originals.
	replayed, err := e.cl.Subscribe(ctx, client.ConsumerOptions{Topic: origin, SubscriptionName: "replayed",
		InitialPosition: client.Latest})
	if err != nil {
		t.Fatal(err)
	}
	defer replayed.Close()
	// The application fails everything once: each message goes to the DLQ.
	watch := subscribe(t, e.cl, dlq, "watch")
	go func() {
		for {
			m, err := appc.Receive(ctx)
			if err != nil {
				return
			}
			appc.Nack(m)
		}
	}()
	batched := 0
	even, odd := 0, 0
	count := func(m *client.Message) {
		if m.ID.BatchIndex >= 0 {
			batched++
		}
		if m.Properties["even"] == "true" {
			even++
		} else {
			odd++
		}
	}
	for range n {
		m, err := watch.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		count(m)
	}
	appc.Close() // the application is fixed
	// The official consumer may dead-letter a message twice (its ack of the original can lose
	// the race with the next redelivery): count what the DLQ really holds.
	for {
		qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		m, err := watch.Receive(qctx)
		cancel()
		if err != nil {
			break
		}
		count(m)
	}
	if batched == 0 {
		t.Fatal("the official client's DLQ producer sent no batch; the test proves nothing")
	}
	t.Logf("%d of %d dead letters arrived in batches (%d even, %d odd)", batched, even+odd, even, odd)

	f, _ := ParseFilter("property.even=true")
	sum, err := Run(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Selection: Selection{Filters: []Filter{f}}})
	if err != nil || !sum.OK() || sum.Moved != int64(even) || sum.Skipped != int64(odd) {
		t.Fatalf("half: %+v, %v (%d of %d dead letters batched)", sum, err, batched, even+odd)
	}
	for _, m := range receiveN(t, replayed, even, 200*time.Millisecond) {
		if m.Properties["even"] != "true" {
			t.Errorf("moved %s %v", m.Key, m.Properties)
		}
	}
	// The rest is still there, and only the rest.
	sum, err = Run(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	if err != nil || !sum.OK() || sum.Moved != int64(odd) || sum.Considered != int64(odd) {
		t.Fatalf("rest: %+v, %v", sum, err)
	}
	for _, m := range receiveN(t, replayed, odd, 300*time.Millisecond) {
		if m.Properties["even"] != "false" {
			t.Errorf("moved %s %v", m.Key, m.Properties)
		}
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Errorf("DLQ backlog %d", b)
	}
}
