package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// statsCounts is what a test wrote into a DLQ, counted as it wrote it, in the shape of the
// breakdowns of "dlq stats --json".
type statsCounts struct {
	reasons, origins, subs, keys map[string]int64
	reconsumes                   map[int]int64
}

func newStatsCounts() statsCounts {
	return statsCounts{reasons: map[string]int64{}, origins: map[string]int64{}, subs: map[string]int64{},
		keys: map[string]int64{}, reconsumes: map[int]int64{}}
}

// TestDLQStats counts a DLQ of letters with a few reasons, origins and keys, with and without
// filters, and compares each breakdown with counts made while writing; the DLQ's
// subscription keeps its backlog and no subscription is added.
func TestDLQStats(t *testing.T) {
	t.Parallel()
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	dlq := dlqNS + "orders-billing-DLQ"
	all, timeoutFromOrders := newStatsCounts(), newStatsCounts()
	cl := env.Client(t)
	// Named as the DLQ routers name their producers, so that letters of orders tell their
	// subscription (billing); those of payments do not (the name is not theirs).
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: "billing-keep",
		Name: dlqNS + "orders-billing-cons1-abcde-DLQ", TopicPurpose: client.TopicPurposeDeadLetter, BatchingMaxMessages: 20})
	if err != nil {
		t.Fatal(err)
	}
	reasons := []string{"timeout", "payment declined", "timeout", ""}
	var futs []*client.SendFuture
	for i := range 300 {
		origin := dlqNS + []string{"orders", "payments"}[i%2]
		props := map[string]string{client.PropertyRealTopic: origin + "-partition-1"}
		reason := reasons[(i/5)%len(reasons)]
		if reason != "" {
			props["error"] = reason
		}
		rc := -1
		if i%3 == 0 {
			rc = i % 4
			props[client.PropertyReconsumeTimes] = fmt.Sprint(rc)
		}
		key := fmt.Sprintf("customer-%d", i%7)
		sub := dlqops.NoOrigin
		if origin == dlqNS+"orders" {
			sub = "billing"
		}
		count := func(c statsCounts) {
			c.reasons[or(reason, dlqops.NoReason)]++
			c.origins[origin]++
			c.subs[sub]++
			c.keys[key]++
			c.reconsumes[rc]++
		}
		count(all)
		if reason == "timeout" && sub == "billing" {
			count(timeoutFromOrders)
		}
		futs = append(futs, p.SendAsync(ctx, &client.Message{Key: key, Properties: props, Payload: fmt.Appendf(nil, `{"n":%d}`, i)}))
	}
	for _, f := range futs {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	before := subscriptionBacklogs(t, ctx, env.Admin, dlq)

	check := func(name string, want statsCounts, args ...string) {
		t.Helper()
		code, out, errOut := runDLQCmd(t, ctx, env, append([]string{"stats", "orders-billing-DLQ", "--json"}, args...)...)
		var got struct {
			Topic    string `json:"topic"`
			Read     int64  `json:"read"`
			Selected int64  `json:"selected"`
			Complete bool   `json:"complete"`
			dlqops.ScanStats
		}
		if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil {
			t.Fatalf("%s: code %d, %v, stdout %q, stderr %q", name, code, err, out, errOut)
		}
		if got.Topic != dlq || got.Read != 300 || got.Selected != got.Letters || !got.Complete {
			t.Errorf("%s: %s", name, out)
		}
		recon := map[int]int64{}
		var hours int64
		for _, r := range got.Reconsumes {
			recon[r.Times] = r.N
		}
		for _, h := range got.ByHour {
			hours += h.N
		}
		if sum(want.reasons) != got.Letters || hours != got.Letters || !maps.Equal(counted(got.ByReason), want.reasons) ||
			!maps.Equal(counted(got.ByOrigin), want.origins) || !maps.Equal(counted(got.BySubscription), want.subs) ||
			!maps.Equal(counted(got.TopKeys), want.keys) || !maps.Equal(recon, want.reconsumes) {
			t.Errorf("%s: got %s\nwant %+v", name, out, want)
		}
	}
	check("all", all)
	// Repeated filters are ANDed.
	check("filtered", timeoutFromOrders, "--filter", "reason=timeout", "--filter", "origin=orders")

	code, out, errOut := runDLQCmd(t, ctx, env, "stats", dlq, "--filter", "key=customer-3")
	for _, want := range []string{dlq + "\n", "read       300 letters", "selected   " + fmt.Sprint(all.keys["customer-3"]) + " by key=customer-3",
		"\nby reason\n", "\nby origin subscription\n", "\nkeys\n", "\nper hour (UTC)\n", "\nreconsume times\n", "none (died by redelivery)"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("stats: code %d, stderr %q, output lacks %q:\n%s", code, errOut, want, out)
		}
	}
	checkUntouched(t, ctx, env.Admin, dlq, before)

	code, out, errOut = runDLQCmd(t, ctx, env, "stats", "missing-DLQ")
	if code != ExitFailure || out != "" || !strings.Contains(errOut, `DLQ topic "missing-DLQ" not found`) {
		t.Errorf("stats of a missing DLQ: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := env.Admin.Stats(ctx, dlqNS+"missing-DLQ"); err == nil {
		t.Error("stats of a missing DLQ created it")
	}
}

func counted(cs []dlqops.Count) map[string]int64 {
	m := map[string]int64{}
	for _, c := range cs {
		m[c.Name] = c.N
	}
	return m
}

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

func or(v, none string) string {
	if v == "" {
		return none
	}
	return v
}
