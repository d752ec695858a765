package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// replayBroker starts a broker with its admin API and fills orders-app-DLQ (subscription
// app-dlq) with n dead letters of orders; i%2==0 ones have region=eu.
func replayBroker(t *testing.T, n int) (serviceURL, adminURL string) {
	t.Helper()
	env := pulsartest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := client.New(client.Options{ServiceURL: env.ServiceURL(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: "orders-app-DLQ", InitialSubscriptionName: "app-dlq", DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		_, err := p.Send(ctx, &client.Message{Payload: fmt.Appendf(nil, "m%d", i), Key: fmt.Sprintf("k%d", i),
			Properties: map[string]string{client.PropertyRealTopic: "persistent://public/default/orders", "region": []string{"eu", "us"}[i%2]}})
		if err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	return env.ServiceURL(), env.AdminURL()
}

func TestReplayCommand(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	su, au := replayBroker(t, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	replayJSON := func(extra ...string) (int, []map[string]any, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		args := append([]string{"--service-url", su, "replay", "--admin-url", au, "--dlq", "orders-app-DLQ", "--json"}, extra...)
		code := Run(ctx, args, &out, &errOut)
		var lines []map[string]any
		for l := range strings.Lines(out.String()) {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("stdout line %q: %v", l, err)
			}
			lines = append(lines, m)
		}
		return code, lines, errOut.String()
	}
	ids := func(lines []map[string]any, action string) (out []string) {
		for _, l := range lines {
			if l["action"] == action {
				out = append(out, fmt.Sprint(l["id"], " ", l["destination"]))
			}
		}
		return out
	}

	code, dry, errOut := replayJSON("--dry-run", "--filter", "property.region=eu")
	sum := dry[len(dry)-1]
	if code != ExitOK || len(dry) != 11 || sum["summary"] != true || sum["would_move"] != 5.0 || sum["subscription"] != "app-dlq" {
		t.Fatalf("dry run: code %d, stderr %q, output %v", code, errOut, dry)
	}
	code, real, errOut := replayJSON("--filter", "property.region=eu")
	if code != ExitOK || len(real) != 11 || real[10]["moved"] != 5.0 {
		t.Fatalf("run: code %d, stderr %q, output %v", code, errOut, real)
	}
	if w, m := ids(dry, "would-move"), ids(real, "moved"); len(m) != 5 || !slices.Equal(w, m) {
		t.Errorf("dry run listed %v, the run moved %v", w, m)
	}
	if !strings.Contains(fmt.Sprint(real[1]), "not selected") || real[0]["destination"] != "persistent://public/default/orders" {
		t.Errorf("events %v", real[:2])
	}

	// The loop guard holds back what was replayed too often: the exit status says so.
	code, lines, _ := replayJSON("--max-replays", "-1", "--limit", "1")
	if code != ExitOK || lines[len(lines)-1]["moved"] != 1.0 {
		t.Fatalf("limit 1: code %d, %v", code, lines)
	}

	// Human output.
	var out, errBuf bytes.Buffer
	code = Run(ctx, []string{"replay", "--service-url", su, "--admin-url", au, "--dlq", "orders-app-DLQ"}, &out, &errBuf)
	if code != ExitOK || !strings.Contains(out.String(), "moved 4 of 4 considered") || !strings.Contains(out.String(), "at least once") {
		t.Errorf("code %d, stdout %q, stderr %q", code, out.String(), errBuf.String())
	}

	// Every real run is in the replay history the TUI lists; dry runs are not.
	hist, err := dlqops.History("", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: the human run, the limited one, then the filtered one.
	if len(hist) != 3 || hist[2].Selection != "property.region=eu" || hist[2].Moved != 5 || hist[2].By != "cli" ||
		hist[0].Selection != "all" || hist[0].Moved != 4 || hist[0].Result != "complete" {
		t.Errorf("history %+v", hist)
	}
}

func TestReplayCommandErrors(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	su, au := replayBroker(t, 1)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay"}, ExitUsage, "--dlq TOPIC is required"},
		{[]string{"replay", "--dlq", "x", "--filter", "payload~("}, ExitUsage, "--filter: column 9: bad regular expression"},
		{[]string{"replay", "--dlq", "x", "--ids", "1:x"}, ExitUsage, "flag -ids"},
		{[]string{"replay", "--dlq", "x", "--max-replays", "0"}, ExitUsage, "--max-replays"},
		{[]string{"replay", "--service-url", su, "--admin-url", au, "--dlq", "orders-app-DLQ", "--subscription", "other"}, ExitUsage, `no durable subscription "other"`},
		{[]string{"replay", "--service-url", su, "--admin-url", au, "--dlq", "missing-DLQ"}, ExitFailure, "missing-DLQ"},
	} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), tt.args, &out, &errOut)
		if code != tt.code || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%q: code %d, stderr %q; want %d and %q", tt.args, code, errOut.String(), tt.code, tt.want)
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestReplayDestinationAndUntil: a dry run prints the DLQ's last message; the run told it
// with --until moves what the dry run saw, every letter to --destination whatever its origin,
// and leaves what died since, counted as arrived.
func TestReplayDestinationAndUntil(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	su, au := replayBroker(t, 6)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	replayJSON := func(extra ...string) (int, []map[string]any, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		args := append([]string{"replay", "--service-url", su, "--admin-url", au, "--dlq", "orders-app-DLQ", "--json"}, extra...)
		code := Run(ctx, args, &out, &errOut)
		return code, jsonLines(t, out.String()), errOut.String()
	}
	code, dry, errOut := replayJSON("--dry-run")
	until, _ := dry[len(dry)-1]["until"].(string)
	if code != ExitOK || until == "" || dry[len(dry)-1]["would_move"] != 6.0 {
		t.Fatalf("dry run: code %d, stderr %q, %v", code, errOut, dry)
	}

	cl, err := client.New(client.Options{ServiceURL: su, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: "orders-app-DLQ", DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := p.Send(ctx, &client.Message{Payload: fmt.Appendf(nil, "late%d", i),
			Properties: map[string]string{client.PropertyRealTopic: "persistent://public/default/orders"}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	code, lines, errOut := replayJSON("--until", until, "--destination", "elsewhere")
	sum := lines[len(lines)-1]
	if code != ExitOK || sum["moved"] != 6.0 || sum["arrived"] != 2.0 || sum["until"] != until {
		t.Fatalf("run: code %d, stderr %q, %v", code, errOut, lines)
	}
	for _, l := range lines[:len(lines)-1] {
		if l["destination"] != "persistent://public/default/elsewhere" {
			t.Errorf("event %v", l)
		}
	}
	dest, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: "elsewhere", SubscriptionName: "check", InitialPosition: client.Earliest})
	if err != nil {
		t.Fatal(err)
	}
	defer dest.Close()
	for i := range 6 {
		m, err := dest.Receive(ctx)
		if err != nil || string(m.Payload) != fmt.Sprintf("m%d", i) {
			t.Fatalf("elsewhere: message %d: %v, %v", i, m, err)
		}
	}
	ad, err := admin.New(admin.Options{URL: au})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := ad.Stats(ctx, "orders-app-DLQ"); err != nil || st.Subscriptions["app-dlq"].MsgBacklog != 2 {
		t.Errorf("the DLQ: %+v, %v; want the 2 late letters left", st.Subscriptions, err)
	}
	hist := history(t)
	if len(hist) != 1 || hist[0].Action != dlqops.ActionReplay || hist[0].Moved != 6 || hist[0].Arrived != 2 || hist[0].Cluster != au {
		t.Errorf("history %+v", hist)
	}
}
