package replay

// What a window of thousands of batched sends in flight could break: the order of what
// arrives, a send refused while later ones are on their way, a cancel while sends are
// unreceipted, and exactly once when a run stops with a window in flight and is resumed.

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestWindowKeepsOrder: letters of a few keys, interleaved, for two origins, one of them
// partitioned, spanning many batches: each origin receives its letters in DLQ order (a
// non-partitioned one all of them, a partitioned one those of each key), each once.
func TestWindowKeepsOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, 120*time.Second)
	const n = 12_000
	parted := "persistent://public/default/payments"
	if err := e.admin.CreateTopic(ctx, parted, 3, nil); err != nil {
		t.Fatal(err)
	}
	plain := subscribe(t, e.cl, origin, "app")
	multi := subscribe(t, e.cl, parted, "app")
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message {
		to := origin
		if i%3 == 0 {
			to = parted
		}
		m := deadLetter(to, i, nil)
		m.Key = "key" + strconv.Itoa(i%7)
		m.Payload = []byte(strconv.Itoa(i))
		return m
	})
	sum, err := Run(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	if err != nil || !sum.OK() || sum.Moved != n {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	var plainGot []int
	for _, m := range receiveN(t, plain, n-n/3, 200*time.Millisecond) {
		i, _ := strconv.Atoi(string(m.Payload))
		plainGot = append(plainGot, i)
	}
	if !slices.IsSorted(plainGot) || len(slices.Compact(slices.Clone(plainGot))) != len(plainGot) {
		t.Errorf("%s received its letters out of DLQ order or twice", origin)
	}
	perKey := map[string][]int{}
	for _, m := range receiveN(t, multi, n/3, 200*time.Millisecond) {
		i, _ := strconv.Atoi(string(m.Payload))
		perKey[m.Key] = append(perKey[m.Key], i)
	}
	for k, got := range perKey {
		if !slices.IsSorted(got) {
			t.Errorf("%s: key %s received out of DLQ order", parted, k)
		}
	}
}

// TestSendRefusedMidWindow: the broker refuses one SEND (a batch) while later ones are on
// their way. The letters of that batch stay in the DLQ, unacknowledged, and are reported
// failed; the later ones move. The run's name is retired (later sequence ids are stored), so
// the next run starts under a new one and moves the rest.
func TestSendRefusedMidWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, 120*time.Second)
	const n = 5000
	app := subscribe(t, e.cl, origin, "app")
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	// The third SEND waits until the receipts of the first two are out, then is refused: the
	// client has the batches after it in flight by then.
	var sends, receipts atomic.Int32
	e.b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		switch {
		case dir == broker.Outbound && cmd.GetType() == pb.BaseCommand_SEND_RECEIPT:
			receipts.Add(1)
		case dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_SEND && sends.Add(1) == 3:
			await(func() bool { return receipts.Load() >= 2 })
			return broker.Verdict{Fail: pb.ServerError_NotAllowedError.Enum()}
		}
		return broker.Verdict{}
	})
	sum, evs, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	e.b.Intercept(nil)
	if err != nil || !sum.Complete || sum.OK() || sum.Failed == 0 || sum.Moved+sum.Failed != n {
		t.Fatalf("summary %+v, %v; want complete with some failed, the rest moved", sum, err)
	}
	failed := map[string]bool{}
	var lastFailed, lastMoved client.MessageID
	for _, ev := range evs {
		switch ev.Action {
		case Failed:
			failed[ev.Key] = true
			lastFailed = ev.ID
		case Moved:
			lastMoved = ev.ID
		}
	}
	if len(failed) != int(sum.Failed) || lastMoved.Compare(lastFailed) <= 0 {
		t.Fatalf("%d failed events for %d failed; last moved %v, last failed %v: want later letters moved",
			len(failed), sum.Failed, lastMoved, lastFailed)
	}
	var keys []string
	for _, m := range receiveN(t, app, n-len(failed), 300*time.Millisecond) {
		if failed[m.Key] {
			t.Fatalf("%s failed, and reached the origin", m.Key)
		}
		keys = append(keys, m.Key)
	}
	var want []string
	for i := range n {
		if k := "k" + strconv.Itoa(i); !failed[k] {
			want = append(want, k)
		}
	}
	if !slices.Equal(keys, want) {
		t.Error("the origin did not receive the moved letters in DLQ order")
	}
	if b := e.backlog(t, dlq, dsub); b != int64(len(failed)) {
		t.Errorf("DLQ backlog %d, want the %d failed letters", b, len(failed))
	}
	// The next run: a new name, and the failed letters move.
	sum2, err := Run(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	if err != nil || !sum2.OK() || sum2.Resumed || sum2.Run == sum.Run || sum2.Moved != int64(len(failed)) {
		t.Fatalf("next run: %+v, %v; want a new run moving the %d failed letters", sum2, err, len(failed))
	}
	for _, m := range receiveN(t, app, len(failed), 300*time.Millisecond) {
		if !failed[m.Key] {
			t.Errorf("%s moved twice", m.Key)
		}
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Errorf("DLQ backlog %d after the second run", b)
	}
}

// TestRefusingDestination: letters for a destination whose producer the broker refuses are
// failed and stay in the DLQ; the letters around them, for their origin, move in order.
func TestRefusingDestination(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := brokertest.Ctx(t, 60*time.Second)
	const n = 3000
	app := subscribe(t, e.cl, origin, "app")
	refusing := "persistent://no-such-tenant/ns/orders"
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message {
		to := origin
		if i%10 == 5 {
			to = refusing
		}
		return deadLetter(to, i, nil)
	})
	sum, evs, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	if err != nil || sum.Failed != n/10 || sum.Moved != n-n/10 {
		t.Fatalf("summary %+v, %v; want %d failed and the rest moved", sum, err, n/10)
	}
	for _, ev := range evs {
		if (ev.Destination == refusing) != (ev.Action == Failed) {
			t.Fatalf("%s to %s: %s (%s)", ev.Key, ev.Destination, ev.Action, ev.Reason)
		}
	}
	var want []string
	for i := range n {
		if i%10 != 5 {
			want = append(want, "k"+strconv.Itoa(i))
		}
	}
	var got []string
	for _, m := range receiveN(t, app, len(want), 300*time.Millisecond) {
		got = append(got, m.Key)
	}
	if !slices.Equal(got, want) {
		t.Error("the origin did not receive its letters, in DLQ order")
	}
	if b := e.backlog(t, dlq, dsub); b != n/10 {
		t.Errorf("DLQ backlog %d, want the %d letters for %s", b, n/10, refusing)
	}
}

// TestCancelMidWindow: the run is cancelled while a window of sends is unreceipted, and
// none of those is ever receipted (the broker refuses each). What moved before is
// acknowledged; nothing unreceipted is: every letter is at the origin or in the DLQ, never
// both, never neither, and the events' moved letters are exactly the origin's.
func TestCancelMidWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx, cancel := context.WithCancel(brokertest.Ctx(t, 60*time.Second))
	defer cancel()
	const n = 8000
	app := subscribe(t, e.cl, origin, "app")
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	// From the fourth SEND on, every SEND is refused; the fourth cancels the run and waits
	// until the first three are receipted.
	var sends, receipts atomic.Int32
	e.b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Outbound && cmd.GetType() == pb.BaseCommand_SEND_RECEIPT {
			receipts.Add(1)
		}
		if dir != broker.Inbound || cmd.GetType() != pb.BaseCommand_SEND {
			return broker.Verdict{}
		}
		switch k := sends.Add(1); {
		case k < 4:
			return broker.Verdict{}
		case k == 4:
			cancel()
			await(func() bool { return receipts.Load() >= 3 })
		}
		return broker.Verdict{Fail: pb.ServerError_NotAllowedError.Enum()}
	})
	sum, evs, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	e.b.Intercept(nil)
	if !errors.Is(err, context.Canceled) || sum.Complete || sum.Moved == 0 || sum.Failed == 0 {
		t.Fatalf("summary %+v, %v; want cancelled with some moved and some refused", sum, err)
	}
	moved := map[string]bool{}
	for _, ev := range evs {
		if ev.Action == Moved {
			moved[ev.Key] = true
		}
	}
	at := map[string]bool{}
	for _, m := range receiveN(t, app, len(moved), 300*time.Millisecond) {
		at[m.Key] = true
	}
	left := map[string]bool{}
	for _, k := range remaining(t, e) {
		if left[k] {
			t.Errorf("%s twice in the DLQ", k)
		}
		left[k] = true
	}
	for i := range n {
		k := "k" + strconv.Itoa(i)
		switch {
		case at[k] != moved[k]:
			t.Errorf("%s: at the origin %v, reported moved %v", k, at[k], moved[k])
		case at[k] && left[k]:
			t.Errorf("%s at the origin and still in the DLQ", k)
		case !at[k] && !left[k]:
			t.Errorf("%s neither at the origin nor in the DLQ: lost", k)
		}
	}
	t.Logf("cancelled: %d moved, %d refused, %d left in the DLQ", sum.Moved, sum.Failed, len(left))
}

// TestResumeMidWindowExactlyOnce: with deduplication, runs that stop (a simulated crash)
// with thousands of batched sends in flight, stored at the origin but not acknowledged in the
// DLQ, are resumed under the same name: the origin holds every letter once.
func TestResumeMidWindowExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	const n = 20_000
	app := subscribe(t, e.cl, origin, "app")
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	opts := Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Deduplication: true}
	for k, at := range []int64{3000, 4000} {
		o := opts
		o.crashAfter = at
		sum, err := Run(brokertest.Ctx(t, 60*time.Second), newClient(t, e.b), o)
		if !errors.Is(err, errCrashed) {
			t.Fatalf("crash at %d: %+v, %v", at, sum, err)
		}
		if k > 0 {
			continue
		}
		// The crash left a window behind: stored at the origin, still in the DLQ.
		st, err := e.admin.Stats(brokertest.Ctx(t, 10*time.Second), origin)
		if err != nil {
			t.Fatal(err)
		}
		if acked := n - e.backlog(t, dlq, dsub); st.MsgInCounter <= acked {
			t.Fatalf("%d stored at the origin, %d acknowledged in the DLQ: nothing was in flight at the crash", st.MsgInCounter, acked)
		}
	}
	sum, err := Run(brokertest.Ctx(t, 60*time.Second), e.cl, opts)
	if err != nil || !sum.OK() || !sum.Resumed || !sum.ExactlyOnce {
		t.Fatalf("final run: %+v, %v", sum, err)
	}
	ctx := brokertest.Ctx(t, 60*time.Second)
	seen := map[string]int{}
	for len(seen) < n {
		m, err := app.Receive(ctx)
		if err != nil {
			t.Fatalf("%d distinct of %d: %v", len(seen), n, err)
		}
		app.Ack(m)
		seen[m.Key]++
	}
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	for {
		m, err := app.Receive(qctx)
		if err != nil {
			break
		}
		seen[m.Key]++
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s received %d times", k, c)
		}
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Errorf("DLQ backlog %d", b)
	}
}

// remaining reads the keys of what the DLQ's subscription still holds, without acknowledging
// anything.
func remaining(t *testing.T, e *env) []string {
	t.Helper()
	// As many as the subscription's backlog says, each waited for as long as it takes (a quiet
	// gap alone would end the count early on a loaded machine), then any more that come
	// within a quiet gap: a letter left twice shows as two.
	want := e.backlog(t, dlq, dsub)
	c := subscribe(t, e.cl, dlq, dsub)
	defer c.Close()
	ctx := brokertest.Ctx(t, 60*time.Second)
	var keys []string
	for int64(len(keys)) < want {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatalf("read %d of the %d letters the DLQ's backlog counts: %v", len(keys), want, err)
		}
		keys = append(keys, m.Key)
	}
	for {
		qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		m, err := c.Receive(qctx)
		cancel()
		if err != nil {
			return keys
		}
		keys = append(keys, m.Key)
	}
}

// await polls cond for up to 10 s: from an interceptor, which holds up the connection whose
// command it judges while it waits.
func await(cond func() bool) {
	for deadline := time.Now().Add(10 * time.Second); !cond() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// TestResumeMidBatchBatches: a run stops (a simulated crash) part-way through a batch whose
// letters are all stored at the origin; the resumed run re-reads that batch's unacknowledged
// letters, which the broker reports stored (PRODUCER_SUCCESS's last sequence id), and batches
// the letters after them: the origin holds every letter once, and the resumed run's letters
// arrived in batches.
func TestResumeMidBatchBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	const n, crash = 5000, 1037
	app := subscribe(t, e.cl, origin, "app")
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	opts := Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Deduplication: true}
	o := opts
	o.crashAfter = crash
	if sum, err := Run(brokertest.Ctx(t, 60*time.Second), newClient(t, e.b), o); !errors.Is(err, errCrashed) {
		t.Fatalf("crash at %d: %+v, %v", crash, sum, err)
	}
	ctx := brokertest.Ctx(t, 60*time.Second)
	stored, err := e.admin.LastMessageID(ctx, origin)
	if err != nil {
		t.Fatal(err)
	}
	// The batch of the crash's letter was stored whole, beyond what the run moved.
	if st, err := e.admin.Stats(ctx, origin); err != nil || st.MsgInCounter <= crash {
		t.Fatalf("%d stored at the origin at the crash, %d moved (%v): nothing beyond the crash was stored", st.MsgInCounter, crash, err)
	}
	sum, err := Run(ctx, e.cl, opts)
	if err != nil || !sum.OK() || !sum.Resumed || sum.Moved != n-crash {
		t.Fatalf("resumed run: %+v, %v", sum, err)
	}
	seen := map[string]int{}
	batched := 0 // letters the resumed run stored in batches of more than one
	for len(seen) < n {
		m, err := app.Receive(ctx)
		if err != nil {
			t.Fatalf("%d distinct of %d: %v", len(seen), n, err)
		}
		app.Ack(m)
		seen[m.Key]++
		if (m.ID.Ledger > stored.LedgerID || m.ID.Ledger == stored.LedgerID && m.ID.Entry > stored.EntryID) && m.ID.BatchSize > 1 {
			batched++
		}
	}
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	for {
		m, err := app.Receive(qctx)
		if err != nil {
			break
		}
		seen[m.Key]++
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s received %d times", k, c)
		}
	}
	if batched == 0 {
		t.Error("the resumed run stored no batch of more than one letter")
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Errorf("DLQ backlog %d", b)
	}
	t.Logf("%d of the resumed run's %d letters arrived in batches", batched, sum.Moved)
}
