package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/pulsartest"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestSameActionsFromCLIAndTUI: a replay, a discard and a resend done with the command line on
// one DLQ, and with the TUI's data layer (tui/data.Admin, which its screens call, and the
// history lines its screens write) on a twin DLQ of the same broker, move the same letters to
// the same places, leave the same letters in the DLQs and record the same history: actions,
// subscriptions, counts, results and cluster. The namespace deduplicates: both replays are
// exactly once.
func TestSameActionsFromCLIAndTUI(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := pulsartest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if err := env.Admin().SetDeduplication(ctx, "public/default", true); err != nil {
		t.Fatal(err)
	}
	const sub = "app-dlq"
	origin := func(side string) string { return "persistent://public/default/orders-" + side }
	dlq := func(side string) string { return origin(side) + "-app-DLQ" }
	cl, err := client.New(client.Options{ServiceURL: env.ServiceURL(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, side := range []string{"cli", "tui"} {
		p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq(side), InitialSubscriptionName: sub,
			TopicPurpose: client.TopicPurposeDeadLetter, DisableBatching: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			if _, err := p.Send(ctx, &client.Message{Key: fmt.Sprintf("k%d", i), Payload: fmt.Appendf(nil, "p%d", i),
				Properties: map[string]string{client.PropertyRealTopic: origin(side), "reason": "boom"}}); err != nil {
				t.Fatal(err)
			}
		}
		p.Close()
	}
	letter := func(side, key string) pulsartest.Message {
		t.Helper()
		msgs, err := env.Messages(ctx, dlq(side))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Key == key {
				return m
			}
		}
		t.Fatalf("%s holds no letter %s", dlq(side), key)
		return pulsartest.Message{}
	}
	idOf := func(m pulsartest.Message) string { return fmt.Sprintf("%d:%d", m.Ledger, m.Entry) }

	// The command line.
	cli := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		args = append(args, "--service-url", env.ServiceURL(), "--admin-url", env.AdminURL())
		if code := Run(ctx, args, &out, &errOut); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out.String(), errOut.String())
		}
		return out.String()
	}
	if out := cli("replay", "--dlq", "orders-cli-app-DLQ", "--filter", "key=k0"); !strings.Contains(out, "exactly once") {
		t.Errorf("the command line's replay is not exactly once:\n%s", out)
	}
	cli("dlq", "discard", "orders-cli-app-DLQ", "--filter", "key=k1", "--yes")
	cli("dlq", "resend", "orders-cli-app-DLQ", "--id", idOf(letter("cli", "k2")), "--key", "k2-fixed", "--yes")

	// The TUI's data layer, as its screens use it: a preview, then the run it pinned, then the
	// history line.
	a, err := data.NewAdmin(data.AdminOptions{AdminURL: env.AdminURL(), ServiceURL: env.ServiceURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	replayOnce := func(req data.ReplayRequest) (dlqops.Summary, error) {
		events := make(chan data.ReplayEvent, 16)
		go func() {
			for range events {
			}
		}()
		return a.Replay(ctx, req, events)
	}
	run := func(req data.ReplayRequest) dlqops.Summary {
		t.Helper()
		preview := req
		preview.DryRun = true
		psum, err := replayOnce(preview)
		if err != nil {
			t.Fatalf("preview of %+v: %v", req, err)
		}
		req.Until = &psum.Until
		sum, err := replayOnce(req)
		if err != nil || !sum.OK() {
			t.Fatalf("%+v: %+v, %v", req, sum, err)
		}
		return sum
	}
	record := func(e data.HistoryEntry) {
		t.Helper()
		e.When, e.By = time.Now().UTC(), "tui"
		if err := a.RecordReplay(e); err != nil {
			t.Fatal(err)
		}
	}
	req := data.ReplayRequest{DLQ: dlq("tui"), Subscription: sub, Filters: []string{"key=k0"}}
	sum := run(req)
	if !sum.ExactlyOnce {
		t.Errorf("the TUI's replay is not exactly once: %+v", sum)
	}
	record(dlqops.Entry(dlqops.ActionReplay, req.DLQ, sub, req.Describe(), sum, dlqops.Result(sum, nil)))
	req = data.ReplayRequest{DLQ: dlq("tui"), Subscription: sub, Filters: []string{"key=k1"}, Discard: true}
	sum = run(req)
	record(dlqops.Entry(dlqops.ActionDiscard, req.DLQ, sub, req.Describe(), sum, dlqops.Result(sum, nil)))
	m := letter("tui", "k2")
	edit := dlqops.StartEdit(m.Payload, "k2-fixed", m.Properties)
	req = dlqops.Resend(idOf(m), origin("tui"), &edit)
	req.DLQ, req.Subscription = dlq("tui"), sub
	sum = run(req)
	record(dlqops.ResendEntry(dlq("tui"), sub, "id "+idOf(m)+" edited", sum, "complete"))

	// What moved: the same letters to each origin, the edited one edited; what stays: the same
	// letters in each DLQ.
	moved := func(side string) []string {
		t.Helper()
		msgs, err := env.WaitForMessages(ctx, origin(side), 2)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range msgs {
			out = append(out, m.Key+"="+string(m.Payload))
		}
		slices.Sort(out)
		return out
	}
	if c, u := moved("cli"), moved("tui"); !slices.Equal(c, u) || !slices.Equal(c, []string{"k0=p0", "k2-fixed=p2"}) {
		t.Errorf("moved: the command line %v, the TUI %v", c, u)
	}
	left := func(side string) int64 {
		t.Helper()
		st, err := env.Admin().Stats(ctx, dlq(side))
		if err != nil {
			t.Fatal(err)
		}
		return st.Subscriptions[sub].MsgBacklog
	}
	if c, u := left("cli"), left("tui"); c != 3 || u != 3 {
		t.Errorf("left in the DLQ: the command line %d, the TUI %d (want 3 each)", c, u)
	}

	// What was recorded: the same lines, but for the DLQ, who wrote them, when and the
	// selection's words.
	cluster := dlqops.ClusterKey("", env.AdminURL())
	history := func(side string) []dlqops.HistoryEntry {
		t.Helper()
		h, err := dlqops.History(cluster, dlq(side), 10)
		if err != nil {
			t.Fatal(err)
		}
		for i := range h {
			h[i].When, h[i].Elapsed, h[i].Run, h[i].By, h[i].Selection, h[i].DLQ = time.Time{}, 0, "", "", "", ""
		}
		return h
	}
	c, u := history("cli"), history("tui")
	if len(c) != 3 || !slices.Equal(c, u) {
		t.Errorf("history:\nthe command line %+v\nthe TUI          %+v", c, u)
	}
	for i, want := range []string{dlqops.ActionResend, dlqops.ActionDiscard, dlqops.ActionReplay} {
		if i < len(c) && (c[i].Action != want || c[i].Result != "complete" || c[i].Cluster != cluster) {
			t.Errorf("history line %d: %+v, want a complete %s of %s", i, c[i], want, cluster)
		}
	}
}
