package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Helpers of the dlq actions' tests, and the tests of the confirmation.

// runAct runs "letterbox dlq ARGS..." against env with typed as stdin, a terminal when
// terminal is set (a person answering), a pipe otherwise.
func runAct(t *testing.T, ctx context.Context, env *brokertest.Env, typed string, terminal bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(append([]string{"dlq"}, args...), "--service-url", env.ServiceURL, "--admin-url", env.AdminURL)
	code = RunProcess(ctx, Process{Stdin: strings.NewReader(typed), StdinTerminal: terminal}, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// fillDLQ publishes n letters made by letter to dlq with the letterbox client, one per entry,
// creating the subscription sub first as a DLQ router does. It returns their ids.
func fillDLQ(t *testing.T, ctx context.Context, env *brokertest.Env, dlq, sub string, n int, letter func(i int) *client.Message) []client.MessageID {
	t.Helper()
	p, err := env.Client(t).CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: sub, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var ids []client.MessageID
	for i := range n {
		id, err := p.Send(ctx, letter(i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// orderLetter is a dead letter of orders with a reason.
func orderLetter(i int, reason string) *client.Message {
	return &client.Message{Key: fmt.Sprintf("k%d", i), Payload: fmt.Appendf(nil, `{"order":%d}`, i),
		Properties: map[string]string{client.PropertyRealTopic: dlqNS + "orders", client.PropertyOriginMessageID: "1:2:3",
			"reason": reason}}
}

// backlog is the backlog of sub on topic.
func backlog(t *testing.T, ctx context.Context, env *brokertest.Env, topic, sub string) int64 {
	t.Helper()
	st, err := env.Admin.Stats(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := st.Subscriptions[sub]
	if !ok {
		t.Fatalf("%s has no subscription %s", topic, sub)
	}
	return s.MsgBacklog
}

// jsonLines decodes every line of out.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for l := range strings.Lines(out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// history is the replay history, oldest first.
func history(t *testing.T) []dlqops.HistoryEntry {
	t.Helper()
	h, err := dlqops.History("", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(h)-1; i < j; i, j = i+1, j-1 {
		h[i], h[j] = h[j], h[i]
	}
	return h
}

// checkHistory checks the history holds want's actions in order, on env's cluster, by this
// user from the command line, with want's selection, counts and result.
func checkHistory(t *testing.T, env *brokertest.Env, want []dlqops.HistoryEntry) {
	t.Helper()
	got := history(t)
	if len(got) != len(want) {
		t.Fatalf("history has %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Action != w.Action || g.Cluster != env.AdminURL || g.User != dlqops.Actor() || g.By != "cli" ||
			g.DLQ != w.DLQ || g.Subscription != w.Subscription || g.Selection != w.Selection ||
			g.Moved != w.Moved || g.Discarded != w.Discarded || g.Failed != w.Failed || g.Arrived != w.Arrived ||
			g.Result != w.Result {
			t.Errorf("history entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// childCommand is the test binary run as "letterbox ARGS..." (TestHelperLetterbox), so a
// test can kill a command at a moment of its choosing without building the binary.
func childCommand(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestHelperLetterbox$", "--"}, args...)...)
	c.Env = append(os.Environ(), "LETTERBOX_TEST_CHILD=1")
	return c
}

// TestHelperLetterbox is not a test: run by childCommand, it is letterbox.
func TestHelperLetterbox(t *testing.T) {
	if os.Getenv("LETTERBOX_TEST_CHILD") != "1" {
		t.Skip("runs as a child of another test")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(RunProcess(context.Background(), Process{}, args, os.Stdout, os.Stderr))
}

func TestConfirm(t *testing.T) {
	t.Parallel()
	q := question{cmd: "letterbox dlq x", text: "discard 3 letters of d?"}
	named := question{cmd: "letterbox dlq x", text: "discard 300 letters of d?", name: "orders-DLQ"}
	for _, tt := range []struct {
		name     string
		q        question
		yes      bool
		in       stdin
		ok       bool
		code     int
		inStderr string
	}{
		{"--yes", q, true, stdin{}, true, ExitOK, ""},
		{"no terminal", q, false, stdin{r: strings.NewReader("y\n")}, false, ExitUsage, "stdin is not a terminal"},
		{"y", q, false, stdin{r: strings.NewReader("y\n"), terminal: true}, true, ExitOK, "discard 3 letters of d? [y/N] "},
		{"yes", q, false, stdin{r: strings.NewReader(" YES \n"), terminal: true}, true, ExitOK, ""},
		{"n", q, false, stdin{r: strings.NewReader("n\n"), terminal: true}, false, ExitOK, "not confirmed; nothing done"},
		{"end of input", q, false, stdin{r: strings.NewReader(""), terminal: true}, false, ExitOK, "nothing done"},
		{"name wanted, y given", named, false, stdin{r: strings.NewReader("y\n"), terminal: true}, false, ExitOK, "Type orders-DLQ to confirm: "},
		{"name typed", named, false, stdin{r: strings.NewReader("orders-DLQ\n"), terminal: true}, true, ExitOK, ""},
	} {
		var errOut bytes.Buffer
		ok, code := tt.in.confirm(tt.q, tt.yes, &errOut)
		if ok != tt.ok || code != tt.code || !strings.Contains(errOut.String(), tt.inStderr) {
			t.Errorf("%s: ok %v, code %d, stderr %q; want %v, %d and %q", tt.name, ok, code, errOut.String(), tt.ok, tt.code, tt.inStderr)
		}
	}
	// The answer is read up to its newline and no further: what follows is someone else's.
	r := strings.NewReader("y\nrest")
	if ok, _ := (stdin{r: r, terminal: true}).confirm(q, false, &bytes.Buffer{}); !ok || r.Len() != 4 {
		t.Errorf("ok %v, %d bytes left, want 4", ok, r.Len())
	}
}
