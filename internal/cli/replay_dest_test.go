package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestReplayDestinationsAndTenants: a replay whose letters name three origins in two tenants;
// the dry run lists the three destinations with their counts, and the one in another tenant
// than the DLQ's is left (failed) unless --allow-cross-tenant.
func TestReplayDestinationsAndTenants(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	if err := env.Admin.CreateTenant(ctx, "acme", adminapi.TenantInfo{AllowedClusters: []string{"standalone"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Admin.CreateNamespace(ctx, "acme/billing"); err != nil {
		t.Fatal(err)
	}
	origins := []string{dlqNS + "orders", dlqNS + "payments", "persistent://acme/billing/invoices"}
	for _, o := range origins {
		c, err := env.Client(t).Subscribe(ctx, client.ConsumerOptions{Topic: o, SubscriptionName: "app"})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	const dlq, sub = dlqNS + "orders-billing-DLQ", "billing-keep"
	fillDLQ(t, ctx, env, dlq, sub, 6, func(i int) *client.Message {
		m := orderLetter(i, "declined")
		m.Properties[client.PropertyRealTopic] = origins[i%3] + "-partition-0"
		return m
	})
	received := func(topic string) int64 { // messages, where a batch is one entry of the backlog
		st, err := env.Admin.Stats(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		return st.MsgInCounter
	}

	code, out, errOut := runTyped(t, ctx, env, "", false, "replay", "--dlq", "orders-billing-DLQ", "--dry-run")
	for _, want := range []string{"would move 4 of 6", "failed 2", "would move to:\n",
		"would move to:\n       2  acme/billing/invoices  not sent: tenant acme, the DLQ's is public\n       2  orders\n       2  payments\n",
		"--allow-cross-tenant sends them there"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if code != ExitFailure || strings.Contains(errOut, "another tenant") {
		t.Errorf("dry run: code %d, stderr %q (the destinations are listed once, not per letter)", code, errOut)
	}
	code, out, _ = runTyped(t, ctx, env, "", false, "replay", "--dlq", "orders-billing-DLQ", "--dry-run", "--allow-cross-tenant")
	if code != ExitOK || !strings.Contains(out, "would move 6 of 6") || !strings.Contains(out, "       2  acme/billing/invoices\n") {
		t.Errorf("dry run --allow-cross-tenant: code %d:\n%s", code, out)
	}
	// --destination in another tenant is refused before anything is read.
	code, _, errOut = runTyped(t, ctx, env, "", false, "replay", "--dlq", "orders-billing-DLQ", "--destination", "acme/billing/invoices")
	if code != ExitUsage || !strings.Contains(errOut, "--destination acme/billing/invoices is in tenant acme, the DLQ in public") {
		t.Errorf("--destination: code %d, stderr %q", code, errOut)
	}

	// Without the flag the run moves what stays in the tenant; the rest stays in the DLQ.
	code, out, _ = runTyped(t, ctx, env, "", false, "replay", "--dlq", "orders-billing-DLQ")
	if code != ExitFailure || !strings.Contains(out, "moved 4 of 6") {
		t.Errorf("run: code %d:\n%s", code, out)
	}
	if received(origins[0]) != 2 || received(origins[1]) != 2 || received(origins[2]) != 0 || backlog(t, ctx, env, dlq, sub) != 2 {
		t.Fatalf("after the run: orders %d, payments %d, invoices %d, DLQ %d", received(origins[0]), received(origins[1]),
			received(origins[2]), backlog(t, ctx, env, dlq, sub))
	}
	code, out, _ = runTyped(t, ctx, env, "", false, "replay", "--dlq", "orders-billing-DLQ", "--allow-cross-tenant", "--new")
	if code != ExitOK || received(origins[2]) != 2 || backlog(t, ctx, env, dlq, sub) != 0 {
		t.Errorf("--allow-cross-tenant: code %d, invoices %d, DLQ %d:\n%s", code, received(origins[2]), backlog(t, ctx, env, dlq, sub), out)
	}
}
