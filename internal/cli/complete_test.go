package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// values are the candidates' values.
func values(c completion) []string {
	var out []string
	for _, cand := range c.candidates {
		out = append(out, cand.value)
	}
	return out
}

// noCluster asks no cluster anything.
var noCluster = clusterNames{}

func TestCompleteCommandLine(t *testing.T) {
	t.Parallel()
	ctx := brokertest.Ctx(t, 10*time.Second)
	for _, tt := range []struct {
		words     []string
		cur       string
		want      []string // exactly these values, in this order
		directive directive
	}{
		{nil, "", []string{"broker", "demo", "replay", "dlq", "token", "completion", "version", "help"}, 0},
		{nil, "d", []string{"demo", "dlq"}, 0},
		{[]string{"--readonly"}, "re", []string{"replay"}, 0}, // a bool flag takes no value
		{[]string{"--service-url", "pulsar://h:6650"}, "to", []string{"token"}, 0},
		{[]string{"dlq"}, "", []string{"ls", "stats", "causes", "export", "discard", "purge", "resend", "subscribe"}, 0},
		{[]string{"dlq", "--readonly"}, "s", []string{"stats", "subscribe"}, 0},
		{[]string{"dlq", "export"}, "--fo", []string{"--format"}, 0},
		{[]string{"dlq", "export", "--format"}, "", []string{"jsonl", "csv"}, 0},
		{[]string{"dlq", "export"}, "--payload=b", []string{"--payload=base64"}, 0},
		{[]string{"dlq", "export"}, "--output=", nil, compFiles},
		{[]string{"dlq", "export", "--output"}, "", nil, compFiles},
		{[]string{"dlq", "stats", "--token-file"}, "", nil, compFiles},
		{[]string{"broker", "--data"}, "", nil, compDirs},
		{[]string{"broker", "--compat"}, "", []string{"upstream"}, 0},
		{[]string{"broker"}, "--in", []string{"--in-memory"}, 0},
		{[]string{"broker"}, "--servi", nil, 0}, // the broker takes no client flag
		{[]string{"token"}, "", []string{"secret-key", "create"}, 0},
		{[]string{"token", "create"}, "--s", []string{"--secret-key", "--subject"}, 0},
		{[]string{"token", "create", "--secret-key"}, "", nil, compFiles},
		{[]string{"completion"}, "", []string{"bash", "zsh", "fish", "powershell"}, 0},
		{[]string{"completion", "bash"}, "", nil, 0},
		{[]string{"help"}, "d", []string{"dlq-rule", "demo", "dlq"}, 0},
		{[]string{"--theme"}, "high", []string{"high-contrast"}, 0},
		{[]string{"replay", "--"}, "--", nil, 0},
		{[]string{"nonsense"}, "", nil, 0},
	} {
		c := complete(ctx, tt.words, tt.cur, noCluster)
		if got := values(c); !slices.Equal(got, tt.want) || c.directive != tt.directive {
			t.Errorf("%q, at %q: %q (directive %d), want %q (directive %d)", tt.words, tt.cur, got, c.directive, tt.want, tt.directive)
		}
	}
}

// TestCompleteFlagsAsHelp checks that completion offers every flag each command's --help
// lists: both come from the flag sets the commands parse with.
func TestCompleteFlagsAsHelp(t *testing.T) {
	t.Parallel()
	ctx := brokertest.Ctx(t, 10*time.Second)
	flagRE := regexp.MustCompile(`(?m)^  (--[a-z0-9-]+)`)
	check := func(words []string) {
		code, out, _ := run(t, append(slices.Clone(words), "--help")...)
		if code != ExitOK {
			t.Errorf("%q --help: exit %d", words, code)
			return
		}
		offered := values(complete(ctx, words, "--", noCluster))
		for _, m := range flagRE.FindAllStringSubmatch(out, -1) {
			if !slices.Contains(offered, m[1]) {
				t.Errorf("%q: --help lists %s, completion does not offer it (offers %q)", words, m[1], offered)
			}
		}
	}
	check(nil)
	for _, cmd := range commandTable() {
		if cmd.hidden || cmd.flags == nil && cmd.subs == nil {
			continue
		}
		check([]string{cmd.name})
		for _, sub := range cmd.subs {
			if sub.flags != nil {
				check([]string{cmd.name, sub.name})
			}
		}
	}
}

func TestCompleteContexts(t *testing.T) {
	writeConfig(t, `
[[context]]
name = "prod"
service_url = "pulsar://prod.example:6650"
admin_url = "http://prod.example:8080"

[[context]]
name = "local"
service_url = "pulsar://127.0.0.1:6650"
admin_url = "http://127.0.0.1:8080"
`)
	ctx := brokertest.Ctx(t, 10*time.Second)
	for _, tt := range []struct {
		words []string
		cur   string
		want  []string
	}{
		{[]string{"--context"}, "", []string{"local", "prod"}},
		{[]string{"dlq", "ls", "--context"}, "p", []string{"prod"}},
		{[]string{"replay"}, "--context=l", []string{"--context=local"}},
	} {
		if got := values(complete(ctx, tt.words, tt.cur, noCluster)); !slices.Equal(got, tt.want) {
			t.Errorf("%q, at %q: %q, want %q", tt.words, tt.cur, got, tt.want)
		}
	}
}

func TestCompleteFromCluster(t *testing.T) {
	t.Parallel()
	env := pulsartest.Start(t)
	ctx := brokertest.Ctx(t, 30*time.Second)
	for _, topic := range []string{"orders", "orders-billing-DLQ", "payments"} {
		if err := env.Admin().CreateTopic(ctx, "persistent://public/default/"+topic, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Admin().CreateTenant(ctx, "acme", adminapi.TenantInfo{AllowedClusters: []string{"standalone"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Admin().CreateNamespace(ctx, "acme/billing"); err != nil {
		t.Fatal(err)
	}
	if err := env.Admin().CreateTopic(ctx, "persistent://acme/billing/invoices", 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := env.Admin().CreateSubscription(ctx, "persistent://public/default/orders-billing-DLQ", "billing-replay", adminapi.Earliest); err != nil {
		t.Fatal(err)
	}
	cluster := clusterNames{timeout: 10 * time.Second}
	at := []string{"--admin-url", env.AdminURL()}
	for _, tt := range []struct {
		words []string
		cur   string
		want  []string
	}{
		{[]string{"dlq", "stats"}, "", []string{"orders-billing-DLQ"}},
		{[]string{"dlq", "--admin-url", env.AdminURL(), "purge"}, "", []string{"orders-billing-DLQ"}},
		{[]string{"replay", "--dlq"}, "o", []string{"orders-billing-DLQ"}},
		{[]string{"replay", "--to"}, "", []string{"acme/billing/invoices", "orders", "orders-billing-DLQ", "payments"}},
		{[]string{"replay", "--to"}, "acme/billing/", []string{"acme/billing/invoices"}},
		{[]string{"replay"}, "--destination=pay", []string{"--destination=payments"}},
		{[]string{"replay", "--to"}, "persistent://public/default/o",
			[]string{"persistent://public/default/orders", "persistent://public/default/orders-billing-DLQ"}},
		{[]string{"dlq", "ls"}, "", []string{"acme/billing", "public/default"}},
		{[]string{"dlq", "purge", "orders-billing-DLQ", "--subscription"}, "", []string{"billing-replay"}},
		{[]string{"replay", "--dlq", "orders-billing-DLQ", "--subscription"}, "b", []string{"billing-replay"}},
		{[]string{"dlq", "stats", "orders-billing-DLQ"}, "", nil}, // one DLQ per command
	} {
		words := append(slices.Clone(at), tt.words...)
		if got := values(complete(ctx, words, tt.cur, cluster)); !slices.Equal(got, tt.want) {
			t.Errorf("%q, at %q: %q, want %q", tt.words, tt.cur, got, tt.want)
		}
	}
	// No timeout: the cluster is not asked.
	if got := values(complete(ctx, append(at, "dlq", "stats"), "", clusterNames{})); got != nil {
		t.Errorf("with no time to ask: %q", got)
	}
}

// TestCompleteSilentCluster checks that a cluster that accepts connections and never answers
// costs a completion its timeout, and gives no candidates.
func TestCompleteSilentCluster(t *testing.T) {
	t.Parallel()
	silent := brokertest.SilentListener(t)
	ctx := brokertest.Ctx(t, 30*time.Second)
	done := make(chan completion, 1)
	go func() {
		done <- complete(ctx, []string{"--admin-url", "http://" + silent, "dlq", "stats"}, "",
			clusterNames{timeout: 200 * time.Millisecond})
	}()
	select {
	case c := <-done:
		if len(c.candidates) != 0 {
			t.Errorf("candidates from a cluster that never answered: %q", values(c))
		}
	case <-ctx.Done():
		t.Fatal("completion still waiting on a silent cluster 30 s after a 200 ms timeout")
	}
}

// TestCompleteEntryPoint checks __complete's protocol: the cursor's word behind "=", one
// candidate a line with its description after a tab, and the directive last.
func TestCompleteEntryPoint(t *testing.T) {
	t.Setenv(completionTimeoutVar, "0")
	code, out, _ := run(t, completeCommand, "dlq", "export", "--format", "=j")
	if code != ExitOK || out != "jsonl\n:0\n" {
		t.Errorf("__complete dlq export --format =j: exit %d, %q", code, out)
	}
	code, out, _ = run(t, completeCommand, "=ver")
	if code != ExitOK || out != "version\tprint the version\n:0\n" {
		t.Errorf("__complete =ver: exit %d, %q", code, out)
	}
	code, out, _ = run(t, completeCommand, "--token-file", "=")
	if code != ExitOK || out != ":2\n" {
		t.Errorf("__complete --token-file =: exit %d, %q", code, out)
	}
	if strings.Contains(usageText, completeCommand) {
		t.Errorf("the help lists the hidden %s", completeCommand)
	}
}
