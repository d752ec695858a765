package cli_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/cli"
)

// TestTUICausesEndToEnd drives the real binary in tmux on the incident of issue 30 (9,900
// letters the official router wrote in batches): the counts show the three causes after one
// scan, and from the DLQ screen discarding the poison group, then replaying the region group,
// takes at most 12 keys.
func TestTUICausesEndToEnd(t *testing.T) {
	bin, dir := buildForTmux(t)
	env := brokertest.Start(t)
	cli.RouteIncident(t, env)
	tm := letterboxInTmux(t, "causes", bin, dir, nil, "--service-url", env.ServiceURL, "--admin-url", env.AdminURL)
	tm.waitFor("the topics screen", 20*time.Second, func(s string) bool { return strings.Contains(s, "orders-billing-DLQ") })
	tm.keys(":")
	tm.literal("dlq orders-billing-DLQ")
	tm.keys("Enter")
	tm.waitFor("the header", 20*time.Second, func(s string) bool { return strings.Contains(s, "via billing-keep · 9,900 letters") })

	// Every key from here on is counted.
	pressed := 0
	press := func(keys ...string) {
		pressed += len(keys)
		tm.keys(keys...)
	}
	press("c")
	tm.waitFor("the causes", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "CAUSES (3 groups)") && regexp.MustCompile(`\n  property region=eu +8900 `).MatchString(s) &&
			regexp.MustCompile(`\n  key empty or UNKNOWN +900 `).MatchString(s) && regexp.MustCompile(`\n  payload not JSON +100 `).MatchString(s)
	})
	// The poison group, the third: its letters, discarded.
	press("Down", "Down", "Enter")
	tm.waitFor("the poison letters", 20*time.Second, func(s string) bool { return strings.Contains(s, "100 of 9,900 letters") })
	press("X")
	tm.waitFor("the discard's preview", 30*time.Second, func(s string) bool { return regexp.MustCompile(`to discard +100\b`).MatchString(s) })
	press("Enter")
	tm.waitFor("the question", 10*time.Second, func(s string) bool { return strings.Contains(s, "y yes") })
	press("y")
	tm.waitFor("the discard done", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Discard complete") && regexp.MustCompile(`discarded +100\b`).MatchString(s)
	})
	// Back on the DLQ: the poison group's search has no letter left, so the counts come back,
	// read again, the region group first.
	press("Escape")
	tm.waitFor("the causes of the 9,800 left", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "via billing-keep · 9,800 letters") && strings.Contains(s, "CAUSES (2 groups)") &&
			regexp.MustCompile(`\n  property region=eu +8900 `).MatchString(s) && !strings.Contains(s, "payload not JSON")
	})
	press("Enter")
	tm.waitFor("the region's letters", 20*time.Second, func(s string) bool { return strings.Contains(s, "8,900 of 9,800 letters") })
	press("R")
	tm.waitFor("the replay's preview", 30*time.Second, func(s string) bool { return regexp.MustCompile(`would move +8900\b`).MatchString(s) })
	press("Enter")
	tm.waitFor("the confirmation", 10*time.Second, func(s string) bool { return strings.Contains(s, "y yes") })
	press("y")
	tm.waitFor("the replay done", 60*time.Second, func(s string) bool {
		return strings.Contains(s, "Replay complete") && regexp.MustCompile(`moved +8900\b`).MatchString(s) &&
			strings.Contains(s, "DLQ backlog on billing-keep: 900 letters")
	})
	if pressed > 12 {
		t.Errorf("%d keys from the DLQ screen to the poison group discarded and the region group replayed, want at most 12", pressed)
	}
}
