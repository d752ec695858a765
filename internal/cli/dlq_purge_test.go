package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestDLQPurge: --count skips that many after a "y"; a whole purge wants the DLQ's name typed
// however few the letters (a wrong name changes nothing); the history has both.
func TestDLQPurge(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	dlq, sub := dlqNS+"orders-billing-DLQ", "billing-keep"
	fillDLQ(t, ctx, env, dlq, sub, 5, func(i int) *client.Message { return orderLetter(i, "timeout") })
	purge := func(typed string, terminal bool, args ...string) (int, string, string) {
		return runAct(t, ctx, env, typed, terminal, append([]string{"purge", "orders-billing-DLQ"}, args...)...)
	}

	if code, _, errOut := purge("", false); code != ExitUsage || !strings.Contains(errOut, "add --yes") {
		t.Errorf("no terminal: code %d, stderr %q", code, errOut)
	}
	code, out, errOut := purge("y\n", true, "--count", "2")
	if code != ExitOK || out != "skipped the first 2 letters of orders-billing-DLQ via billing-keep: letters 5 → 3\n" ||
		!strings.Contains(errOut, "skip the first 2 of the 5 letters of orders-billing-DLQ on billing-keep? [y/N]") {
		t.Errorf("--count 2: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 3 {
		t.Fatalf("backlog %d after skipping 2 of 5", b)
	}
	code, out, errOut = purge("y\n", true)
	if code != ExitOK || out != "" || !strings.Contains(errOut, "Type orders-billing-DLQ to confirm: ") || !strings.Contains(errOut, "nothing done") {
		t.Errorf("y to a whole purge: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, _ = purge("orders-DLQ\n", true)
	if b := backlog(t, ctx, env, dlq, sub); code != ExitOK || b != 3 {
		t.Fatalf("a wrong name: code %d, backlog %d; want 0 and 3", code, b)
	}
	code, out, errOut = purge("orders-billing-DLQ\n", true, "--json")
	lines := jsonLines(t, out)
	if code != ExitOK || len(lines) != 1 || lines[0]["action"] != "purge" || lines[0]["backlog_before"] != 3.0 ||
		lines[0]["backlog_after"] != 0.0 || lines[0]["ok"] != true {
		t.Errorf("purge: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 0 {
		t.Errorf("backlog %d after the purge", b)
	}
	if code, out, _ := purge("", false, "--yes"); code != ExitNothing || !strings.Contains(out, "nothing to purge") {
		t.Errorf("an empty backlog: code %d, stdout %q", code, out)
	}
	checkHistory(t, env, []dlqops.HistoryEntry{
		{Action: dlqops.ActionSkip, DLQ: dlq, Subscription: sub, Selection: "first 2", Discarded: 2, Result: "complete"},
		{Action: dlqops.ActionPurge, DLQ: dlq, Subscription: sub, Selection: "everything", Discarded: 3, Result: "complete"},
		{Action: dlqops.ActionPurge, DLQ: dlq, Subscription: sub, Selection: "everything", Result: dlqops.ResultNothingSelected},
	})
}
