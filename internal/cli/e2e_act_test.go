package cli_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTUIActEndToEnd drives the real binary in tmux through the actions on the demo's DLQ:
// discard a marked letter, resend one edited in $VISUAL (a non-interactive editor that turns
// EUR into USD), replay a searched selection; the history lists the three.
func TestTUIActEndToEnd(t *testing.T) {
	tm, _ := demoInTmux(t, "act", "VISUAL=sed -i s/EUR/USD/")
	tm.waitFor("the topics screen", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "orders-billing-DLQ")
	})
	tm.keys(":")
	tm.literal("dlq public/demo/orders-billing-DLQ")
	tm.keys("Enter")
	backlog := regexp.MustCompile(`via billing-audit · ([0-9]+) letters`)
	tm.waitFor("dead letters in the DLQ", 45*time.Second, func(s string) bool {
		m := backlog.FindStringSubmatch(s)
		return m != nil && atoi(m[1]) >= 3 && strings.Contains(s, "letters 1–")
	})

	// Discard the first letter: marked, previewed, confirmed.
	tm.keys("Space")
	tm.waitFor("the mark", 5*time.Second, func(s string) bool { return strings.Contains(s, "1 marked") })
	tm.keys("X")
	tm.waitFor("the discard's preview", 15*time.Second, func(s string) bool {
		return regexp.MustCompile(`to discard +1\b`).MatchString(s)
	})
	tm.keys("Enter")
	tm.waitFor("the question", 5*time.Second, func(s string) bool { return strings.Contains(s, "Discard 1 dead letter of") })
	tm.keys("y")
	tm.waitFor("the discard done", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "Discard complete") && regexp.MustCompile(`discarded +1\b`).MatchString(s)
	})
	tm.keys("Escape")
	tm.waitFor("the history with the discard", 10*time.Second, func(s string) bool {
		return regexp.MustCompile(`discard +complete +discarded 1`).MatchString(s)
	})

	// Resend a letter, its payload edited in $VISUAL.
	tm.keys("E")
	tm.waitFor("the resend form", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "Resend ") && strings.Contains(s, `"currency":"EUR"`)
	})
	tm.keys("C-e")
	tm.waitFor("the edited payload", 10*time.Second, func(s string) bool { return strings.Contains(s, `"currency":"USD"`) })
	tm.keys("C-s")
	tm.waitFor("the question", 5*time.Second, func(s string) bool { return strings.Contains(s, "Send this to public/demo/orders") })
	tm.keys("y")
	tm.waitFor("the resend done", 20*time.Second, func(s string) bool { return strings.Contains(s, "✓ sent to public/demo/orders") })
	tm.keys("Escape")
	tm.waitFor("the history with the resend", 10*time.Second, func(s string) bool {
		return regexp.MustCompile(`resend +complete +moved 1`).MatchString(s)
	})

	// Replay what a search selects: the letters of one reason.
	tm.keys("/")
	tm.literal("reason=fraud check rejected")
	tm.keys("Enter")
	tm.waitFor("the search", 20*time.Second, func(s string) bool {
		return regexp.MustCompile(`/reason=fraud check rejected · [0-9]+ of [0-9]+ letters?`).MatchString(s)
	})
	tm.keys("R")
	tm.waitFor("the replay's preview", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "selection: reason=") && strings.Contains(s, "enter runs it")
	})
	tm.keys("Enter")
	tm.waitFor("the question", 5*time.Second, func(s string) bool { return strings.Contains(s, "y yes · n no") })
	tm.keys("y")
	tm.waitFor("the replay done", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Replay complete") || strings.Contains(s, "Replay incomplete")
	})
	tm.keys("Escape")
	tm.waitFor("the history with the replay", 10*time.Second, func(s string) bool {
		return regexp.MustCompile(`replay +complete +moved [0-9]+`).MatchString(s)
	})
}
