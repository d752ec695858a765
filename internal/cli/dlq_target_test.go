package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestOrdinaryTopicRefused: discard, purge, resend, subscribe and replay refuse a topic the DLQ
// rule does not call a dead-letter or retry topic (an application's own subscription), exit 2
// and nothing changed; --not-a-dlq acts on it.
func TestOrdinaryTopicRefused(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	const topic, sub = dlqNS + "scratch", "worker"
	ids := fillDLQ(t, ctx, env, topic, sub, 3, func(i int) *client.Message {
		return &client.Message{Key: fmt.Sprint(i), Payload: []byte(`{"job":1}`)} // no REAL_TOPIC: an application's message
	})
	first := positionOf(ids[0])
	for _, args := range [][]string{
		{"dlq", "purge", "scratch", "--yes"},
		{"dlq", "purge", "public/default/scratch", "--count", "1", "--yes"},
		{"dlq", "discard", "scratch", "--all", "--yes"},
		{"dlq", "discard", "scratch", "--ids", first, "--yes"},
		{"dlq", "resend", "scratch", "--id", first, "--yes"},
		{"dlq", "subscribe", "scratch", "--subscription", "more", "--yes"},
		{"replay", "--dlq", "scratch", "--to", "elsewhere", "--yes"},
	} {
		code, out, errOut := runTyped(t, ctx, env, "", false, args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "scratch is not a dead-letter or retry topic") ||
			!strings.Contains(errOut, "--not-a-dlq") {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want 2, naming the topic and --not-a-dlq", args, code, out, errOut)
		}
		if b := backlog(t, ctx, env, topic, sub); b != 3 {
			t.Fatalf("%q: backlog %d, want 3", args, b)
		}
	}
	st, err := env.Admin.Stats(ctx, topic)
	if err != nil || len(st.Subscriptions) != 1 {
		t.Errorf("subscriptions %v, %v: subscribe created one", st.Subscriptions, err)
	}
	if code, _, errOut := runTyped(t, ctx, env, "", false, "dlq", "purge", "scratch", "--count", "1", "--not-a-dlq", "--yes"); code != ExitOK {
		t.Fatalf("--not-a-dlq: code %d, stderr %q", code, errOut)
	}
	if b := backlog(t, ctx, env, topic, sub); b != 2 {
		t.Errorf("backlog %d after skipping 1 with --not-a-dlq", b)
	}
}

// TestShortNamesAcrossNamespaces: a short DLQ name is the one topic of that name in any
// namespace (as the TUI finds it), for the reading commands and the actions alike; a name
// two namespaces hold is an error listing both.
func TestShortNamesAcrossNamespaces(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	if err := env.Admin.CreateNamespace(ctx, "public/demo"); err != nil {
		t.Fatal(err)
	}
	const dlq, sub = "persistent://public/demo/orders-billing-DLQ", "billing-keep"
	fillDLQ(t, ctx, env, dlq, sub, 3, func(i int) *client.Message { return orderLetter(i, "declined") })

	code, out, errOut := runTyped(t, ctx, env, "", false, "dlq", "stats", "orders-billing-DLQ")
	if code != ExitOK || !strings.HasPrefix(out, dlq+"\n") {
		t.Errorf("stats: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runTyped(t, ctx, env, "", false, "replay", "--dlq", "orders-billing-DLQ", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "from "+dlq) {
		t.Errorf("replay --dry-run: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runTyped(t, ctx, env, "", false, "dlq", "discard", "demo/orders-billing-DLQ", "--limit", "1", "--dry-run")
	if code != ExitOK {
		t.Errorf("discard demo/…: code %d, stderr %q", code, errOut)
	}

	// The same name in public/default too: which one is meant is the user's to say.
	fillDLQ(t, ctx, env, dlqNS+"orders-billing-DLQ", sub, 1, func(i int) *client.Message { return orderLetter(i, "declined") })
	for _, args := range [][]string{
		{"dlq", "stats", "orders-billing-DLQ"},
		{"dlq", "discard", "orders-billing-DLQ", "--all", "--yes"},
		{"replay", "--dlq", "orders-billing-DLQ", "--yes"},
	} {
		code, out, errOut := runTyped(t, ctx, env, "", false, args...)
		if code != ExitUsage || out != "" ||
			!strings.Contains(errOut, `"orders-billing-DLQ" names 2 topics: public/default/orders-billing-DLQ, public/demo/orders-billing-DLQ`) {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want 2 and both candidates", args, code, out, errOut)
		}
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 3 {
		t.Errorf("backlog %d, want 3", b)
	}
	if code, _, errOut := runTyped(t, ctx, env, "", false, "dlq", "stats", "public/demo/orders-billing-DLQ"); code != ExitOK {
		t.Errorf("the qualified name: code %d, stderr %q", code, errOut)
	}
}
