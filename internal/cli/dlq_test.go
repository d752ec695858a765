package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Helpers of the dlq commands' tests, and the tests of the dispatcher.

const dlqNS = "persistent://public/default/"

// runDLQCmd runs "letterbox dlq ARGS..." against env, the client flags last (after the
// subcommand's positional arguments, as a user may type them).
func runDLQCmd(t *testing.T, ctx context.Context, env *brokertest.Env, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(append([]string{"dlq"}, args...), "--service-url", env.ServiceURL, "--admin-url", env.AdminURL)
	code = Run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// officialClient is a client of env made with the official Go client.
func officialClient(t *testing.T, env *brokertest.Env) pulsar.Client {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: env.ServiceURL, OperationTimeout: 10 * time.Second,
		Logger: plog.DefaultNopLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// routeOfficial has the official Go client publish msgs to orders and its DLQ router move each
// to dlq: a consumer on subscription billing with MaxDeliveries 1 nacks every message once,
// and the router publishes the redelivery to dlq, whose subscription billing-keep it creates
// (PIP-124). It returns once dlq holds them all.
func routeOfficial(t *testing.T, env *brokertest.Env, dlq string, msgs []*pulsar.ProducerMessage) {
	t.Helper()
	ctx := brokertest.Ctx(t, 30*time.Second)
	c := officialClient(t, env)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: dlqNS + "orders", SubscriptionName: "billing", Type: pulsar.Shared,
		NackRedeliveryDelay: 20 * time.Millisecond,
		DLQ:                 &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq, InitialSubscriptionName: "billing-keep"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: dlqNS + "orders", DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	for range msgs {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cons.Nack(m) // redelivered once more, then the DLQ router takes it
	}
	brokertest.WaitFor(t, 20*time.Second, "the dead letters in "+dlq, func() bool {
		st, err := env.Admin.Stats(ctx, dlq)
		return err == nil && st.MsgInCounter == int64(len(msgs))
	})
}

// subscriptionBacklogs are a topic's subscriptions and their backlogs, to check that a command
// neither consumed nor subscribed.
func subscriptionBacklogs(t *testing.T, ctx context.Context, ad *admin.Client, topic string) map[string]int64 {
	t.Helper()
	st, err := ad.Stats(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for name, s := range st.Subscriptions {
		out[name] = s.MsgBacklog
	}
	return out
}

func checkUntouched(t *testing.T, ctx context.Context, ad *admin.Client, topic string, before map[string]int64) {
	t.Helper()
	if after := subscriptionBacklogs(t, ctx, ad, topic); !maps.Equal(after, before) {
		t.Errorf("%s: subscriptions and backlogs %v after the command, %v before", topic, after, before)
	}
}

func TestDLQHelp(t *testing.T) {
	t.Parallel()
	subcommands := []string{"ls [NAMESPACE]", "stats DLQ", "export DLQ", "discard DLQ", "purge DLQ", "resend DLQ --id L:E",
		"subscribe DLQ", "--service-url URL", "--readonly"}
	code, out, errOut := run(t, "dlq", "--help")
	for _, want := range subcommands {
		if code != ExitOK || errOut != "" || !strings.Contains(out, want) {
			t.Errorf("dlq --help: code %d, stderr %q, output lacks %q:\n%s", code, errOut, want, out)
		}
	}
	// Without a subcommand the same list goes to stderr, as for any usage error.
	code, out, errOut = run(t, "dlq")
	for _, want := range subcommands {
		if code != ExitUsage || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("dlq: code %d, stdout %q, stderr lacks %q:\n%s", code, out, want, errOut)
		}
	}
	for sub, wants := range map[string][]string{
		"ls":     {"letterbox dlq ls", "--json", "--retry", "--token-file FILE"},
		"stats":  {"letterbox dlq stats", "--filter EXPR", "--json"},
		"export": {"letterbox dlq export", "--filter EXPR", "--format jsonl|csv", "--output FILE", "--payload text|base64|auto", "(default auto)"},
		"discard": {"letterbox dlq discard", "--subscription S", "--filter EXPR", "--ids IDS", "--limit N", "--until ID",
			"--dry-run", "--yes", "--json", "--readonly"},
		"purge":     {"letterbox dlq purge", "--subscription S", "--count N", "--yes", "--json"},
		"resend":    {"letterbox dlq resend", "--id L:E", "--to TOPIC", "--payload TEXT", "--payload-file FILE", "--key K", "--property k=v", "--unset-property k", "--edit", "--yes"},
		"subscribe": {"letterbox dlq subscribe", "--subscription NAME", "--retention-minutes N", "--retention-size-mb N", "--yes"},
	} {
		code, out, _ := run(t, "dlq", sub, "--help")
		for _, want := range wants {
			if code != ExitOK || !strings.Contains(out, want) {
				t.Errorf("dlq %s --help: code %d, output lacks %q:\n%s", sub, code, want, out)
			}
		}
	}
	if _, out, _ := run(t, "--help"); !strings.Contains(out, "letterbox dlq ls|stats|causes|export") ||
		!strings.Contains(out, "letterbox dlq discard|purge|resend|subscribe") || !strings.Contains(out, "--readonly") {
		t.Errorf("letterbox --help does not list dlq:\n%s", out)
	}
	if _, out, _ := run(t, "replay", "--help"); !strings.Contains(out, "--destination TOPIC") || !strings.Contains(out, "--until ID") {
		t.Errorf("letterbox replay --help:\n%s", out)
	}
}

func TestDLQUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"dlq", "nope"}, `unknown subcommand "nope" (subcommands: ls, stats, causes, export, discard, purge, resend, subscribe)`},
		{[]string{"dlq", "--nope", "ls"}, "flag provided but not defined: -nope"},
		{[]string{"dlq", "ls", "--nope"}, "flag provided but not defined: -nope"},
		{[]string{"dlq", "ls", "public"}, `namespace "public": want tenant/namespace`},
		{[]string{"dlq", "ls", "public/default", "x"}, `unexpected argument "x"`},
		{[]string{"dlq", "ls", "--token", "a", "--token-file", "b"}, "exclude each other"},
		{[]string{"dlq", "--service-url", "http://h:1", "stats", "x"}, "--service-url"},
		{[]string{"dlq", "stats"}, "which DLQ?"},
		{[]string{"dlq", "stats", "a", "b"}, `unexpected argument "b"`},
		{[]string{"dlq", "stats", "a/b/c/d"}, "invalid topic name"},
		{[]string{"dlq", "export", "x", "--format", "xml"}, `--format "xml": want jsonl or csv`},
		{[]string{"dlq", "export", "x", "--payload", "hex"}, `--payload "hex"`},
		{[]string{"dlq", "export", "--filter", "kye=x", "x"}, `column 1: unknown field "kye"`},
		{[]string{"dlq", "discard", "x"}, "or say --all"},
		{[]string{"dlq", "discard", "x", "--filter", "payload~("}, "column 9: bad regular expression"},
		{[]string{"dlq", "discard", "x", "--limit", "-1"}, "--limit must not be negative"},
		{[]string{"dlq", "discard", "x", "--limit", "1", "--until", "1"}, "--until"},
		{[]string{"dlq", "discard", "x", "--ids", "1:x"}, "flag -ids"},
		{[]string{"dlq", "purge", "x", "--count", "-1"}, "--count must not be negative"},
		{[]string{"dlq", "purge"}, "which DLQ?"},
		{[]string{"dlq", "resend", "x"}, "which letter?"},
		{[]string{"dlq", "resend", "x", "--id", "1"}, "--id"},
		{[]string{"dlq", "subscribe", "x", "--retention-minutes", "-2"}, "want a number, or -1 for no limit"},
		{[]string{"replay", "--dlq", "x", "--until", "x"}, "--until"},
		{[]string{"replay", "--dlq", "x", "--to", "a", "--destination", "b"}, "--to and --destination exclude each other"},
	} {
		code, out, errOut := run(t, tt.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

func TestDLQParseInterspersed(t *testing.T) {
	t.Parallel()
	fs := newFlagSet("t")
	var filters filterList
	fs.Var(&filters, "filter", "")
	json := fs.Bool("json", false, "")
	pos, err := parseInterspersed(fs, []string{"a", "--filter", "x", "b", "--json", "--filter", "y", "--", "--c"})
	if err != nil || !slices.Equal(pos, []string{"a", "b", "--c"}) || !slices.Equal(filters, filterList{"x", "y"}) || !*json {
		t.Errorf("positional %q, filters %q, json %v, err %v", pos, filters, *json, err)
	}
}

func TestDLQScanFailed(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	gone := fmt.Errorf("scan x: %w: %w", dlqops.ErrTopicGone, errors.New("topic not found"))
	if code := scanFailed(context.Background(), &errOut, "letterbox dlq stats", dlqNS+"x", gone); code != ExitFailure ||
		errOut.String() != "letterbox dlq stats: persistent://public/default/x: the DLQ was deleted during the scan\n" {
		t.Errorf("code %d, stderr %q", code, errOut.String())
	}
}

func TestDLQScanBar(t *testing.T) {
	t.Parallel()
	var w bytes.Buffer
	bar := scanBar{w: &w}
	bar.draw(dlqops.ScanProgress{Read: 1200, Entries: 300, TotalEntries: 1000, Fraction: 0.3, Rate: 2400, Left: 1400 * time.Millisecond})
	bar.draw(dlqops.ScanProgress{Read: 4000, Entries: 1000, TotalEntries: 1000, Fraction: 1, Rate: 2500, Done: true})
	want := "\r\033[K[#########.....................]  30% 300/1000 entries, 1200 letters, 2400 letters/s, 1s left" +
		"\r\033[K[##############################] 100% 1000/1000 entries, 4000 letters, 2500 letters/s\n"
	if w.String() != want {
		t.Errorf("drawn %q\nwant  %q", w.String(), want)
	}
}
