package cli

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestReadOnly: with --readonly, or on a context with readonly = true, every action is refused
// (exit 2) before anything changes — no subscription, no acknowledgement, no message, no
// policy, no history — while reads and dry runs work.
func TestReadOnly(t *testing.T) {
	env := brokertest.Start(t)
	writeConfig(t, "[[context]]\nname = \"prod\"\nservice_url = \""+env.ServiceURL+"\"\nadmin_url = \""+env.AdminURL+"\"\nreadonly = true\n")
	ctx := brokertest.Ctx(t, 60*time.Second)
	dlq, sub := dlqNS+"orders-billing-DLQ", "billing-keep"
	if err := env.Admin.CreateTopic(ctx, dlqNS+"orders", 0, nil); err != nil {
		t.Fatal(err)
	}
	ids := fillDLQ(t, ctx, env, dlq, sub, 3, func(i int) *client.Message { return orderLetter(i, "fraud") })
	type counters struct {
		backlogs map[string]int64
		in       [2]int64
	}
	snapshot := func() counters {
		var c counters
		c.backlogs = subscriptionBacklogs(t, ctx, env.Admin, dlq)
		for i, topic := range []string{dlq, dlqNS + "orders"} {
			st, err := env.Admin.Stats(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			c.in[i] = st.MsgInCounter
		}
		return c
	}
	before := snapshot()
	id := positionOf(ids[0])
	actions := [][]string{
		{"dlq", "discard", "orders-billing-DLQ", "--ids", id, "--yes"},
		{"dlq", "discard", "orders-billing-DLQ", "--filter", "reason=fraud", "--yes", "--json"},
		{"dlq", "purge", "orders-billing-DLQ", "--yes"},
		{"dlq", "purge", "orders-billing-DLQ", "--count", "1", "--yes"},
		{"dlq", "resend", "orders-billing-DLQ", "--id", id, "--yes"},
		{"dlq", "subscribe", "orders-billing-DLQ", "--yes"},
		{"dlq", "subscribe", "orders-billing-DLQ", "--subscription", "x", "--retention-minutes", "60", "--yes"},
		{"replay", "--dlq", "orders-billing-DLQ"},
	}
	flags := []string{"--service-url", env.ServiceURL, "--admin-url", env.AdminURL, "--readonly"}
	for _, how := range []struct {
		name, why string
		extra     []string
	}{
		{"--readonly", "read-only (--readonly): not allowed to ", flags},
		{"a readonly context", "read-only (context prod): not allowed to ", []string{"--context", "prod"}},
		// No flag lifts a context's readonly = true.
		{"--readonly=false on a readonly context", "read-only (context prod)", []string{"--context", "prod", "--readonly=false"}},
	} {
		for _, args := range actions {
			var out, errOut bytes.Buffer
			code := RunProcess(ctx, Process{Stdin: strings.NewReader("y\n"), StdinTerminal: true}, append(args, how.extra...), &out, &errOut)
			if code != ExitUsage || out.Len() > 0 || !strings.Contains(errOut.String(), how.why) {
				t.Errorf("%s: %q: code %d, stdout %q, stderr %q", how.name, args, code, out.String(), errOut.String())
			}
		}
	}
	after := snapshot()
	if !maps.Equal(after.backlogs, before.backlogs) || after.in != before.in {
		t.Errorf("after the refusals: %+v, before %+v", after, before)
	}
	if r, err := env.Admin.Retention(ctx, "public/default"); err != nil || r != nil {
		t.Errorf("retention %+v, %v: set in a read-only session", r, err)
	}
	if h := history(t); len(h) != 0 {
		t.Errorf("history %+v", h)
	}

	// Reads and dry runs work.
	for _, args := range [][]string{
		{"dlq", "ls"},
		{"dlq", "stats", "orders-billing-DLQ"},
		{"dlq", "export", "orders-billing-DLQ"},
		{"dlq", "discard", "orders-billing-DLQ", "--filter", "reason=fraud", "--dry-run"},
		{"replay", "--dlq", "orders-billing-DLQ", "--dry-run"},
	} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), append(args, flags...), &out, &errOut); code != ExitOK {
			t.Errorf("%q: code %d, stderr %q", args, code, errOut.String())
		}
	}
	if after := snapshot(); !maps.Equal(after.backlogs, before.backlogs) || after.in != before.in {
		t.Errorf("after the reads: %+v, before %+v", after, before)
	}
}
