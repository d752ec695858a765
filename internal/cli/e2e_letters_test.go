package cli_test

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestTUIDiscardRecountEndToEnd drives the real binary in tmux on a DLQ the official Go
// client's dead-letter router filled in batches: the topics screen and the dead letters count
// 3,000 letters; the counts' fraud bucket, discarded from the TUI, is gone from the header and
// the search at once, and esc shows the counts again without it; then, while they are on
// screen, a discard from a shell takes the letters of one key, and the counts follow at the
// next refresh without a key.
func TestTUIDiscardRecountEndToEnd(t *testing.T) {
	bin, dir := buildForTmux(t)
	env := brokertest.Start(t)
	const n = 3000
	dlq := "persistent://public/default/orders-billing-DLQ"
	env.RouteDeadLetters(t, brokertest.Route{Origin: "persistent://public/default/orders", Subscription: "billing", DLQ: dlq,
		InitialSubscription: "billing-keep", N: n, Message: func(i int) *pulsar.ProducerMessage {
			reason := "timeout"
			if i%10 == 0 {
				reason = "fraud"
			}
			return &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, `{"order":%d}`, i), Key: fmt.Sprintf("k%d", i%7),
				Properties: map[string]string{"reason": reason}}
		}})
	st, err := env.Admin.Stats(context.Background(), dlq)
	if err != nil || st.Subscriptions["billing-keep"].MsgBacklog*10 >= n {
		t.Fatalf("the router did not batch: %+v, %v", st.Subscriptions["billing-keep"], err)
	}
	tm := letterboxInTmux(t, "recount", bin, dir, nil, "--service-url", env.ServiceURL, "--admin-url", env.AdminURL)
	tm.waitFor("the DLQ's letters on the topics screen", 20*time.Second, func(s string) bool {
		return regexp.MustCompile(`orders-billing-DLQ +DLQ .* 3,000 `).MatchString(s)
	})

	tm.keys(":")
	tm.literal("dlq " + dlq)
	tm.keys("Enter")
	tm.waitFor("the header", 20*time.Second, func(s string) bool { return strings.Contains(s, "via billing-keep · 3,000 letters") })
	tm.keys("c")
	tm.waitFor("the counts", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "counts of 3,000 letters") && regexp.MustCompile(`\n  fraud +300 `).MatchString(s)
	})
	// The fraud bucket (the second of BY REASON, by count): its letters, discarded (more than
	// 100: the DLQ's name typed).
	tm.keys("Down")
	tm.keys("Enter")
	tm.waitFor("the fraud letters", 20*time.Second, func(s string) bool {
		return strings.Contains(s, `/reason=fraud · 300 of 3,000 letters`)
	})
	tm.keys("X")
	tm.waitFor("the discard's preview", 30*time.Second, func(s string) bool { return regexp.MustCompile(`to discard +300\b`).MatchString(s) })
	tm.keys("Enter")
	tm.waitFor("the question", 10*time.Second, func(s string) bool { return strings.Contains(s, "type orders-billing-DLQ") })
	tm.literal("orders-billing-DLQ")
	tm.keys("Enter")
	tm.waitFor("the discard done", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Discard complete") && regexp.MustCompile(`discarded +300\b`).MatchString(s)
	})
	// The search made from the counts has no letter left: esc shows the counts again, read
	// again. A discard from a shell then; the next refresh, no key.
	tm.keys("Escape")
	tm.waitFor("the counts of 2,700", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "via billing-keep · 2,700 letters") && strings.Contains(s, "counts of 2,700 letters") &&
			!regexp.MustCompile(`\n  (reason )?fraud `).MatchString(s)
	})
	out, err := exec.Command(bin, "dlq", "discard", "orders-billing-DLQ", "--filter", "key=k3", "--yes", "--json",
		"--service-url", env.ServiceURL, "--admin-url", env.AdminURL).CombinedOutput()
	if err != nil {
		t.Fatalf("discard from a shell: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`"discarded":([0-9]+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("discard from a shell:\n%s", out)
	}
	left := 2700 - atoi(m[1])
	tm.waitFor("the counts after the shell's discard", 20*time.Second, func(s string) bool {
		return strings.Contains(s, fmt.Sprintf("counts of %s letters", grouped(left))) &&
			strings.Contains(s, fmt.Sprintf("via billing-keep · %s letters", grouped(left))) && !strings.Contains(s, "\n  k3 ")
	})
}

// grouped writes n as the screens do: 2,357.
func grouped(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d,%03d", n/1000, n%1000)
}
