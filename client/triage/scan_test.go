package triage_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/triage"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

const ns = "persistent://public/default/"

// want is what a test wrote into a DLQ, counted as it wrote it.
type want struct {
	letters    int64
	reasons    map[string]int64
	origins    map[string]int64
	subs       map[string]int64
	keys       map[string]int64
	reconsumes map[int]int64
	keyIDs     map[string][]int // the letters (by number) of each key
}

// fill publishes n dead letters to dlq (whose subscription sub it creates first, as a DLQ
// producer with an initial subscription does), batched, with a few reasons, origins and
// subscriptions and keys of uneven frequency, and returns what it wrote.
func fill(t *testing.T, cl *client.Client, dlq, sub string, n int) want {
	t.Helper()
	ctx := brokertest.Ctx(t, 2*time.Minute)
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: sub,
		TopicPurpose: client.TopicPurposeDeadLetter, BatchingMaxMessages: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w := want{reasons: map[string]int64{}, origins: map[string]int64{}, subs: map[string]int64{},
		keys: map[string]int64{}, reconsumes: map[int]int64{}, keyIDs: map[string][]int{}}
	reasons := []string{"payment declined", "timeout", "schema mismatch", ""}
	origins := []string{"orders", "payments"}
	futs := make([]*client.SendFuture, 0, n)
	for i := range n {
		origin := ns + origins[i%len(origins)]
		props := map[string]string{client.PropertyRealTopic: origin + "-partition-0",
			client.PropertyOriginMessageID: fmt.Sprintf("9:%d:0", i), "n": fmt.Sprint(i)}
		reason := reasons[(i/7)%len(reasons)]
		if reason != "" {
			props["reason"] = reason
		}
		rc := -1
		if i%3 != 0 {
			rc = i % 5
			props[client.PropertyReconsumeTimes] = fmt.Sprint(rc)
		}
		key := fmt.Sprintf("customer-%d", i%1000)
		if i%10 == 0 {
			key = fmt.Sprintf("hot-%d", i%30) // 30 keys of n/30 letters each
		}
		w.letters++
		w.reasons[or(reason, triage.NoReason)]++
		w.origins[origin]++
		w.subs[triage.NoOrigin]++ // our test producer's name says nothing of a subscription
		w.keys[key]++
		w.reconsumes[rc]++
		w.keyIDs[key] = append(w.keyIDs[key], i)
		futs = append(futs, p.SendAsync(ctx, &client.Message{Key: key, Properties: props,
			Payload: fmt.Appendf(nil, `{"n":%d,"key":%q}`, i, key)}))
	}
	for i, f := range futs {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatalf("letter %d: %v", i, err)
		}
	}
	return w
}

func or(v, none string) string {
	if v == "" {
		return none
	}
	return v
}

func counts(cs []triage.Count) map[string]int64 {
	m := map[string]int64{}
	for _, c := range cs {
		m[c.Name] = c.N
	}
	return m
}

// TestScanCounts scans a DLQ of 100,000 letters and compares every breakdown with what was
// written; the DLQ's subscription is untouched and no subscription is left behind.
func TestScanCounts(t *testing.T) {
	env := pulsartest.Start(t)
	cl := brokertest.NewClient(t, env.ServiceURL())
	dlq := ns + "scan-counts-DLQ"
	const n = 100_000
	w := fill(t, cl, dlq, "keep", n)
	ctx := brokertest.Ctx(t, 2*time.Minute)
	before, err := env.Admin().Stats(ctx, dlq)
	if err != nil {
		t.Fatal(err)
	}

	var last triage.Progress
	var reports atomic.Int64
	res, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, Admin: env.Admin(),
		Progress: func(p triage.Progress) { last = p; reports.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Stats
	if !res.Complete || res.Read != n || s.Letters != n || int64(len(res.Matches)) != n {
		t.Fatalf("read %d, counted %d, indexed %d, complete %v; want %d", res.Read, s.Letters, len(res.Matches), res.Complete, n)
	}
	for name, pair := range map[string][2]map[string]int64{
		"reason": {counts(s.ByReason), w.reasons}, "origin": {counts(s.ByOrigin), w.origins},
		"subscription": {counts(s.BySubscription), w.subs},
	} {
		if !maps.Equal(pair[0], pair[1]) {
			t.Errorf("by %s = %v, want %v", name, pair[0], pair[1])
		}
	}
	if len(s.TopKeys) != triage.TopKeys || s.DistinctKeys != len(w.keys) {
		t.Errorf("%d top keys of %d distinct, want %d of %d", len(s.TopKeys), s.DistinctKeys, triage.TopKeys, len(w.keys))
	}
	for _, c := range s.TopKeys {
		if w.keys[c.Name] != c.N {
			t.Errorf("key %s: %d, want %d", c.Name, c.N, w.keys[c.Name])
		}
	}
	floor := s.TopKeys[len(s.TopKeys)-1].N
	for k, c := range w.keys {
		if c > floor && !slices.ContainsFunc(s.TopKeys, func(x triage.Count) bool { return x.Name == k }) {
			t.Errorf("key %s (%d letters) missing from the top keys (the last has %d)", k, c, floor)
		}
	}
	got := map[int]int64{}
	for _, r := range s.Reconsumes {
		got[r.Times] = r.N
	}
	if !maps.Equal(got, w.reconsumes) {
		t.Errorf("reconsume times = %v, want %v", got, w.reconsumes)
	}
	var hours int64
	for _, h := range s.ByHour {
		hours += h.N
	}
	if hours != n || s.First.IsZero() || s.Last.Before(s.First) {
		t.Errorf("per hour: %d letters from %v to %v", hours, s.First, s.Last)
	}
	if !last.Done || last.Read != n || last.TotalEntries == 0 || last.Entries != last.TotalEntries || reports.Load() < 2 {
		t.Errorf("last progress %+v after %d reports", last, reports.Load())
	}

	after, err := env.Admin().Stats(ctx, dlq)
	if err != nil {
		t.Fatal(err)
	}
	if after.Subscriptions["keep"].MsgBacklog != before.Subscriptions["keep"].MsgBacklog || len(after.Subscriptions) != 1 {
		t.Errorf("subscriptions after the scan: %+v (backlog before %d)", after.Subscriptions, before.Subscriptions["keep"].MsgBacklog)
	}

	t.Run("search", func(t *testing.T) { search(t, env, cl, dlq, w) })
}

// search finds every letter of one key over the whole DLQ, and reads them back a page at a
// time, forward and back, the same each way.
func search(t *testing.T, env *pulsartest.Broker, cl *client.Client, dlq string, w want) {
	ctx := brokertest.Ctx(t, time.Minute)
	f, err := expr.Parse("key=customer-27", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	res, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	ids := w.keyIDs["customer-27"]
	if len(res.Matches) != len(ids) || res.Stats.Letters != int64(len(ids)) || res.Read != w.letters {
		t.Fatalf("%d matches (%d counted) of %d read; want %d", len(res.Matches), res.Stats.Letters, res.Read, len(ids))
	}
	const page = 30
	read := func(i int) []string {
		msgs, err := triage.Fetch(ctx, env.Admin(), dlq, nil, res.Matches[i:min(i+page, len(res.Matches))])
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(msgs))
		for j, m := range msgs {
			if m.Key != "customer-27" {
				t.Errorf("page %d: letter %s has key %q", i/page, m.Properties["n"], m.Key)
			}
			out[j] = m.Properties["n"]
		}
		return out
	}
	var forward []string
	for i := 0; i < len(res.Matches); i += page {
		forward = append(forward, read(i)...)
	}
	var back []string
	for i := (len(res.Matches) - 1) / page * page; i >= 0; i -= page {
		back = append(read(i), back...)
	}
	wantIDs := make([]string, len(ids))
	for i, id := range ids {
		wantIDs[i] = fmt.Sprint(id)
	}
	if !slices.Equal(forward, wantIDs) || !slices.Equal(back, wantIDs) {
		t.Errorf("forward %v\nback %v\nwant %v", forward, back, wantIDs)
	}
}

// TestScanTopicDeleted: a DLQ deleted while it is scanned ends the scan with ErrTopicGone.
func TestScanTopicDeleted(t *testing.T) {
	env := pulsartest.Start(t)
	cl := brokertest.NewClient(t, env.ServiceURL())
	dlq := ns + "scan-deleted-DLQ"
	fill(t, cl, dlq, "keep", 20_000)
	ctx := brokertest.Ctx(t, time.Minute)
	var deleting atomic.Bool
	res, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, ProgressEvery: time.Millisecond,
		Progress: func(p triage.Progress) {
			if p.Read > 1000 && deleting.CompareAndSwap(false, true) {
				if err := env.Admin().DeleteTopic(ctx, dlq, false, true); err != nil {
					t.Errorf("delete: %v", err)
				}
			}
		}})
	if !errors.Is(err, triage.ErrTopicGone) {
		t.Fatalf("scan of a deleted DLQ: %v (read %d), want ErrTopicGone", err, res.Read)
	}
	if res.Complete {
		t.Error("a scan cut short says it is complete")
	}
}

// TestScanUntil reads only up to the given last message, whatever arrived since.
func TestScanUntil(t *testing.T) {
	env := pulsartest.Start(t)
	cl := brokertest.NewClient(t, env.ServiceURL())
	dlq := ns + "scan-until-DLQ"
	fill(t, cl, dlq, "keep", 500)
	ctx := brokertest.Ctx(t, time.Minute)
	first, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, cl, dlq, "keep", 100)
	again, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, Until: first.Until})
	if err != nil {
		t.Fatal(err)
	}
	if again.Read != 500 {
		t.Errorf("read %d up to the first scan's end, want 500", again.Read)
	}
	all, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq})
	if err != nil || all.Read != 600 {
		t.Errorf("read %d, %v; want 600", all.Read, err)
	}
}

// TestScanEmpty: an empty DLQ scans to nothing at once.
func TestScanEmpty(t *testing.T) {
	env := pulsartest.Start(t)
	cl := brokertest.NewClient(t, env.ServiceURL())
	dlq := ns + "scan-empty-DLQ"
	ctx := brokertest.Ctx(t, 30*time.Second)
	if err := env.Admin().CreateTopic(ctx, dlq, 0, nil); err != nil {
		t.Fatal(err)
	}
	res, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq})
	if err != nil || res.Read != 0 || !res.Complete {
		t.Fatalf("empty scan: %+v, %v", res, err)
	}
}

// TestScanCancelled: a cancelled scan stops at the next letter, though its reader has more
// queued (a scan takes queued letters without waiting; the 150th is in the middle of a batch),
// and says it is not complete.
func TestScanCancelled(t *testing.T) {
	env := pulsartest.Start(t)
	cl := brokertest.NewClient(t, env.ServiceURL())
	dlq := ns + "scan-cancelled-DLQ"
	fill(t, cl, dlq, "keep", 5_000)
	ctx, cancel := context.WithCancel(brokertest.Ctx(t, time.Minute))
	defer cancel()
	visited := 0
	res, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq,
		Visit: func(*client.Message, *deadletter.Letter, bool) error {
			if visited++; visited == 150 {
				cancel()
			}
			return nil
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled scan: %v, want context.Canceled", err)
	}
	if res.Complete || res.Read != 150 || visited != 150 {
		t.Errorf("cancelled after the 150th letter: read %d, visited %d, complete %v; want 150, 150, false",
			res.Read, visited, res.Complete)
	}
}
