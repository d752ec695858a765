package replay

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// lastOf is the DLQ's last message now: what a preview pins a run to.
func lastOf(t *testing.T, e *env) client.MessageID {
	t.Helper()
	look := subscribe(t, e.cl, dlq, "look")
	defer look.Close()
	lasts, err := look.LastMessageIDs(brokertest.Ctx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var until client.MessageID
	for _, id := range lasts {
		until = id
	}
	return until
}

// A run whose limit is reached before the preview's last letter left the rest out, which it
// reports as left out, not as arrived: only letters after the preview arrived.
func TestArrivedAndLeftOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, time.Minute)
	e.fillDLQ(t, dlq, dsub, 300, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	until := lastOf(t, e)
	sum, _, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, Discard: true, StateDir: e.state,
		Until: &until, Selection: Selection{Limit: 3}, Admin: e.admin})
	if err != nil || !sum.OK() || sum.Discarded != 3 || sum.Arrived != 0 || sum.LeftOut != 297 {
		t.Fatalf("--limit 3 of 300: discarded %d, arrived %d, left out %d (%v); want 3, 0, 297", sum.Discarded, sum.Arrived, sum.LeftOut, err)
	}

	e.fillDLQ(t, dlq, dsub, 5, func(i int) *client.Message { return deadLetter(origin, 1000+i, nil) })
	sum, _, err = collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, Discard: true, StateDir: e.state,
		Until: &until, Selection: Selection{Limit: 3}, Admin: e.admin})
	if err != nil || sum.Discarded != 3 || sum.Arrived != 5 || sum.LeftOut != 294 {
		t.Fatalf("with 5 more after the preview: discarded %d, arrived %d, left out %d (%v); want 3, 5, 294", sum.Discarded, sum.Arrived, sum.LeftOut, err)
	}

	// Without the admin API the spans are counted from the DLQ's messages: the same here, as
	// nothing after the run's last letter was acknowledged.
	ids := []client.MessageID{{Ledger: until.Ledger, Entry: until.Entry - 10, Partition: -1, BatchIndex: -1}}
	sum, _, err = collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, Discard: true, StateDir: e.state,
		Until: &until, Selection: Selection{IDs: ids}})
	if err != nil || sum.Discarded != 1 || sum.Arrived != 5 || sum.LeftOut != 10 {
		t.Fatalf("one listed id: discarded %d, arrived %d, left out %d (%v); want 1, 5, 10", sum.Discarded, sum.Arrived, sum.LeftOut, err)
	}
}

// A rate-limited run over a filter that skips nine letters in ten reports the rate of letters
// moved, and an ETA at that rate for the letters the preview selected, on the engine's clock.
func TestRateCountsLettersMoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, time.Minute)
	e.fillDLQ(t, dlq, dsub, 100, func(i int) *client.Message {
		return deadLetter(origin, i, map[string]string{"pick": fmt.Sprint(i%10 == 0)})
	})
	f, err := ParseFilter("property.pick=true")
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)}
	sum, evs, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Rate: 2,
		Selection: Selection{Filters: []Filter{f}}, Total: 100, Selected: 10, clock: clock})
	if err != nil || !sum.OK() || sum.Moved != 10 || sum.Skipped != 90 {
		t.Fatalf("run: moved %d, skipped %d, %v", sum.Moved, sum.Skipped, err)
	}
	// Ten sends at two a second: the first at once, the last 4.5 s later.
	if sum.Elapsed != 4500*time.Millisecond || math.Abs(sum.Rate-10/4.5) > 1e-9 || sum.ETA != 0 {
		t.Errorf("summary: %v elapsed, %.3f letters/s, ETA %v; want 4.5s, %.3f, 0", sum.Elapsed, sum.Rate, sum.ETA, 10/4.5)
	}
	checked := 0
	for _, ev := range evs {
		p := ev.Progress
		if ev.Action != Moved || p.Moved < 5 || p.Moved == 10 {
			continue
		}
		checked++
		// The reader may be sends ahead of the receipts (the clock with it), never behind.
		if p.Rate <= 0 || p.Rate > 2.5 || math.Abs(p.Rate-float64(p.Moved)/p.Elapsed.Seconds()) > 1e-9 {
			t.Errorf("after %d moved of %d considered in %v: %.2f letters/s, want moved over elapsed, at most 2.5", p.Moved, p.Considered, p.Elapsed, p.Rate)
		}
		want := time.Duration(float64(10-p.Moved) / p.Rate * float64(time.Second))
		if d := p.ETA - want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("after %d moved at %.2f/s: ETA %v, want %v", p.Moved, p.Rate, p.ETA, want)
		}
	}
	if checked != 5 {
		t.Errorf("%d events checked, want 5", checked)
	}
}

// A run that would take part of a batch says so (SplitBatches), and CheckWholeBatches refuses
// it, reading only: for a broker that acknowledges whole entries only.
func TestSplitBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, time.Minute)
	p, err := e.cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: dsub,
		TopicPurpose: client.TopicPurposeDeadLetter, BatchingMaxMessages: 10, BatchingMaxPublishDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var futs []*client.SendFuture
	for i := range 30 {
		futs = append(futs, p.SendAsync(ctx, deadLetter(origin, i, map[string]string{"pick": fmt.Sprint(i == 3 || i == 5)})))
	}
	for _, f := range futs {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	f, err := ParseFilter("property.pick=true")
	if err != nil {
		t.Fatal(err)
	}
	part := Options{DLQ: dlq, Subscription: dsub, Discard: true, StateDir: e.state, Selection: Selection{Filters: []Filter{f}}}
	dry := part
	dry.DryRun = true
	sum, _, err := collect(ctx, e.cl, dry)
	if err != nil || sum.WouldMove != 2 || sum.SplitBatches != 1 {
		t.Fatalf("two letters of the first batch: would discard %d, %d batches split (%v); want 2, 1", sum.WouldMove, sum.SplitBatches, err)
	}
	var pe *PartOfBatchError
	if err := CheckWholeBatches(ctx, e.cl, part); !errors.As(err, &pe) || pe.Batches != 1 {
		t.Errorf("CheckWholeBatches: %v", err)
	}
	whole := part
	whole.Selection = Selection{Limit: 10}
	if err := CheckWholeBatches(ctx, e.cl, whole); err != nil {
		t.Errorf("the first batch whole: %v", err)
	}
	if b := e.backlog(t, dlq, dsub); b != 3 {
		t.Errorf("backlog %d entries after the checks, want the 3 untouched", b)
	}
}
