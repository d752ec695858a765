package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTUIEndToEnd drives the real binary in tmux, as a user would: `letterbox demo` at 160×48,
// filter the topics to orders, open it, read its consumers with their schema types (one
// AUTO_CONSUME), switch to the light theme, open the help, quit. It needs tmux and skips
// without it.
func TestTUIEndToEnd(t *testing.T) {
	tm, home := demoInTmux(t, "e2e")
	start := time.Now()

	// The topics screen, with the demo's topics.
	screen := tm.waitFor("the topics screen", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "public/demo/") &&
			strings.Contains(s, "orders-billing-DLQ") && strings.Contains(s, "payments")
	})
	if !strings.HasPrefix(screen, "letterbox Topics") {
		t.Errorf("header:\n%s", screen)
	}

	// Filter to orders, keep the filter, open the first topic.
	tm.keys("/")
	tm.literal("orders")
	tm.waitFor("the filter", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "/orders") && !strings.Contains(s, "shipments")
	})
	tm.keys("Enter")
	tm.waitFor("the filtered list", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "enter open")
	})
	tm.keys("Enter")
	screen = tm.waitFor("the orders topic with its consumers", 15*time.Second, func(s string) bool {
		return strings.Contains(s, "Topics › public/demo/orders") && regexp.MustCompile(`auditor .*AUTO_CONSUME`).MatchString(s) &&
			regexp.MustCompile(`billing-1 .*JSON`).MatchString(s) && regexp.MustCompile(`billing-2 .*JSON`).MatchString(s)
	})
	if n := strings.Count(screen, "AUTO_CONSUME"); n != 1 {
		t.Errorf("%d consumers with AUTO_CONSUME, want 1:\n%s", n, screen)
	}

	// :theme light changes the header's colours.
	before := sgr(brand(tm.capture("-e")))
	tm.keys(":")
	tm.literal("theme light")
	tm.keys("Enter")
	tm.waitForRaw("the light theme", 5*time.Second, func(s string) bool {
		after := sgr(brand(s))
		return len(after) > 0 && !slices.Equal(after, before)
	})

	// ? shows the help; esc closes it.
	tm.keys("?")
	tm.waitFor("the help", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "Help · public/demo/orders") && strings.Contains(s, "esc or ? closes")
	})
	tm.keys("Escape")
	tm.waitFor("the help closed", 5*time.Second, func(s string) bool { return !strings.Contains(s, "esc or ? closes") })

	// q quits: status 0, the terminal back to normal (main screen, cursor shown, no mouse mode).
	tm.keys("q")
	screen = tm.waitFor("letterbox to exit", 15*time.Second, func(s string) bool { return strings.Contains(s, "letterbox exited") })
	if !strings.Contains(screen, "letterbox exited 0") {
		t.Errorf("exit:\n%s", screen)
	}
	if strings.Contains(screen, "letterbox Topics") {
		t.Errorf("the TUI is still on screen after it exited:\n%s", screen)
	}
	if got := tm.run("display-message", "-p", "-t", "e2e", "#{alternate_on} #{cursor_flag} #{mouse_any_flag}"); strings.TrimSpace(got) != "0 1 0" {
		t.Errorf("terminal not restored: alternate screen, cursor, mouse = %q, want 0 1 0", got)
	}
	log, err := os.ReadFile(filepath.Join(home, "state", "letterbox", "letterbox.log"))
	if err != nil || !strings.Contains(string(log), "demo broker") {
		t.Errorf("log file: %v\n%s", err, log)
	}
	t.Logf("tmux part took %v", time.Since(start).Round(time.Millisecond))
}

// TestTUIReplayEndToEnd drives the real binary in tmux through the way back: `letterbox demo`,
// open the demo's DLQ, preview a replay, run it, and read on screen that the DLQ's backlog
// reached 0, that the origin received the messages, and that the replay history lists the run.
func TestTUIReplayEndToEnd(t *testing.T) {
	tm, _ := demoInTmux(t, "replay")
	tm.waitFor("the topics screen", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "orders-billing-DLQ")
	})

	// The demo's DLQ, once some orders have died.
	tm.keys(":")
	tm.literal("dlq persistent://public/demo/orders-billing-DLQ")
	tm.keys("Enter")
	backlog := regexp.MustCompile(`via billing-audit · ([1-9][0-9,]*) letters`)
	tm.waitFor("dead letters in the DLQ", 45*time.Second, func(s string) bool { return backlog.MatchString(s) })

	// Preview, confirm, run. The demo keeps failing orders, so a dead letter may arrive
	// between the end of a run and the re-read of the backlog: then replay again.
	tm.keys("R")
	var screen string
	var moved []string
	for attempt := 1; ; attempt++ {
		tm.waitFor("the preview", 15*time.Second, func(s string) bool {
			return regexp.MustCompile(`would move +[1-9]`).MatchString(s) && strings.Contains(s, "nothing changed")
		})
		tm.keys("Enter")
		tm.waitFor("the confirmation", 5*time.Second, func(s string) bool { return strings.Contains(s, "y yes") })
		tm.keys("y")
		screen = tm.waitFor("the replay's summary", 30*time.Second, func(s string) bool {
			return strings.Contains(s, "Replay complete") && strings.Contains(s, "now: DLQ backlog")
		})
		moved = regexp.MustCompile(`moved +([0-9]+)`).FindStringSubmatch(screen)
		if moved == nil || moved[1] == "0" {
			t.Fatalf("nothing moved:\n%s", screen)
		}
		// The demo keeps publishing orders, so the origin gained at least what was moved.
		gained := regexp.MustCompile(`\(\+([0-9]+) since the run started\)`).FindStringSubmatch(screen)
		if gained == nil || atoi(gained[1]) < atoi(moved[1]) {
			t.Errorf("the origin did not receive the %s moved messages:\n%s", moved[1], screen)
		}
		if strings.Contains(screen, "DLQ backlog on billing-audit: 0 letters") {
			break
		}
		if attempt == 5 {
			t.Fatalf("the DLQ's backlog did not reach 0 in %d runs:\n%s", attempt, screen)
		}
		tm.keys("C-r")
	}

	// Back on the dead letters, the history lists the run.
	tm.keys("Escape")
	tm.waitFor("the replay history", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "History") && regexp.MustCompile(`replay +complete +moved `+moved[1]+` `).MatchString(s)
	})
	tm.keys("q")
	screen = tm.waitFor("letterbox to exit", 15*time.Second, func(s string) bool { return strings.Contains(s, "letterbox exited") })
	if !strings.Contains(screen, "letterbox exited 0") {
		t.Errorf("exit:\n%s", screen)
	}
}

// demoInTmux builds the binary and runs `letterbox demo` at 160×48 in a tmux session of its
// own (own socket, no user configuration, temporary HOME and XDG directories; env adds to the
// environment, NAME=VALUE). After letterbox exits the shell prints "letterbox exited STATUS"
// and waits, so the pane can still be read. It skips with -short, and without tmux, except in
// CI (CI set), where a missing tmux fails the test: a run that cannot drive the real binary
// must not pass as if it had.
func demoInTmux(t *testing.T, session string, env ...string) (*tmux, string) {
	t.Helper()
	bin, dir := buildForTmux(t)
	return letterboxInTmux(t, session, bin, dir, env, "demo"), filepath.Join(dir, "home")
}

// tmux drives one session on a server of its own (its own socket, no user configuration).
type tmux struct {
	t      *testing.T
	sock   string
	target string
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (tm *tmux) keys(keys ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", tm.target}, keys...)...)
}

func (tm *tmux) literal(s string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", tm.target, "-l", s)
}

// capture returns the pane's text (with "-e": with its escape sequences).
func (tm *tmux) capture(flags ...string) string {
	tm.t.Helper()
	return tm.run(append([]string{"capture-pane", "-p", "-t", tm.target}, flags...)...)
}

// waitFor polls the pane's text until ok accepts it, failing the test after d.
func (tm *tmux) waitFor(what string, d time.Duration, ok func(string) bool) string {
	tm.t.Helper()
	return tm.poll(what, d, ok)
}

// waitForRaw is waitFor on the pane with its escape sequences.
func (tm *tmux) waitForRaw(what string, d time.Duration, ok func(string) bool) string {
	tm.t.Helper()
	return tm.poll(what, d, ok, "-e")
}

func (tm *tmux) poll(what string, d time.Duration, ok func(string) bool, flags ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := tm.capture(flags...)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("timed out after %v waiting for %s; the screen:\n%s", d, what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// brand is what precedes the app's name in the header: the brand colour's sequences.
func brand(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	before, _, _ := strings.Cut(line, "letterbox")
	return before
}

var sgrRE = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// sgr lists the colour and style sequences of s, in order.
func sgr(s string) []string { return sgrRE.FindAllString(s, -1) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
