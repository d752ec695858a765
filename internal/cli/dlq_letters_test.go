package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Letters, not entries: every count the dlq commands give, confirm or record is of letters —
// each message of a batch one — for one subscription.

// routeBatched has the official Go client's dead-letter router fill orders-billing-DLQ (its
// producer batches) with n letters whose reason is reason(i), and checks that they came in
// fewer than a tenth as many entries.
func routeBatched(t *testing.T, env *brokertest.Env, n int, reason func(i int) string) (dlq, sub string) {
	t.Helper()
	dlq, sub = dlqNS+"orders-billing-DLQ", "billing-keep"
	env.RouteDeadLetters(t, brokertest.Route{Origin: dlqNS + "orders", Subscription: "billing", DLQ: dlq,
		InitialSubscription: sub, N: n, Message: func(i int) *pulsar.ProducerMessage {
			return &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, `{"order":%d}`, i), Key: fmt.Sprintf("k%d", i),
				Properties: map[string]string{"reason": reason(i)}}
		}})
	if entries := backlog(t, brokertest.Ctx(t, 10*time.Second), env, dlq, sub); entries*10 >= int64(n) {
		t.Fatalf("%d letters in %d entries: the router did not batch", n, entries)
	}
	return dlq, sub
}

// statsLetters runs dlq stats --json (with extra flags) and returns its letters and
// acknowledged counts.
func statsLetters(t *testing.T, ctx context.Context, env *brokertest.Env, extra ...string) (letters, acked float64) {
	t.Helper()
	code, out, errOut := runDLQCmd(t, ctx, env, append([]string{"stats", "orders-billing-DLQ", "--json"}, extra...)...)
	lines := jsonLines(t, out)
	if code != ExitOK || len(lines) != 1 || lines[0]["subscription"] != "billing-keep" || lines[0]["complete"] != true {
		t.Fatalf("stats %q: code %d, stderr %q, stdout %s", extra, code, errOut, out)
	}
	return lines[0]["letters"].(float64), lines[0]["acknowledged"].(float64)
}

// A DLQ of 12,000 letters the official router wrote in batches: ls, stats and the purge
// prompt count letters; after discarding 1,000 by filter and replaying 5,000 by filter, stats
// counts the 6,000 left, --include-acknowledged the 12,000 with the 6,000 marked, and purge
// --count 10 takes exactly ten letters.
func TestDLQLettersOfABatchedDLQ(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 3*time.Minute)
	const n = 12_000
	reason := func(i int) string {
		switch {
		case i%12 == 0:
			return "fraud" // 1,000
		case i%12 <= 5:
			return "timeout" // 5,000
		}
		return "declined"
	}
	dlq, sub := routeBatched(t, env, n, reason)

	code, out, errOut := runDLQCmd(t, ctx, env, "ls", "--json")
	rows := lsLines(t, out)
	if code != ExitOK || len(rows) != 1 || rows[0].Subscription != sub || rows[0].Letters == nil || *rows[0].Letters != n {
		t.Fatalf("ls: code %d, stderr %q, stdout %s", code, errOut, out)
	}
	if letters, _ := statsLetters(t, ctx, env); letters != n {
		t.Errorf("stats: %v letters, want %d", letters, n)
	}
	if code, _, errOut := runAct(t, ctx, env, "", false, "purge", "orders-billing-DLQ"); code != ExitUsage ||
		!strings.Contains(errOut, "acknowledge all 12000 letters on billing-keep") {
		t.Errorf("purge's question: code %d, stderr %q", code, errOut)
	}

	code, out, errOut = runAct(t, ctx, env, "", false, "discard", "orders-billing-DLQ", "--filter", "reason=fraud", "--yes", "--json")
	if lines := jsonLines(t, out); code != ExitOK || lines[len(lines)-1]["discarded"] != 1000.0 || lines[len(lines)-1]["ok"] != true {
		t.Fatalf("discard: code %d, stderr %q, summary %v", code, errOut, lines[len(lines)-1])
	}
	var rout, rerr bytes.Buffer
	code = Run(ctx, []string{"replay", "--service-url", env.ServiceURL, "--admin-url", env.AdminURL, "--dlq", "orders-billing-DLQ",
		"--filter", "property.reason=timeout", "--json"}, &rout, &rerr)
	if lines := jsonLines(t, rout.String()); code != ExitOK || lines[len(lines)-1]["moved"] != 5000.0 {
		t.Fatalf("replay: code %d, stderr %q, summary %v", code, rerr.String(), lines[len(lines)-1])
	}
	if letters, _ := statsLetters(t, ctx, env); letters != n-6000 {
		t.Errorf("stats after the discard and the replay: %v letters, want %d", letters, n-6000)
	}
	if letters, acked := statsLetters(t, ctx, env, "--include-acknowledged"); letters != n || acked != 6000 {
		t.Errorf("stats --include-acknowledged: %v letters, %v acknowledged; want %d, 6000", letters, acked, n)
	}
	code, out, _ = runDLQCmd(t, ctx, env, "stats", "orders-billing-DLQ", "--json", "--filter", "reason=fraud")
	if lines := jsonLines(t, out); code != ExitOK || lines[0]["letters"] != 0.0 {
		t.Errorf("the discarded letters are still counted: %s", out)
	}

	code, out, errOut = runAct(t, ctx, env, "", false, "purge", "orders-billing-DLQ", "--count", "10", "--yes", "--json")
	lines := jsonLines(t, out)
	if code != ExitOK || len(lines) != 1 || lines[0]["skipped"] != 10.0 || lines[0]["letters_before"] != 6000.0 || lines[0]["letters_after"] != 5990.0 {
		t.Fatalf("purge --count 10: code %d, stderr %q, stdout %s", code, errOut, out)
	}
	if b, err := env.Admin.Stats(ctx, dlq); err != nil || *b.Subscriptions[sub].MsgBacklogMessages != 5990 {
		t.Errorf("the broker counts %v letters after skipping 10 of 6000 (%v)", b.Subscriptions[sub].MsgBacklogMessages, err)
	}
	code, out, errOut = runAct(t, ctx, env, "", false, "purge", "orders-billing-DLQ", "--yes", "--json")
	if lines := jsonLines(t, out); code != ExitOK || lines[0]["letters_before"] != 5990.0 || lines[0]["letters_after"] != 0.0 {
		t.Fatalf("purge: code %d, stderr %q, stdout %s", code, errOut, out)
	}
}

// Against a broker that counts entries only (upstream, as --compat upstream answers): ls says
// "≈ N entries" and gives no letters; stats reads the letters and counts them exactly; the
// purge question says entries.
func TestDLQLettersUpstream(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t, func(c *broker.Config) { c.CompatUpstream = true })
	ctx := brokertest.Ctx(t, 3*time.Minute)
	const n = 2_000
	dlq, sub := routeBatched(t, env, n, func(int) string { return "timeout" })
	entries := backlog(t, ctx, env, dlq, sub)

	code, out, errOut := runDLQCmd(t, ctx, env, "ls", "--json")
	rows := lsLines(t, out)
	if code != ExitOK || len(rows) != 1 || rows[0].Letters != nil || rows[0].BacklogEntries != entries {
		t.Fatalf("ls --json: code %d, stderr %q, stdout %s", code, errOut, out)
	}
	code, out, _ = runDLQCmd(t, ctx, env, "ls")
	if want := fmt.Sprintf("≈ %d entries", entries); code != ExitOK || !strings.Contains(out, want) {
		t.Errorf("ls: %q missing:\n%s", want, out)
	}
	if letters, _ := statsLetters(t, ctx, env); letters != n {
		t.Errorf("stats: %v letters, want %d", letters, n)
	}
	if code, _, errOut := runAct(t, ctx, env, "", false, "purge", "orders-billing-DLQ"); code != ExitUsage ||
		!strings.Contains(errOut, fmt.Sprintf("acknowledge all ≈ %d entries (the broker counts no letters", entries)) {
		t.Errorf("purge's question: code %d, stderr %q", code, errOut)
	}
}

// A broker that acknowledges whole entries only (acknowledgmentAtBatchIndexLevelEnabled=false):
// discarding three letters of a batch, or skipping into the middle of one, is refused before
// anything is acknowledged, and the letters are still counted.
func TestDLQPartOfABatchWithoutBatchIndexAcks(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t, func(c *broker.Config) { c.AcknowledgmentAtBatchIndexLevelEnabled = false })
	ctx := brokertest.Ctx(t, 3*time.Minute)
	const n = 500
	dlq, sub := routeBatched(t, env, n, func(int) string { return "timeout" })
	cl := env.Client(t)
	r, err := cl.CreateReader(ctx, client.ReaderOptions{Topic: dlq})
	if err != nil {
		t.Fatal(err)
	}
	byEntry := map[[2]int64][]client.MessageID{}
	var largest [2]int64
	for range n {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		k := [2]int64{m.ID.Ledger, m.ID.Entry}
		byEntry[k] = append(byEntry[k], m.ID)
		if len(byEntry[k]) > len(byEntry[largest]) {
			largest = k
		}
	}
	r.Close()
	batch := byEntry[largest]
	if len(batch) < 10 {
		t.Fatalf("the largest batch holds %d letters", len(batch))
	}
	before := backlog(t, ctx, env, dlq, sub)
	three := positionOf(batch[2]) + "," + positionOf(batch[5]) + "," + positionOf(batch[7])
	code, out, errOut := runAct(t, ctx, env, "", false, "discard", "orders-billing-DLQ", "--ids", three, "--yes")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "refused, nothing acknowledged: the selection takes 3 of the") ||
		!strings.Contains(errOut, "acknowledgmentAtBatchIndexLevelEnabled=false") {
		t.Errorf("discard 3 of a batch: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if letters, _ := statsLetters(t, ctx, env); letters != n || backlog(t, ctx, env, dlq, sub) != before {
		t.Errorf("after the refusal: %v letters, %d entries; want %d, %d", letters, backlog(t, ctx, env, dlq, sub), n, before)
	}
	first := byEntry[[2]int64{batch[0].Ledger, 0}]
	if len(first) > 1 {
		code, _, errOut = runAct(t, ctx, env, "", false, "purge", "orders-billing-DLQ", "--count", "1", "--yes")
		if want := fmt.Sprintf("--count 0 stops before it, --count %d takes it whole", len(first)); code != ExitUsage || !strings.Contains(errOut, want) {
			t.Errorf("purge --count 1 into a batch of %d: code %d, stderr %q", len(first), code, errOut)
		}
	}
	if letters, _ := statsLetters(t, ctx, env); letters != n {
		t.Errorf("after the refusals: %v letters, want %d", letters, n)
	}
}

// A discard whose --limit is reached before the preview's last letter reports the rest as left
// out, not as arrived; letters that die after the preview arrived.
func TestDLQDiscardLeftOutAndArrived(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	dlq, sub := dlqNS+"orders-billing-DLQ", "billing-keep"
	fillDLQ(t, ctx, env, dlq, sub, 300, func(i int) *client.Message { return orderLetter(i, "timeout") })
	code, out, errOut := runAct(t, ctx, env, "", false, "discard", "orders-billing-DLQ", "--limit", "3", "--yes", "--json")
	lines := jsonLines(t, out)
	if sum := lines[len(lines)-1]; code != ExitOK || sum["discarded"] != 3.0 || sum["arrived"] != 0.0 || sum["left_out"] != 297.0 {
		t.Fatalf("--limit 3 of 300: code %d, stderr %q, summary %v", code, errOut, sum)
	}
	code, out, errOut = runAct(t, ctx, env, "", false, "discard", "orders-billing-DLQ", "--limit", "3", "--dry-run", "--json")
	if code != ExitOK {
		t.Fatalf("--limit 3 --dry-run: code %d, stderr %q", code, errOut)
	}
	lines = jsonLines(t, out)
	until := lines[len(lines)-1]["until"].(string)
	fillDLQ(t, ctx, env, dlq, sub, 5, func(i int) *client.Message { return orderLetter(1000+i, "timeout") })
	code, out, errOut = runAct(t, ctx, env, "", false, "discard", "orders-billing-DLQ", "--limit", "3", "--until", until, "--yes")
	if code != ExitOK || out != "discarded 3 of 3 selected from orders-billing-DLQ via billing-keep; 294 left out up to "+until+
		" (the selection was done before them); 5 arrived since the preview and were left\n" {
		t.Errorf("with 5 after the preview: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	got := history(t)
	if len(got) != 2 || got[0].LeftOut != 297 || got[0].Arrived != 0 || got[1].LeftOut != 294 || got[1].Arrived != 5 {
		t.Errorf("history: %+v", got)
	}
}

// TestDLQLimitSeesNotEveryName: a preview that stops at --limit has not read every letter, so
// a property only later letters carry is not said to be carried by none.
func TestDLQLimitSeesNotEveryName(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	const dlq, sub = dlqNS + "orders-billing-DLQ", "billing-keep"
	subscribeOrigin(t, ctx, env)
	fillDLQ(t, ctx, env, dlq, sub, 6, func(i int) *client.Message {
		m := orderLetter(i, "declined")
		m.Properties["region"] = "eu"
		if i == 5 {
			m.Properties["late"] = "1"
		}
		return m
	})
	code, out, errOut := runTyped(t, ctx, env, "", false, "dlq", "discard", dlq, "--filter", "property.region=eu or property.late=1",
		"--limit", "1", "--dry-run")
	if code != ExitOK || strings.Contains(errOut, "warning") {
		t.Errorf("--limit 1: code %d, stdout %q, stderr %q; want 0 and no warning", code, out, errOut)
	}
	// Read to the end, the name no letter carries is still said.
	code, out, errOut = runTyped(t, ctx, env, "", false, "dlq", "discard", dlq, "--filter", "property.region=eu or property.lat=1",
		"--dry-run")
	if code != ExitOK || !strings.Contains(errOut, "warning: no letter has property lat;") {
		t.Errorf("whole read: code %d, stdout %q, stderr %q; want 0 and the warning", code, out, errOut)
	}
}
