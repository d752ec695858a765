package replay

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

const (
	origin = "persistent://public/default/orders"
	dlq    = "persistent://public/default/orders-app-DLQ"
	dsub   = "app-dlq"
)

func TestReplayAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	const n = 10_000
	app := subscribe(t, e.cl, origin, "app")
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message { return deadLetter(origin, i, nil) })

	sum, evs, err := collect(brokertest.Ctx(t, 120*time.Second), e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Total: n})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.OK() || sum.Moved != n || sum.Considered != n || len(evs) != n || sum.Resumed {
		t.Fatalf("summary %+v, %d events", sum, len(evs))
	}
	if ev := evs[n-1]; ev.Action != Moved || ev.Destination != origin || ev.Progress.Moved != n {
		t.Errorf("last event %+v", ev)
	}
	got := receiveN(t, app, n, 200*time.Millisecond)
	for i, m := range got {
		want := deadLetter(origin, i, nil)
		wantProps := map[string]string{"app": want.Properties["app"], PropertyReplayCount: "1", PropertyReplayedFrom: idString(evs[i].ID)}
		if m.Key != want.Key || string(m.Payload) != string(want.Payload) || !maps.Equal(m.Properties, wantProps) || !m.EventTime.Equal(want.EventTime) {
			t.Fatalf("message %d: key %q payload %s props %v event time %v; want %q %s %v %v",
				i, m.Key, m.Payload, m.Properties, m.EventTime, want.Key, want.Payload, wantProps, want.EventTime)
		}
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Errorf("DLQ backlog %d after the replay, want 0", b)
	}
	// The run is done: the same replay again starts a new run, which finds nothing.
	sum2, err := Run(brokertest.Ctx(t, 30*time.Second), e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	if err != nil || sum2.Resumed || sum2.Run == sum.Run || sum2.Considered != 0 || !sum2.OK() {
		t.Errorf("second run: %+v, %v", sum2, err)
	}
}

// TestSelectiveAndDryRun: a dry run lists exactly what the real run then moves; what is not
// selected stays in the DLQ.
func TestSelectiveAndDryRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	const n = 200
	app := subscribe(t, e.cl, origin, "app")
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message {
		return deadLetter(origin, i, map[string]string{"tier": []string{"gold", "silver", "bronze"}[i%3]})
	})
	var filters []Filter
	for _, expr := range []string{"json.order.region=eu", "property.tier=gold", "payload~\"n\":[0-9]*[02468],"} {
		f, err := ParseFilter(expr)
		if err != nil {
			t.Fatal(err)
		}
		filters = append(filters, f)
	}
	// i%2==0 (eu, even n) and i%3==0: i%6==0.
	var want []string
	for i := 0; i < n; i += 6 {
		want = append(want, deadLetter(origin, i, nil).Key)
	}
	opts := Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Selection: Selection{Filters: filters}}

	dry := opts
	dry.DryRun = true
	dsum, devs, err := collect(brokertest.Ctx(t, 30*time.Second), e.cl, dry)
	if err != nil || !dsum.OK() || dsum.WouldMove != int64(len(want)) || dsum.Skipped != int64(n-len(want)) {
		t.Fatalf("dry run: %+v, %v", dsum, err)
	}
	if b := e.backlog(t, dlq, dsub); b != n {
		t.Fatalf("backlog %d after the dry run, want %d", b, n)
	}
	sum, evs, err := collect(brokertest.Ctx(t, 30*time.Second), e.cl, opts)
	if err != nil || !sum.OK() || sum.Moved != int64(len(want)) {
		t.Fatalf("run: %+v, %v", sum, err)
	}
	pick := func(evs []Event, a Action) (ids []string) {
		for _, ev := range evs {
			if ev.Action == a {
				ids = append(ids, ev.IDString()+">"+ev.Destination)
			}
		}
		return ids
	}
	if w, m := pick(devs, WouldMove), pick(evs, Moved); !slices.Equal(w, m) || len(m) != len(want) {
		t.Errorf("dry run would move %v\nthe run moved %v", w, m)
	}
	var keys []string
	for _, m := range receiveN(t, app, len(want), 200*time.Millisecond) {
		keys = append(keys, m.Key)
	}
	if !slices.Equal(keys, want) {
		t.Errorf("origin received %v, want %v", keys, want)
	}
	if b := e.backlog(t, dlq, dsub); b != int64(n-len(want)) {
		t.Errorf("backlog %d, want %d", b, n-len(want))
	}

	// Explicit ids and a limit.
	var ids []client.MessageID
	for _, ev := range evs[1:4] { // not selected by the filters, so still there
		ids = append(ids, client.MessageID{Ledger: ev.ID.Ledger, Entry: ev.ID.Entry, BatchIndex: -1, Partition: -1})
	}
	sum, err = Run(brokertest.Ctx(t, 30*time.Second), e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state,
		Selection: Selection{IDs: ids, Limit: 2}})
	if err != nil || !sum.OK() || sum.Moved != 2 {
		t.Fatalf("ids and limit: %+v, %v", sum, err)
	}
	receiveN(t, app, 2, 200*time.Millisecond)
}

// TestLoopGuard: a message that dies again after a replay comes back with its replay count
// raised, and is skipped once past --max-replays.
func TestLoopGuard(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, 60*time.Second)
	// The application: fails every message, which its client sends to the DLQ.
	app, err := e.cl.Subscribe(ctx, client.ConsumerOptions{Topic: origin, SubscriptionName: "app", Type: client.Shared,
		InitialPosition: client.Earliest, NackRedeliveryDelay: 10 * time.Millisecond,
		DLQ: &client.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq, InitialSubscriptionName: dsub}})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	go func() {
		for {
			m, err := app.Receive(ctx)
			if err != nil {
				return
			}
			app.Nack(m)
		}
	}()
	p, err := e.cl.CreateProducer(ctx, client.ProducerOptions{Topic: origin})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("poison"), Key: "p1"}); err != nil {
		t.Fatal(err)
	}
	// Reads the DLQ's newest dead letter without acknowledging it.
	peek := subscribe(t, e.cl, dlq, "watch")
	next := func() *client.Message {
		t.Helper()
		m, err := peek.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		peek.Ack(m)
		return m
	}
	opts := Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, MaxReplays: 2}
	for round := 0; round <= 2; round++ {
		m := next()
		if got := replayCount(m); got != round || m.Properties[client.PropertyRealTopic] != origin {
			t.Fatalf("round %d: dead letter with props %v", round, m.Properties)
		}
		sum, evs, err := collect(ctx, e.cl, opts)
		if err != nil {
			t.Fatal(err)
		}
		if round < 2 {
			if !sum.OK() || sum.Moved != 1 {
				t.Fatalf("round %d: %+v", round, sum)
			}
			continue
		}
		if sum.OK() || sum.Guarded != 1 || sum.Moved != 0 || len(evs) != 1 || evs[0].Action != Skipped {
			t.Fatalf("round %d: %+v %+v", round, sum, evs)
		}
		t.Logf("guard: %s", evs[0].Reason)
	}
	if b := e.backlog(t, dlq, dsub); b != 1 {
		t.Errorf("backlog %d, want the guarded message", b)
	}
}

// TestResume: a run that crashes after some messages moved (its later receipts never
// acknowledged) is resumed under the same producer name; with deduplication the origin
// holds every message exactly once, without it none is missing.
func TestResume(t *testing.T) {
	t.Parallel()
	for _, dedup := range []bool{true, false} {
		t.Run(fmt.Sprintf("dedup=%v", dedup), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, dedup)
			const n = 2000
			app := subscribe(t, e.cl, origin, "app")
			e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message { return deadLetter(origin, i, nil) })
			opts := Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Deduplication: dedup}
			var runs []string
			for _, at := range []int64{300, 400, 500} {
				o := opts
				o.crashAfter = at
				sum, err := Run(brokertest.Ctx(t, 60*time.Second), newClient(t, e.b), o)
				if !errors.Is(err, errCrashed) {
					t.Fatalf("crash at %d: %+v, %v", at, sum, err)
				}
				runs = append(runs, sum.Run)
			}
			sum, err := Run(brokertest.Ctx(t, 60*time.Second), e.cl, opts)
			if err != nil || !sum.OK() || !sum.Resumed {
				t.Fatalf("final run: %+v, %v", sum, err)
			}
			runs = append(runs, sum.Run)
			if len(slices.Compact(slices.Clone(runs))) != 1 {
				t.Errorf("runs %v: want one name throughout", runs)
			}
			ctx := brokertest.Ctx(t, 60*time.Second)
			seen := map[string]int{}
			total := 0
			for len(seen) < n {
				m, err := app.Receive(ctx)
				if err != nil {
					t.Fatalf("%d distinct of %d: %v", len(seen), n, err)
				}
				app.Ack(m)
				seen[m.Key]++
				total++
			}
			qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			for {
				m, err := app.Receive(qctx)
				if err != nil {
					break
				}
				seen[m.Key]++
				total++
			}
			cancel()
			t.Logf("dedup=%v: %d distinct, %d received", dedup, len(seen), total)
			if dedup && total != n {
				for k, c := range seen {
					if c > 1 {
						t.Errorf("%s received %d times", k, c)
					}
				}
			}
			for i := range n {
				if k := "k" + strconv.Itoa(i); seen[k] == 0 {
					t.Errorf("%s missing", k)
				}
			}
			if b := e.backlog(t, dlq, dsub); b != 0 {
				t.Errorf("DLQ backlog %d", b)
			}
		})
	}
}

func TestBusy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.fillDLQ(t, dlq, dsub, 3, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	subscribe(t, e.cl, dlq, dsub)
	_, err := Run(brokertest.Ctx(t, 10*time.Second), e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("err %v, want ErrBusy", err)
	}
}
