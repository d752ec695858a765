package replay

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// officialDLQ has the official Go client's DLQ router fill the DLQ with n dead letters (its
// producer batches them) and returns that client.
func officialDLQ(t *testing.T, e *env, n int) pulsar.Client {
	t.Helper()
	ctx := brokertest.Ctx(t, 60*time.Second)
	oc, err := pulsar.NewClient(pulsar.ClientOptions{URL: e.b.ServiceURL(), OperationTimeout: 10 * time.Second,
		Logger: plog.NewLoggerWithSlog(brokertest.Logger(t))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(oc.Close)
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
	defer prod.Close()
	for i := range n {
		prod.SendAsync(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%02d", i), Key: fmt.Sprintf("k%02d", i)}, nil)
	}
	if err := prod.FlushWithCtx(ctx); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			m, err := appc.Receive(ctx)
			if err != nil {
				return
			}
			appc.Nack(m)
		}
	}()
	for {
		st, err := e.admin.Stats(ctx, dlq)
		if err == nil && st.MsgInCounter >= int64(n) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the DLQ did not fill: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	appc.Close() // the application is fixed
	return oc
}

// letterIDs reads what the DLQ holds, without consuming (a subscription of its own), until
// nothing more comes. The official client may dead-letter a message twice.
func letterIDs(t *testing.T, e *env) []client.MessageID {
	t.Helper()
	ctx := brokertest.Ctx(t, 30*time.Second)
	peek := subscribe(t, e.cl, dlq, "peek")
	defer peek.Close()
	var ids []client.MessageID
	for {
		qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		m, err := peek.Receive(qctx)
		cancel()
		if err != nil {
			return ids
		}
		ids = append(ids, m.ID)
	}
}

// TestDiscard: discarding three dead letters by id acknowledges exactly those, individually;
// the others are still delivered to an official consumer on the DLQ's subscription.
func TestDiscard(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	oc := officialDLQ(t, e, 12)
	ctx := brokertest.Ctx(t, 60*time.Second)
	ids := letterIDs(t, e)
	n := len(ids)
	before := e.backlog(t, dlq, dsub)
	if batched := ids[0].BatchIndex >= 0 || ids[n-1].BatchIndex >= 0; !batched {
		t.Log("the official client's DLQ producer sent no batch this time")
	}
	marked := []client.MessageID{ids[1], ids[5], ids[9]}

	dry, _, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, Discard: true, DryRun: true, StateDir: e.state,
		Selection: Selection{IDs: marked}})
	if err != nil || dry.WouldMove != 3 || e.backlog(t, dlq, dsub) != before {
		t.Fatalf("dry run: %+v, %v; backlog %d (was %d)", dry, err, e.backlog(t, dlq, dsub), before)
	}
	sum, evs, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, Discard: true, StateDir: e.state,
		Selection: Selection{IDs: marked}})
	if err != nil || !sum.OK() || sum.Discarded != 3 || sum.Moved != 0 {
		t.Fatalf("discard: %+v, %v", sum, err)
	}
	discarded := map[string]bool{}
	for _, ev := range evs {
		if ev.Action == Discarded {
			discarded[ev.IDString()] = true
		}
	}
	for _, id := range marked {
		if !discarded[idString(id)] {
			t.Errorf("%s not discarded: %v", idString(id), discarded)
		}
	}
	// The backlog counts entries: three letters of one batch entry leave it whole only
	// when nothing else of the entry remains.
	if after := e.backlog(t, dlq, dsub); ids[1].BatchIndex < 0 && after != before-3 {
		t.Errorf("backlog %d after discarding 3 of %d", after, before)
	}
	// The rest, to an official consumer on the subscription: everything but the three, each
	// once. Told apart by position: the official client may dead-letter a message twice, and
	// both letters carry its payload.
	oc2, err := oc.Subscribe(pulsar.ConsumerOptions{Topic: dlq, SubscriptionName: dsub, Type: pulsar.Shared})
	if err != nil {
		t.Fatal(err)
	}
	defer oc2.Close()
	want := map[string]bool{}
	for _, id := range ids {
		want[idString(id)] = !slices.Contains(marked, id)
	}
	got := map[string]bool{}
	for range n - 3 {
		m, err := oc2.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id := m.ID()
		key := idString(client.MessageID{Ledger: id.LedgerID(), Entry: id.EntryID(), Partition: id.PartitionIdx(), BatchIndex: id.BatchIdx()})
		if !want[key] || got[key] {
			t.Errorf("letter %s delivered: a discarded, unknown or repeated letter", key)
		}
		got[key] = true
	}
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if m, err := oc2.Receive(qctx); err == nil {
		t.Errorf("a discarded letter was delivered: %s", m.Payload())
	}
	if len(got) != n-3 {
		t.Errorf("%d distinct letters delivered, want %d", len(got), n-3)
	}
}

// TestUntilAndDestination: a run told the preview's last message moves what the preview saw,
// to the destination asked for every letter, and reports what arrived since as left.
func TestUntilAndDestination(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, 60*time.Second)
	e.fillDLQ(t, dlq, dsub, 20, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	elsewhere := "persistent://public/default/elsewhere"
	dest := subscribe(t, e.cl, elsewhere, "check")
	// The preview: its last message.
	look := subscribe(t, e.cl, dlq, "look")
	lasts, err := look.LastMessageIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	look.Close()
	var until client.MessageID
	for _, id := range lasts {
		until = id
	}
	// Five more die after the preview.
	e.fillDLQ(t, dlq, dsub, 5, func(i int) *client.Message { return deadLetter(origin, 100+i, nil) })
	sum, _, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Until: &until,
		Destination: elsewhere})
	if err != nil || !sum.OK() || sum.Moved != 20 || sum.Arrived != 5 {
		t.Fatalf("run: %+v, %v; want 20 moved and 5 arrived since", sum, err)
	}
	for i := range 20 {
		m, err := dest.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Key != fmt.Sprintf("k%d", i) {
			t.Errorf("destination got %s, want k%d", m.Key, i)
		}
	}
	if b := e.backlog(t, dlq, dsub); b != 5 {
		t.Errorf("backlog %d, want the 5 that arrived after the preview", b)
	}
}

// TestEditAndResend: an edited letter goes out with the new payload, key and properties plus
// REPLAYED_FROM; only that letter leaves the DLQ.
func TestEditAndResend(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, 60*time.Second)
	app := subscribe(t, e.cl, origin, "app")
	e.fillDLQ(t, dlq, dsub, 5, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	peek := subscribe(t, e.cl, dlq, "peek")
	var third client.MessageID
	for i := range 3 {
		m, err := peek.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		third = m.ID
		_ = i
	}
	peek.Close()
	sum, _, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state,
		Selection: Selection{IDs: []client.MessageID{third}},
		Edit:      &Edit{Payload: []byte(`{"fixed":true}`), Key: "k2-fixed", Properties: map[string]string{"note": "by hand"}}})
	if err != nil || !sum.OK() || sum.Moved != 1 {
		t.Fatalf("resend: %+v, %v", sum, err)
	}
	m, err := app.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Payload) != `{"fixed":true}` || m.Key != "k2-fixed" || m.Properties["note"] != "by hand" ||
		m.Properties[PropertyReplayedFrom] != idString(third) || m.Properties[PropertyReplayCount] != "1" ||
		m.Properties[client.PropertyRealTopic] != "" {
		t.Errorf("resent: key %q payload %s props %v", m.Key, m.Payload, m.Properties)
	}
	if b := e.backlog(t, dlq, dsub); b != 4 {
		t.Errorf("backlog %d after resending one of 5", b)
	}
}
