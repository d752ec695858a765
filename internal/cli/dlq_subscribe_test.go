package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestDLQSubscribe: the subscription is created at the earliest retained letter under the
// name the DLQ's origin subscription suggests (from the name, or from the newest letter of a
// DLQ named by hand); an existing one is an error; retention flags alone on a DLQ that has a
// durable subscription set only the namespace's retention.
func TestDLQSubscribe(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	dlq := dlqNS + "orders-billing-DLQ"
	if err := env.Admin.CreateTopic(ctx, dlqNS+"orders", 0, nil); err != nil {
		t.Fatal(err)
	}
	fillDLQ(t, ctx, env, dlq, "billing-keep", 4, func(i int) *client.Message { return orderLetter(i, "timeout") })
	subscribe := func(typed string, terminal bool, args ...string) (int, string, string) {
		return runAct(t, ctx, env, typed, terminal, append([]string{"subscribe"}, args...)...)
	}

	if code, _, errOut := subscribe("", false, "orders-billing-DLQ"); code != ExitUsage || !strings.Contains(errOut, "add --yes") {
		t.Errorf("no terminal: code %d, stderr %q", code, errOut)
	}
	code, out, errOut := subscribe("y\n", true, "orders-billing-DLQ", "--json")
	lines := jsonLines(t, out)
	if code != ExitOK || len(lines) != 1 || lines[0]["subscription"] != "billing-replay" || lines[0]["created"] != true ||
		lines[0]["backlog"] != 4.0 || !strings.Contains(errOut, "create the durable subscription billing-replay on orders-billing-DLQ "+
		"at its earliest retained letter (it has billing-keep already)? [y/N]") {
		t.Fatalf("subscribe: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	st, err := env.Admin.Stats(ctx, dlq)
	if s, ok := st.Subscriptions["billing-replay"]; err != nil || !ok || !s.IsDurable || s.MsgBacklog != 4 {
		t.Errorf("billing-replay: %+v, %v", s, err)
	}
	if code, _, errOut := subscribe("", false, "orders-billing-DLQ", "--yes"); code != ExitFailure ||
		!strings.Contains(errOut, "has a subscription billing-replay already (4 letters): nothing done") {
		t.Errorf("again: code %d, stderr %q", code, errOut)
	}

	code, out, errOut = subscribe("", false, "orders-billing-DLQ", "--retention-minutes", "120", "--retention-size-mb", "-1", "--yes")
	if code != ExitOK || out != "set the retention of public/default: 120 minutes, no size limit\n" {
		t.Errorf("retention: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	r, err := env.Admin.Retention(ctx, "public/default")
	if err != nil || r == nil || r.RetentionTimeInMinutes != 120 || r.RetentionSizeInMB != -1 {
		t.Errorf("retention %+v, %v", r, err)
	}
	code, _, errOut = subscribe("", false, "orders-billing-DLQ", "--retention-size-mb", "500", "--yes")
	if r, _ := env.Admin.Retention(ctx, "public/default"); code != ExitOK || r == nil || r.RetentionTimeInMinutes != 120 || r.RetentionSizeInMB != 500 {
		t.Errorf("size alone: code %d, stderr %q, retention %+v (the time limit kept)", code, errOut, r)
	}

	// A DLQ named by hand: its newest letter says which subscription its letters died on.
	routeOfficial(t, env, dlqNS+"orders-dlq", []*pulsar.ProducerMessage{{Payload: []byte("x")}})
	if code, out, errOut := subscribe("", false, "orders-dlq", "--yes"); code != ExitOK ||
		out != "created subscription billing-replay on orders-dlq at its earliest retained letter: 1 letter\n" {
		t.Errorf("orders-dlq: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if err := env.Admin.CreateTopic(ctx, dlqNS+"misc", 0, nil); err != nil {
		t.Fatal(err)
	}
	// An ordinary topic is refused, unless --not-a-dlq says it is meant.
	if code, out, errOut := subscribe("", false, "misc", "--yes"); code != ExitUsage || out != "" || !strings.Contains(errOut, "add --not-a-dlq") {
		t.Errorf("misc: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, errOut := subscribe("", false, "misc", "--not-a-dlq", "--yes"); code != ExitOK || !strings.Contains(out, "created subscription dlq-replay on misc") {
		t.Errorf("misc --not-a-dlq: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	checkHistory(t, env, []dlqops.HistoryEntry{
		{Action: dlqops.ActionSubscribe, DLQ: dlq, Subscription: "billing-replay", Selection: "earliest", Result: "complete"},
		{Action: dlqops.ActionRetention, DLQ: dlq, Selection: "120 minutes, no size limit on public/default", Result: "complete"},
		{Action: dlqops.ActionRetention, DLQ: dlq, Selection: "120 minutes, 500 MB on public/default", Result: "complete"},
		{Action: dlqops.ActionSubscribe, DLQ: dlqNS + "orders-dlq", Subscription: "billing-replay", Selection: "earliest", Result: "complete"},
		{Action: dlqops.ActionSubscribe, DLQ: dlqNS + "misc", Subscription: "dlq-replay", Selection: "earliest", Result: "complete"},
	})
}
