package cli_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTUITriageEndToEnd drives the real binary in tmux through a triage of the demo's DLQ:
// scan it and read the counts, drill into a reason, search with a bad expression (its column
// is shown and the screen stays), then search by key over the whole DLQ, and read a letter
// from its own position.
func TestTUITriageEndToEnd(t *testing.T) {
	tm, _ := demoInTmux(t, "triage")
	tm.waitFor("the topics screen", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "orders-billing-DLQ")
	})
	tm.keys(":")
	tm.literal("dlq public/demo/orders-billing-DLQ")
	tm.keys("Enter")
	tm.waitFor("dead letters in the DLQ", 45*time.Second, func(s string) bool {
		return regexp.MustCompile(`via billing-audit · [1-9][0-9,]* letters`).MatchString(s)
	})

	// S: the counts of the whole DLQ, by reason first.
	tm.keys("c")
	screen := tm.waitFor("the counts", 20*time.Second, func(s string) bool {
		return regexp.MustCompile(`counts of [0-9,]+ letters?`).MatchString(s) && strings.Contains(s, "BY REASON") &&
			strings.Contains(s, "BY ORIGIN TOPIC") && strings.Contains(s, "public/demo/orders")
	})
	reason := regexp.MustCompile(`BY REASON\n  (\S.*?) +([0-9]+) +[0-9.]+%`).FindStringSubmatch(screen)
	if reason == nil {
		t.Fatalf("no reason counted:\n%s", screen)
	}

	// enter on the first reason: the letters that died of it, over the whole DLQ.
	tm.keys("Enter")
	screen = tm.waitFor("the reason's letters", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "/reason=") && regexp.MustCompile(`[0-9]+ of [0-9]+ letters? \(scan of`).MatchString(s)
	})
	if !strings.Contains(screen, reason[1]) {
		t.Errorf("the drill-down does not show %q:\n%s", reason[1], screen)
	}
	key := regexp.MustCompile(`\n +[0-9]+[smhd] (customer-[0-9]+) `).FindStringSubmatch(screen)
	if key == nil {
		t.Fatalf("no letter listed:\n%s", screen)
	}

	// A bad expression: the column is pointed at, enter does nothing, esc keeps the screen.
	tm.keys("/")
	tm.keys("C-u")
	tm.literal("payload~(")
	tm.waitFor("the expression's error", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "/payload~(\n         ^ bad regular expression")
	})
	tm.keys("Enter")
	tm.waitFor("the prompt kept open", 5*time.Second, func(s string) bool { return strings.Contains(s, "^ bad regular expression") })
	tm.keys("Escape")
	tm.waitFor("the search kept", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "/reason=") && !strings.Contains(s, "bad regular expression")
	})

	// A search by key over the whole DLQ: every letter listed has that key.
	tm.keys("/")
	tm.keys("C-u")
	tm.literal("key=" + key[1])
	tm.keys("Enter")
	screen = tm.waitFor("the key's letters", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "/key="+key[1]+" · ")
	})
	for _, m := range regexp.MustCompile(`\n +[0-9]+[smhd] (\S+) `).FindAllStringSubmatch(screen, -1) {
		if m[1] != key[1] {
			t.Errorf("a letter of key %s in the search for %s:\n%s", m[1], key[1], screen)
		}
	}

	// enter: the letter read from its own position, without consuming.
	tm.keys("Enter")
	tm.waitFor("the letter at its position", 15*time.Second, func(s string) bool {
		return strings.Contains(s, "Read public/demo/orders-billing-DLQ · from ") && strings.Contains(s, "key         "+key[1])
	})
}
