package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// entryKey identifies a letter across clients: ledger, entry, index in its batch (0 when the
// entry is no batch).
type entryKey struct {
	ledger, entry int64
	batch         int32
}

// TestDLQDiscardOfficialLetters: on a DLQ the official Go client's DLQ router filled (its
// producer may batch), discarding three letters by id acknowledges those three and nothing
// else: an official consumer on the DLQ's subscription then receives every other letter and
// none of the three.
func TestDLQDiscardOfficialLetters(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 90*time.Second)
	dlq := dlqNS + "orders-dlq"
	var msgs []*pulsar.ProducerMessage
	for i := range 9 {
		msgs = append(msgs, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "p%d", i), Properties: map[string]string{"reason": "declined"}})
	}
	routeOfficial(t, env, dlq, msgs)
	res, err := dlqops.Scan(ctx, env.Client(t), dlqops.ScanOptions{Topic: dlq})
	if err != nil {
		t.Fatal(err)
	}
	all := map[entryKey]bool{}
	for _, p := range res.Matches {
		all[entryKey{p.Ledger, p.Entry, max(p.Batch, 0)}] = true
	}
	marked := []dlqops.Position{res.Matches[1], res.Matches[4], res.Matches[7]}
	var list []string
	for _, p := range marked {
		list = append(list, p.String())
	}
	before := backlog(t, ctx, env, dlq, "billing-keep")

	code, out, errOut := runAct(t, ctx, env, "", false, "discard", "orders-dlq", "--ids", strings.Join(list, ","), "--yes", "--json")
	lines := jsonLines(t, out)
	if code != ExitOK || len(lines) == 0 || lines[len(lines)-1]["discarded"] != 3.0 || lines[len(lines)-1]["ok"] != true {
		t.Fatalf("discard: code %d, stderr %q, output:\n%s", code, errOut, out)
	}
	var discarded []string
	for _, l := range lines[:len(lines)-1] {
		if l["action"] == string(dlqops.Discarded) {
			discarded = append(discarded, l["id"].(string))
		}
	}
	if !slices.Equal(discarded, list) {
		t.Errorf("discarded %q, want %q", discarded, list)
	}
	after := backlog(t, ctx, env, dlq, "billing-keep")
	if unbatched := marked[0].Batch < 0 && marked[1].Batch < 0 && marked[2].Batch < 0; (unbatched && after != before-3) || after > before {
		t.Errorf("backlog %d after discarding 3 of %d", after, before)
	}

	cons, err := officialClient(t, env).Subscribe(pulsar.ConsumerOptions{Topic: dlq, SubscriptionName: "billing-keep", Type: pulsar.Shared})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := map[entryKey]bool{}
	for len(got) < len(all)-3 {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("%d letters received of %d: %v", len(got), len(all)-3, err)
		}
		id := m.ID()
		got[entryKey{id.LedgerID(), id.EntryID(), max(id.BatchIdx(), 0)}] = true
	}
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if m, err := cons.Receive(qctx); err == nil {
		got[entryKey{m.ID().LedgerID(), m.ID().EntryID(), max(m.ID().BatchIdx(), 0)}] = true
	}
	for _, p := range marked {
		if got[entryKey{p.Ledger, p.Entry, max(p.Batch, 0)}] {
			t.Errorf("the discarded letter %s was delivered", p)
		}
	}
	for k := range all {
		if !got[k] && !slices.ContainsFunc(marked, func(p dlqops.Position) bool { return k == entryKey{p.Ledger, p.Entry, max(p.Batch, 0)} }) {
			t.Errorf("letter %v was not delivered", k)
		}
	}
}

// TestDLQDiscardSelections: a filter previews, is refused without --yes or a terminal, asks
// on a terminal, pins what the preview saw with --until (letters dying meanwhile are left),
// writes one JSON line per letter; ids take exactly their letters; the history records both.
func TestDLQDiscardSelections(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 90*time.Second)
	dlq, sub := dlqNS+"orders-billing-DLQ", "billing-keep"
	reason := func(i int) string { return []string{"fraud", "timeout", "timeout"}[i%3] }
	ids := fillDLQ(t, ctx, env, dlq, sub, 12, func(i int) *client.Message { return orderLetter(i, reason(i)) })
	discard := func(typed string, terminal bool, args ...string) (int, string, string) {
		return runAct(t, ctx, env, typed, terminal, append([]string{"discard", "orders-billing-DLQ"}, args...)...)
	}
	unchanged := func(what string) {
		t.Helper()
		if b := backlog(t, ctx, env, dlq, sub); b != 12 {
			t.Fatalf("%s: backlog %d, want 12", what, b)
		}
	}

	if code, _, errOut := discard("", false); code != ExitUsage || !strings.Contains(errOut, "or say --all") {
		t.Errorf("no selection: code %d, stderr %q", code, errOut)
	}
	code, _, errOut := discard("y\n", false, "--filter", "reason=fraud")
	if code != ExitUsage || !strings.Contains(errOut, "not a terminal") || !strings.Contains(errOut, "add --yes") {
		t.Errorf("no terminal, no --yes: code %d, stderr %q", code, errOut)
	}
	unchanged("refused")
	code, out, errOut := discard("n\n", true, "--filter", "reason=fraud")
	if code != ExitOK || !strings.Contains(errOut, "discard 4 letters of orders-billing-DLQ via billing-keep (reason=fraud)? [y/N]") ||
		!strings.Contains(errOut, "nothing done") || out != "" {
		t.Errorf("answered n: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	unchanged("declined")

	code, out, errOut = discard("", false, "--filter", "reason=fraud", "--dry-run", "--json")
	lines := jsonLines(t, out)
	sum := lines[len(lines)-1]
	if code != ExitOK || len(lines) != 5 || sum["would_discard"] != 4.0 || sum["dry_run"] != true ||
		lines[0]["id"] != positionOf(ids[0]) || lines[0]["key"] != "k0" || lines[0]["action"] != "would-discard" ||
		sum["until"] != positionOf(ids[11]) {
		t.Fatalf("dry run: code %d, stderr %q, output:\n%s", code, errOut, out)
	}
	code, out, _ = discard("", false, "--filter", "reason=fraud", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "would discard 4 letters of orders-billing-DLQ via billing-keep (reason=fraud), up to "+positionOf(ids[11])) ||
		!strings.Contains(out, "--until "+positionOf(ids[11])) || !strings.Contains(out, "would discard "+positionOf(ids[3])+"  key k3  reason fraud") {
		t.Errorf("dry run, text: code %d:\n%s", code, out)
	}
	unchanged("dry runs")

	// Two more frauds die after the preview: the run pinned to it leaves them.
	fillDLQ(t, ctx, env, dlq, sub, 2, func(i int) *client.Message { return orderLetter(100+i, "fraud") })
	code, out, errOut = discard("", false, "--filter", "reason=fraud", "--until", sum["until"].(string), "--yes", "--json")
	lines = jsonLines(t, out)
	last := lines[len(lines)-1]
	if code != ExitOK || len(lines) != 13 || last["discarded"] != 4.0 || last["skipped"] != 8.0 || last["arrived"] != 2.0 ||
		last["ok"] != true || last["complete"] != true || last["subscription"] != sub || last["dlq"] != dlq {
		t.Fatalf("discard: code %d, stderr %q, output:\n%s", code, errOut, out)
	}
	if lines[1]["action"] != "skipped" || !strings.HasPrefix(lines[1]["reason"].(string), "not selected") || lines[3]["action"] != "discarded" {
		t.Errorf("events %v", lines[:4])
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 14-4 {
		t.Errorf("backlog %d after discarding 4 of 14, want 10", b)
	}

	// Three by id, one of them gone already: exactly those go; text output.
	list := positionOf(ids[1]) + "," + positionOf(ids[2]) + "," + positionOf(ids[3]) + "," + positionOf(ids[4])
	code, out, errOut = discard("y\n", true, "--ids", list)
	if code != ExitOK || out != "discarded 3 of 3 selected from orders-billing-DLQ via billing-keep; 0 arrived since the preview and were left\n" ||
		!strings.Contains(errOut, "discard 3 letters of orders-billing-DLQ via billing-keep (4 listed ids)? [y/N]") ||
		!strings.Contains(errOut, positionOf(ids[3])+": no letter of billing-keep up to ") {
		t.Errorf("discard --ids: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 7 {
		t.Errorf("backlog %d after discarding 3 more, want 7", b)
	}
	checkHistory(t, env, []dlqops.HistoryEntry{
		{Action: dlqops.ActionDiscard, DLQ: dlq, Subscription: sub, Selection: "reason=fraud", Discarded: 4, Arrived: 2, Result: "complete"},
		{Action: dlqops.ActionDiscard, DLQ: dlq, Subscription: sub, Selection: "4 listed ids", Discarded: 3, Result: "complete"},
	})
}

// TestDLQDiscardMany: more than 100 letters want the DLQ's name typed; a "y" does nothing.
func TestDLQDiscardMany(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 90*time.Second)
	dlq, sub := dlqNS+"orders-billing-DLQ", "billing-keep"
	fillDLQ(t, ctx, env, dlq, sub, 120, func(i int) *client.Message { return orderLetter(i, "fraud") })
	code, out, errOut := runAct(t, ctx, env, "y\n", true, "discard", "orders-billing-DLQ", "--filter", "reason=fraud")
	if code != ExitOK || out != "" || !strings.Contains(errOut, "Type orders-billing-DLQ to confirm: ") || !strings.Contains(errOut, "nothing done") {
		t.Errorf("y for 120 letters: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 120 {
		t.Fatalf("backlog %d after a y, want 120", b)
	}
	code, out, errOut = runAct(t, ctx, env, "orders-billing-DLQ\n", true, "discard", "orders-billing-DLQ", "--filter", "reason=fraud")
	if code != ExitOK || !strings.HasPrefix(out, "discarded 120 of 120 selected") {
		t.Errorf("the name typed: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 0 {
		t.Errorf("backlog %d, want 0", b)
	}
}
