package triage_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/triage"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// ackSome reads every letter of dlq through sub and acknowledges those pick selects (batch
// indexes acknowledged one by one, as a discard does), then waits until the broker has them.
// It returns the acknowledged letters' numbers (their property n).
func ackSome(t *testing.T, cl *client.Client, dlq, sub string, n int, pick func(i int) bool) map[string]bool {
	t.Helper()
	ctx := brokertest.Ctx(t, time.Minute)
	cons, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: dlq, SubscriptionName: sub, EnableBatchIndexAck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	acked := map[string]bool{}
	for range n {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i, _ := strconv.Atoi(m.Properties["n"])
		if pick(i) {
			if err := cons.Ack(m); err != nil {
				t.Fatal(err)
			}
			acked[m.Properties["n"]] = true
		}
	}
	if err := cons.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	return acked
}

// letters scans dlq as o says and returns the numbers of the letters it read, each with
// whether the scan said it was acknowledged.
func letters(t *testing.T, cl *client.Client, o triage.ScanOptions) (*triage.Result, map[string]bool) {
	t.Helper()
	seen := map[string]bool{}
	o.Visit = func(m *client.Message, _ *deadletter.Letter, acked bool) error {
		if _, dup := seen[m.Properties["n"]]; dup {
			t.Errorf("letter %s read twice", m.Properties["n"])
		}
		seen[m.Properties["n"]] = acked
		return nil
	}
	res, err := triage.Scan(brokertest.Ctx(t, time.Minute), cl, o)
	if err != nil {
		t.Fatal(err)
	}
	return res, seen
}

// A scan, a browse and a read back of a subscription's letters leave out what it acknowledged
// (whole batches, single letters of batches); with IncludeAcknowledged they show every retained
// letter and say which were acknowledged. The broker's count in letters agrees.
func TestScanReadsTheSubscriptionsLetters(t *testing.T) {
	env := brokertest.Start(t)
	cl := env.Client(t)
	dlq := ns + "view-DLQ"
	const n = 3000
	fill(t, cl, dlq, "keep", n)
	acked := ackSome(t, cl, dlq, "keep", n, func(i int) bool { return i%10 == 3 || (i >= 1000 && i < 1200) || i < 150 })
	ctx := brokertest.Ctx(t, time.Minute)

	res, seen := letters(t, cl, triage.ScanOptions{Topic: dlq, Subscription: "keep", Admin: env.Admin})
	if res.Read != int64(n-len(acked)) || res.Stats.Letters != res.Read || res.Approx != "" || !res.Complete {
		t.Fatalf("read %d (counted %d, approx %q), want %d", res.Read, res.Stats.Letters, res.Approx, n-len(acked))
	}
	for k := range seen {
		if acked[k] {
			t.Fatalf("letter %s was acknowledged, and read", k)
		}
	}
	b, err := triage.ReadBacklog(ctx, env.Admin, dlq, "keep")
	if err != nil || !b.LettersKnown || b.Letters != res.Read || b.Entries*10 > b.Letters {
		t.Errorf("backlog %+v, %v; want %d letters in batches", b, err, res.Read)
	}

	all, seenAll := letters(t, cl, triage.ScanOptions{Topic: dlq, Subscription: "keep", Admin: env.Admin, IncludeAcknowledged: true})
	if all.Read != n || all.Acknowledged != int64(len(acked)) || len(all.Matches) != n {
		t.Fatalf("with the acknowledged: read %d, %d acknowledged, %d matches; want %d, %d", all.Read, all.Acknowledged, len(all.Matches), n, len(acked))
	}
	for k, a := range seenAll {
		if a != acked[k] {
			t.Fatalf("letter %s: acknowledged %v, want %v", k, a, acked[k])
		}
	}
	marked := 0
	for _, p := range all.Matches {
		if all.View.Acked(p) {
			marked++
		}
	}
	if marked != len(acked) {
		t.Errorf("View.Acked marks %d letters, want %d", marked, len(acked))
	}

	// A page of the subscription's letters starts after what it acknowledged first; a read back
	// of the scan's positions under the subscription's view leaves the acknowledged out.
	page, err := triage.Browse(ctx, cl, env.Admin, dlq, res.View, triage.From{Earliest: true}, 50)
	if err != nil || len(page.Messages) != 50 {
		t.Fatalf("browse: %d letters, %v", len(page.Messages), err)
	}
	for _, m := range page.Messages {
		if acked[m.Properties["n"]] {
			t.Errorf("browse shows acknowledged letter %s", m.Properties["n"])
		}
	}
	if first := page.Messages[0].Properties["n"]; first != "150" {
		t.Errorf("the subscription's first letter is %s, want 150", first)
	}
	back, err := triage.Fetch(ctx, env.Admin, dlq, res.View, all.Matches[:400])
	if err != nil {
		t.Fatal(err)
	}
	var wantBack int
	for i := range 400 {
		if !acked[fmt.Sprint(i)] {
			wantBack++
		}
	}
	if len(back) != wantBack {
		t.Errorf("read back %d of 400 positions, want the %d not acknowledged", len(back), wantBack)
	}
	if after, _ := env.Admin.Stats(ctx, dlq); !slices.Equal(slices.Sorted(maps.Keys(after.Subscriptions)), []string{"keep"}) {
		t.Errorf("subscriptions after the reads: %v", slices.Sorted(maps.Keys(after.Subscriptions)))
	}
}

// Against a broker that does not say which letters of a batch were acknowledged (upstream, as
// --compat upstream answers), a batch acknowledged in part counts whole, and the result says the
// count is approximate — unless the broker acknowledges whole entries only, when reading whole
// entries is exactly what the subscription will get.
func TestScanWithoutBatchIndexes(t *testing.T) {
	for _, batchAcks := range []bool{true, false} {
		t.Run(fmt.Sprint("batch-index acks ", batchAcks), func(t *testing.T) {
			env := brokertest.Start(t, func(c *broker.Config) {
				c.CompatUpstream = true
				c.AcknowledgmentAtBatchIndexLevelEnabled = batchAcks
			})
			cl := env.Client(t)
			dlq := ns + "compat-DLQ"
			const n = 1000
			fill(t, cl, dlq, "keep", n)
			acked := ackSome(t, cl, dlq, "keep", n, func(i int) bool { return i%10 == 3 || i < 300 })
			// The letters of the entries not acknowledged whole, as the batches fell.
			entryOf := map[string]triage.Position{}
			whole, _ := letters(t, cl, triage.ScanOptions{Topic: dlq, Visit: nil})
			for i, p := range whole.Matches {
				entryOf[fmt.Sprint(i)] = triage.Position{Ledger: p.Ledger, Entry: p.Entry}
			}
			open := map[triage.Position]bool{}
			for k, e := range entryOf {
				if !acked[k] {
					open[e] = true
				}
			}
			var want int64
			for _, e := range entryOf {
				if open[e] {
					want++
				}
			}
			b, err := triage.ReadBacklog(brokertest.Ctx(t, time.Minute), env.Admin, dlq, "keep")
			if err != nil || b.LettersKnown || b.Entries != int64(len(open)) {
				t.Fatalf("backlog %+v, %v: want %d entries and no letter count", b, err, len(open))
			}
			res, _ := letters(t, cl, triage.ScanOptions{Topic: dlq, Subscription: "keep", Admin: env.Admin})
			if res.Read != want {
				t.Errorf("read %d letters of the %d batches not acknowledged whole, want %d", res.Read, len(open), want)
			}
			if (res.Approx != "") != batchAcks {
				t.Errorf("approx %q with batch-index acks %v", res.Approx, batchAcks)
			}
		})
	}
}
