package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestDLQLs lists, on one broker: a DLQ named by hand into which the official Go client's DLQ
// router moved letters (found by its newest message), a partitioned DLQ and a DLQ of another
// namespace (found by their names), a retry topic (only with --retry), and not a topic named
// x-DLQ that an official producer filled with plain messages.
func TestDLQLs(t *testing.T) {
	t.Parallel()
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	routeOfficial(t, env, dlqNS+"orders-dlq", []*pulsar.ProducerMessage{
		{Payload: []byte("a"), Properties: map[string]string{"reason": "bad card"}},
		{Payload: []byte("b")},
	})
	p, err := officialClient(t, env).CreateProducer(pulsar.ProducerOptions{Topic: dlqNS + "x-DLQ"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("plain"), Properties: map[string]string{"reason": "none"}}); err != nil {
		t.Fatal(err)
	}
	p.Close()

	audit := dlqNS + "orders-audit-DLQ"
	if err := env.Admin.CreateTopic(ctx, audit, 2, nil); err != nil {
		t.Fatal(err)
	}
	writeLetters(t, ctx, env, audit, "audit-keep", 4)
	if err := env.Admin.CreateTopic(ctx, dlqNS+"orders-billing-RETRY", 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := env.Admin.CreateNamespace(ctx, "public/other"); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"persistent://public/other/pay", "persistent://public/other/pay-ledger-DLQ"} {
		if err := env.Admin.CreateTopic(ctx, topic, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	keep := subscriptionBacklogs(t, ctx, env.Admin, dlqNS+"orders-dlq")

	code, out, errOut := runDLQCmd(t, ctx, env, "ls", "--json")
	if code != ExitOK {
		t.Fatalf("ls --json: code %d, stderr %q", code, errOut)
	}
	rows := lsLines(t, out)
	// The official router batched its two letters: one entry, two letters.
	four, two := int64(4), int64(2)
	want := []lsRow{
		{Topic: dlqNS + "orders-audit-DLQ", Kind: "dead letter", Partitions: 2, Subscription: "audit-keep", Letters: &four,
			BacklogEntries: 4, Backlog: 4, Origin: dlqNS + "orders", OriginSubscription: "audit", Subscriptions: []string{"audit-keep"}, Basis: "name"},
		{Topic: dlqNS + "orders-dlq", Kind: "dead letter", Subscription: "billing-keep", Letters: &two, BacklogEntries: keep["billing-keep"],
			Backlog: keep["billing-keep"], Origin: dlqNS + "orders", OriginSubscription: "billing", Subscriptions: []string{"billing-keep"}, Basis: "newest message"},
		{Topic: "persistent://public/other/pay-ledger-DLQ", Kind: "dead letter", Origin: "persistent://public/other/pay",
			OriginSubscription: "ledger", Subscriptions: []string{}, Basis: "name"},
	}
	if got := withoutRates(rows); !slices.EqualFunc(got, want, sameRow) {
		t.Errorf("ls --json:\n%s\nwant\n%+v", out, want)
	}

	// One namespace; the retry topic with --retry; a table.
	code, out, errOut = runDLQCmd(t, ctx, env, "ls", "public/default", "--retry", "--json")
	if names := topicsOf(lsLines(t, out)); code != ExitOK ||
		!slices.Equal(names, []string{dlqNS + "orders-audit-DLQ", dlqNS + "orders-billing-RETRY", dlqNS + "orders-dlq"}) {
		t.Errorf("ls public/default --retry: code %d, topics %q, stderr %q", code, names, errOut)
	}
	code, out, errOut = runDLQCmd(t, ctx, env, "ls", "public/default")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME ") ||
		!strings.HasPrefix(lines[1], "orders-audit-DLQ (2 partitions)  ") ||
		!regexp.MustCompile(`^orders-dlq +2 +billing-keep +\d+\.\d +orders +billing +billing-keep +newest message$`).MatchString(lines[2]) {
		t.Errorf("ls public/default: code %d, stderr %q, table:\n%s", code, errOut, out)
	}
	if code, out, _ := runDLQCmd(t, ctx, env, "ls"); code != ExitOK || !strings.Contains(out, "public/other/pay-ledger-DLQ") {
		t.Errorf("ls: code %d, the other namespace's DLQ under its short name missing:\n%s", code, out)
	}
	if code, out, errOut := runDLQCmd(t, ctx, env, "ls", "public/nope"); code != ExitFailure || out != "" ||
		!strings.Contains(errOut, "public/nope: not found") {
		t.Errorf("ls of a missing namespace: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	checkUntouched(t, ctx, env.Admin, dlqNS+"orders-dlq", keep)

	// A partitioned DLQ is scanned whole.
	code, out, errOut = runDLQCmd(t, ctx, env, "stats", "orders-audit-DLQ", "--json")
	if code != ExitOK || !strings.Contains(out, `"read":4,"selected":4,`) || !strings.Contains(out, `"complete":true`) {
		t.Errorf("stats of a partitioned DLQ: code %d, stderr %q, output %s", code, errOut, out)
	}
}

// writeLetters publishes n dead letters of orders to dlq with the letterbox client, creating
// the subscription sub first as a DLQ router does.
func writeLetters(t *testing.T, ctx context.Context, env *brokertest.Env, dlq, sub string, n int) {
	t.Helper()
	cl := env.Client(t)
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: sub, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range n {
		if _, err := p.Send(ctx, &client.Message{Key: fmt.Sprint(i), Payload: fmt.Appendf(nil, "letter %d", i),
			Properties: map[string]string{client.PropertyRealTopic: dlqNS + "orders"}}); err != nil {
			t.Fatal(err)
		}
	}
}

func lsLines(t *testing.T, out string) []lsRow {
	t.Helper()
	var rows []lsRow
	for l := range strings.Lines(out) {
		var r lsRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// withoutRates zeroes the rates, which depend on the broker's sampling.
func withoutRates(rows []lsRow) []lsRow {
	out := slices.Clone(rows)
	for i := range out {
		out[i].RateIn = 0
	}
	return out
}

func sameRow(a, b lsRow) bool {
	letters := func(r lsRow) string {
		if r.Letters == nil {
			return "null"
		}
		return fmt.Sprint(*r.Letters)
	}
	same := letters(a) == letters(b)
	a.Letters, b.Letters = nil, nil
	return same && fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b)
}

func topicsOf(rows []lsRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Topic
	}
	return out
}

// TestDLQLsMainSubscription: a DLQ with several durable subscriptions is counted for the one
// with the largest backlog, named (not the first by name), and a letterbox reader's durable
// subscription (the letterbox- prefix), however large its backlog, is neither counted nor listed.
func TestDLQLsMainSubscription(t *testing.T) {
	t.Parallel()
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	dlq := dlqNS + "orders-dlq"
	writeLetters(t, ctx, env, dlq, "billing-keep", 4)
	if err := env.Admin.CreateSubscription(ctx, dlq, "audit", adminapi.Latest); err != nil {
		t.Fatal(err)
	}
	if err := env.Admin.CreateSubscription(ctx, dlq, naming.OwnPrefix+"someone", adminapi.Earliest); err != nil {
		t.Fatal(err)
	}
	writeLetters(t, ctx, env, dlq, "billing-keep", 2)

	code, out, errOut := runDLQCmd(t, ctx, env, "ls", "--json")
	rows := lsLines(t, out)
	if code != ExitOK || len(rows) != 1 || rows[0].Subscription != "billing-keep" || rows[0].Letters == nil || *rows[0].Letters != 6 ||
		!slices.Equal(rows[0].Subscriptions, []string{"audit", "billing-keep"}) {
		t.Fatalf("ls --json: code %d, stderr %q, stdout %s", code, errOut, out)
	}
	code, out, _ = runDLQCmd(t, ctx, env, "stats", "orders-dlq", "--json", "--subscription", "audit")
	if lines := jsonLines(t, out); code != ExitOK || len(lines) != 1 || lines[0]["subscription"] != "audit" || lines[0]["letters"] != 2.0 {
		t.Errorf("stats --subscription audit: code %d, stdout %s", code, out)
	}
}
