package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// A selection is what the user wrote, never wider: what names nothing is refused before
// anything connects, every letter is said explicitly, and a replay of every letter of a large
// DLQ asks a person first.

// runTyped runs "letterbox ARGS..." against env with typed as stdin, a terminal when terminal
// is set.
func runTyped(t *testing.T, ctx context.Context, env *brokertest.Env, typed string, terminal bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--service-url", env.ServiceURL, "--admin-url", env.AdminURL)
	code = RunProcess(ctx, Process{Stdin: strings.NewReader(typed), StdinTerminal: terminal}, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestEmptySelectionsRefused: a blank --filter, an empty --ids, a list with an empty item, or
// no selection at all is a usage error for discard, replay and resend, and no letter moves.
func TestEmptySelectionsRefused(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	const dlq, sub = dlqNS + "orders-billing-DLQ", "billing-keep"
	subscribeOrigin(t, ctx, env)
	fillDLQ(t, ctx, env, dlq, sub, 5, func(i int) *client.Message { return orderLetter(i, "declined") })

	for _, args := range [][]string{
		{"dlq", "discard", dlq, "--filter", "", "--yes"},
		{"dlq", "discard", dlq, "--filter", "  ", "--yes"},
		{"dlq", "discard", dlq, "--filter", "\t\n", "--yes"},
		{"dlq", "discard", dlq, "--ids", "", "--yes"},
		{"dlq", "discard", dlq, "--ids", ",", "--yes"},
		{"dlq", "discard", dlq, "--ids", " , ", "--yes"},
		{"dlq", "discard", dlq, "--ids", "1:0,,1:1", "--yes"},
		{"dlq", "discard", dlq, "--ids", "1:0,", "--yes"},
		{"dlq", "discard", dlq, "--yes"},
		{"dlq", "discard", dlq, "--all", "--filter", "key=k1", "--yes"},
		{"dlq", "discard", dlq, "--all", "--limit", "2", "--yes"},
		{"replay", "--dlq", dlq, "--ids", ",", "--yes"},
		{"replay", "--dlq", dlq, "--ids", "", "--yes"},
		{"replay", "--dlq", dlq, "--ids", "1:0,,1:1", "--yes"},
		{"replay", "--dlq", dlq, "--filter", "", "--yes"},
		{"replay", "--dlq", dlq, "--filter", " ", "--yes"},
		{"dlq", "resend", dlq, "--id", "", "--yes"},
		{"dlq", "resend", dlq, "--id", " ", "--yes"},
	} {
		code, out, errOut := runTyped(t, ctx, env, "", false, args...)
		if code != ExitUsage || out != "" {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want 2 and nothing done", args, code, out, errOut)
		}
		if b := backlog(t, ctx, env, dlq, sub); b != 5 {
			t.Fatalf("%q: the DLQ's backlog is %d, want 5: a selection naming nothing took letters", args, b)
		}
	}
	if b := originBacklog(t, ctx, env); b != 0 {
		t.Errorf("the origin received %d messages", b)
	}
	if h := history(t); len(h) != 0 {
		t.Errorf("refused commands recorded %d history entries", len(h))
	}
}

// TestDiscardAll: --all takes every letter; past 100 letters a person types the DLQ's name,
// and "y" is not enough.
func TestDiscardAll(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	const dlq, sub = dlqNS + "orders-billing-DLQ", "billing-keep"
	fillDLQ(t, ctx, env, dlq, sub, bigAction+1, func(i int) *client.Message { return orderLetter(i, "declined") })

	code, _, errOut := runTyped(t, ctx, env, "y\n", true, "dlq", "discard", dlq, "--all")
	if code != ExitOK || !strings.Contains(errOut, "Type orders-billing-DLQ to confirm") || !strings.Contains(errOut, "nothing done") {
		t.Fatalf("y to a discard of %d letters: code %d, stderr %q", bigAction+1, code, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != bigAction+1 {
		t.Fatalf("backlog %d after a refused --all", b)
	}
	code, out, errOut := runTyped(t, ctx, env, "orders-billing-DLQ\n", true, "dlq", "discard", dlq, "--all")
	if code != ExitOK || !strings.Contains(out, "discarded 101 of 101") {
		t.Fatalf("--all confirmed: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 0 {
		t.Errorf("backlog %d after --all", b)
	}
	if h := history(t); len(h) != 1 || h[0].Selection != "everything" || h[0].Discarded != bigAction+1 {
		t.Errorf("history %+v", h)
	}
}

// TestReplayEveryLetterAsks: a replay without a selection asks a person at a terminal before
// it moves more than 100 letters, wanting the DLQ's name; --yes and a script do not ask.
func TestReplayEveryLetterAsks(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	const dlq, sub = dlqNS + "orders-billing-DLQ", "billing-keep"
	subscribeOrigin(t, ctx, env)
	fillDLQ(t, ctx, env, dlq, sub, bigAction+2, func(i int) *client.Message { return orderLetter(i, "declined") })

	code, out, errOut := runTyped(t, ctx, env, "y\n", true, "replay", "--dlq", dlq)
	if code != ExitOK || !strings.Contains(errOut, "replay every letter of orders-billing-DLQ via billing-keep, 102 letters") ||
		!strings.Contains(errOut, "nothing done") || out != "" {
		t.Fatalf("y to a replay of every letter: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != bigAction+2 {
		t.Fatalf("backlog %d after a refused replay", b)
	}
	// A dry run does not ask, nor does a selection.
	if code, _, errOut := runTyped(t, ctx, env, "", true, "replay", "--dlq", dlq, "--dry-run"); code != ExitOK || strings.Contains(errOut, "confirm") {
		t.Fatalf("dry run: code %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runTyped(t, ctx, env, "", true, "replay", "--dlq", dlq, "--limit", "1"); code != ExitOK || strings.Contains(errOut, "confirm") {
		t.Fatalf("--limit 1: code %d, stderr %q", code, errOut)
	}
	code, out, errOut = runTyped(t, ctx, env, "orders-billing-DLQ\n", true, "replay", "--dlq", dlq)
	if code != ExitOK || !strings.Contains(errOut, "Type orders-billing-DLQ to confirm") || !strings.Contains(out, "moved 101 of 101") {
		t.Fatalf("confirmed: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 0 {
		t.Errorf("backlog %d after the replay", b)
	}
}

// TestReplayEveryLetterScript: without a terminal a replay of every letter runs as it always
// has.
func TestReplayEveryLetterScript(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	const dlq, sub = dlqNS + "orders-billing-DLQ", "billing-keep"
	subscribeOrigin(t, ctx, env)
	fillDLQ(t, ctx, env, dlq, sub, bigAction+1, func(i int) *client.Message { return orderLetter(i, "declined") })
	if code, out, errOut := runTyped(t, ctx, env, "", false, "replay", "--dlq", dlq); code != ExitOK || backlog(t, ctx, env, dlq, sub) != 0 {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// subscribeOrigin creates the origin's subscription "app", so that what reaches orders is
// counted there.
func subscribeOrigin(t *testing.T, ctx context.Context, env *brokertest.Env) {
	t.Helper()
	c, err := env.Client(t).Subscribe(ctx, client.ConsumerOptions{Topic: dlqNS + "orders", SubscriptionName: "app"})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func originBacklog(t *testing.T, ctx context.Context, env *brokertest.Env) int64 {
	t.Helper()
	return backlog(t, ctx, env, dlqNS+"orders", "app")
}
