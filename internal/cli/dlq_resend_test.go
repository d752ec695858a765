package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestDLQResend: an edited letter reaches the origin's official consumer with the new
// payload, key and properties, REPLAYED_FROM and REPLAY_COUNT, without the DLQ's bookkeeping;
// the DLQ loses exactly that letter. Then one edited in $VISUAL.
func TestDLQResend(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("VISUAL", "sed -i s/order/ORDER/")
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	dlq, sub := dlqNS+"orders-billing-DLQ", "billing-keep"
	ids := fillDLQ(t, ctx, env, dlq, sub, 3, func(i int) *client.Message { return orderLetter(i, "timeout") })
	app, err := officialClient(t, env).Subscribe(pulsar.ConsumerOptions{Topic: dlqNS + "orders", SubscriptionName: "app"})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	resend := func(typed string, terminal bool, args ...string) (int, string, string) {
		return runAct(t, ctx, env, typed, terminal, append([]string{"resend", "orders-billing-DLQ"}, args...)...)
	}

	x := positionOf(ids[1])
	code, out, errOut := resend("", false, "--id", x, "--payload", `{"fixed":true}`, "--property", "note=hand", "--yes", "--json")
	lines := jsonLines(t, out)
	if code != ExitOK || len(lines) != 1 || lines[0]["id"] != x || lines[0]["action"] != "resent" ||
		lines[0]["destination"] != dlqNS+"orders" || !strings.Contains(errOut, "  payload     14 bytes (was 11 bytes): {\"fixed\":true}") {
		t.Fatalf("resend: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	m, err := app.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Properties()
	from := fmt.Sprintf("%d:%d:0", ids[1].Ledger, ids[1].Entry) // the engine writes ledger:entry:partition
	if string(m.Payload()) != `{"fixed":true}` || m.Key() != "k1" || p["note"] != "hand" || p["reason"] != "timeout" ||
		p[dlqops.PropertyReplayedFrom] != from || p[dlqops.PropertyReplayCount] != "1" ||
		p[client.PropertyRealTopic] != "" || p[client.PropertyOriginMessageID] != "" {
		t.Errorf("resent: key %q, payload %s, properties %v", m.Key(), m.Payload(), p)
	}
	left, err := env.Admin.Peek(ctx, dlq, sub, 10)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range left {
		kept = append(kept, fmt.Sprintf("%d:%d", l.ID.LedgerID, l.ID.EntryID))
	}
	if !slices.Equal(kept, []string{positionOf(ids[0]), positionOf(ids[2])}) {
		t.Errorf("the DLQ keeps %q, want all but %s", kept, x)
	}

	// Edited in $VISUAL on a terminal, the key changed, a property removed, asked and answered.
	y := positionOf(ids[2])
	code, out, errOut = resend("y\n", true, "--id", y, "--edit", "--key", "k2-fixed", "--unset-property", "reason")
	if code != ExitOK || out != "resent "+y+" to "+dlqNS+"orders; acknowledged in orders-billing-DLQ via billing-keep\n" ||
		!strings.Contains(errOut, "resend this letter? [y/N]") || !strings.Contains(errOut, `key         "k2-fixed" (was "k2")`) {
		t.Fatalf("resend --edit: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if m, err = app.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if string(m.Payload()) != `{"ORDER":2}` || m.Key() != "k2-fixed" || m.Properties()["reason"] != "" {
		t.Errorf("edited: key %q, payload %s, properties %v", m.Key(), m.Payload(), m.Properties())
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 1 {
		t.Errorf("backlog %d after resending 2 of 3", b)
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--yes"}, ExitUsage, "which letter?"},
		{[]string{"--id", x, "--payload", "a", "--payload-file", "f"}, ExitUsage, "exclude each other"},
		{[]string{"--id", x, "--property", "a=1", "--unset-property", "a"}, ExitUsage, "contradict"},
		{[]string{"--id", x, "--property", "=1"}, ExitUsage, "want k=v"},
		{[]string{"--id", x, "--edit", "--yes"}, ExitUsage, "--edit needs"},
		{[]string{"--id", x, "--yes"}, ExitNothing, "nothing selected: " + x + " was acknowledged on billing-keep already"},
		{[]string{"--id", "999:0", "--yes"}, ExitNothing, "nothing selected: orders-billing-DLQ holds no letter 999:0"},
	} {
		if code, _, errOut := resend("", false, tt.args...); code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: code %d, stderr %q; want %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
	checkHistory(t, env, []dlqops.HistoryEntry{
		{Action: dlqops.ActionResend, DLQ: dlq, Subscription: sub, Selection: "id " + x + " edited", Moved: 1, Result: "complete"},
		{Action: dlqops.ActionResend, DLQ: dlq, Subscription: sub, Selection: "id " + y + " edited", Moved: 1, Result: "complete"},
		{Action: dlqops.ActionResend, DLQ: dlq, Subscription: sub, Selection: "id " + x, Result: dlqops.ResultNothingSelected},
		{Action: dlqops.ActionResend, DLQ: dlq, Subscription: sub, Selection: "id 999:0", Result: dlqops.ResultNothingSelected},
	})
}

// TestDLQResendKilled: a resend killed after the origin stored the new message but before the
// command heard so (the broker holds back its receipt) leaves the letter in the DLQ — a
// duplicate at worst, never a loss.
func TestDLQResendKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in a child process")
	}
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	dlq, sub, origin := dlqNS+"orders-billing-DLQ", "billing-keep", dlqNS+"orders"
	ids := fillDLQ(t, ctx, env, dlq, sub, 3, func(i int) *client.Message { return orderLetter(i, "timeout") })
	app, err := env.Client(t).Subscribe(ctx, client.ConsumerOptions{Topic: origin, SubscriptionName: "app"})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()

	// The receipts of whatever publishes to the origin from now on never leave the broker.
	var producer atomic.Int64
	producer.Store(-1)
	env.Broker.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		switch {
		case dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_PRODUCER && cmd.GetProducer().GetTopic() == origin:
			producer.Store(int64(cmd.GetProducer().GetProducerId()))
		case dir == broker.Outbound && cmd.GetType() == pb.BaseCommand_SEND_RECEIPT &&
			int64(cmd.GetSendReceipt().GetProducerId()) == producer.Load():
			return broker.Verdict{Drop: true}
		}
		return broker.Verdict{}
	})
	child := childCommand(ctx, t, "dlq", "resend", "orders-billing-DLQ", "--id", positionOf(ids[1]), "--payload", "fixed", "--yes",
		"--service-url", env.ServiceURL, "--admin-url", env.AdminURL)
	child.Env = append(child.Env, "XDG_STATE_HOME="+t.TempDir())
	logs, err := os.Create(filepath.Join(t.TempDir(), "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	child.Stdout, child.Stderr = logs, logs
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	m, err := app.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	env.Broker.Intercept(nil)
	if string(m.Payload) != "fixed" {
		t.Errorf("the origin got %q", m.Payload)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 3 {
		out, _ := os.ReadFile(logs.Name())
		t.Errorf("backlog %d after the kill, want all 3 letters still there; the command said:\n%s", b, out)
	}
}
