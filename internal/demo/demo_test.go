package demo

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/pulsartest"
)

// TestWorkload runs the demo against the embedded broker and checks that, within seconds, the
// screens would have what they need: dead letters kept by the DLQ's initial subscription with a
// reason, an AUTO_CONSUME consumer beside JSON ones, a Key_Shared group of three, deduplication
// on for the namespace.
func TestWorkload(t *testing.T) {
	env := pulsartest.Start(t)

	w, err := New(Options{ServiceURL: env.ServiceURL(), AdminURL: env.AdminURL(), Rate: 60})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	ac := env.Admin()
	pol, err := ac.NamespacePolicies(ctx, DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	if pol.DeduplicationEnabled == nil || !*pol.DeduplicationEnabled {
		t.Errorf("deduplication not enabled on %s: %+v", DefaultNamespace, pol.DeduplicationEnabled)
	}
	if n, err := ac.Partitions(ctx, w.Topic("payments")); err != nil || n != 3 {
		t.Errorf("payments partitions = %d, %v", n, err)
	}

	// Schema types of the consumers of orders.
	waitFor(t, ctx, "orders consumers with their schema types", func() (bool, string) {
		st, err := ac.Stats(ctx, w.Topic("orders"))
		if err != nil {
			return false, err.Error()
		}
		types := map[string]string{}
		for _, s := range st.Subscriptions {
			for _, c := range s.Consumers {
				types[c.ConsumerName] = c.SchemaType
			}
		}
		ok := types["auditor"] == "AUTO_CONSUME" && types["billing-1"] == "JSON" && types["billing-2"] == "JSON"
		return ok, "consumers: " + stringify(types)
	})
	waitFor(t, ctx, "a Key_Shared group of three on payments", func() (bool, string) {
		st, err := ac.PartitionedStats(ctx, w.Topic("payments"), false)
		if err != nil {
			return false, err.Error()
		}
		s := st.Subscriptions["ledger"]
		return s.Type == "Key_Shared" && len(s.Consumers) >= 3, fmt.Sprint(s.Type, " ", len(s.Consumers))
	})
	waitFor(t, ctx, "dead letters kept by billing-audit, with a reason", func() (bool, string) {
		msgs, err := ac.Peek(ctx, w.Topic("orders-billing-DLQ"), "billing-audit", 1)
		if err != nil {
			return false, err.Error()
		}
		if len(msgs) == 0 {
			return false, "empty"
		}
		p := msgs[0].Properties
		return p["reason"] != "" && p["RECONSUMETIMES"] != "" && p["REAL_TOPIC"] == w.Topic("orders"), stringify(p)
	})
	waitFor(t, ctx, "damaged shipments dead-lettered after nacks", func() (bool, string) {
		msgs, err := ac.Peek(ctx, w.Topic("shipments-fulfilment-DLQ"), "fulfilment-audit", 1)
		if err != nil {
			return false, err.Error()
		}
		return len(msgs) == 1, "empty"
	})

	w.Stop()
	w.Stop() // twice is fine
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	last := ""
	for {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; last: %s", what, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func stringify[M ~map[string]string](m M) string {
	s := ""
	for k, v := range m {
		s += k + "=" + v + " "
	}
	return s
}

func TestFate(t *testing.T) {
	counts := [3]int{}
	for i := range 10000 {
		k, r := fate("o-" + time.Duration(i).String())
		counts[k]++
		if (k == 0) != (r == "") {
			t.Fatalf("fate %d with reason %q", k, r)
		}
	}
	failing := float64(counts[1]+counts[2]) / 10000
	if failing < 0.10 || failing > 0.22 {
		t.Errorf("failing share %.2f, want ~0.16 (%v)", failing, counts)
	}
}
