package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
)

// newClockedHarness is a harness on a clock the test moves (age_test.go), at 80×24.
func newClockedHarness(t *testing.T) (*harness, *movingClock) {
	t.Helper()
	clk := &movingClock{t: datatest.FakeEpoch}
	src := datatest.NewFake()
	app, err := New(context.Background(), Options{Source: src, ThemesDir: t.TempDir(), Clock: clk,
		Getenv: func(string) string { return "" }, ExportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, app: app, src: src}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.run(app.Init())
	return h, clk
}

// statusOf is the status line of a plain view: the line above the key bar.
func statusOf(plain string) string {
	lines := splitLines(plain)
	return lines[len(lines)-2]
}

// TestStatusErrorExpires: an error leaves the status line ErrorFor after it came, on the TUI's
// clock, when no key took it away first.
func TestStatusErrorExpires(t *testing.T) {
	h, clk := newClockedHarness(t)
	h.command("dql")
	if got := statusOf(h.plain()); !strings.HasPrefix(got, "✗ unknown command") {
		t.Fatalf("status after :dql: %q", got)
	}
	clk.add(ErrorFor - time.Second)
	for _, m := range clk.due() {
		h.send(m)
	}
	if got := statusOf(h.plain()); !strings.HasPrefix(got, "✗ unknown command") {
		t.Fatalf("the error went before its time: %q", got)
	}
	clk.add(time.Second)
	for _, m := range clk.due() {
		h.send(m)
	}
	if got := statusOf(h.plain()); got != "" {
		t.Fatalf("the error is still there %v after it came: %q", ErrorFor, got)
	}
}

// TestStatusTypoThenCommand (defect 3 of issue 31): a typo's error does not survive the good
// command typed after it, nor the keys and seconds that follow.
func TestStatusTypoThenCommand(t *testing.T) {
	h, clk := newClockedHarness(t)
	h.command("topic public/demo/orders")
	h.command("dql")
	h.command("topics")
	h.keys("j", "k")
	clk.add(3 * time.Second)
	for _, m := range clk.due() {
		h.send(m)
	}
	if got := statusOf(h.plain()); strings.Contains(got, "✗") {
		t.Errorf("the typo's error outlived :topics: %q", got)
	}
}

// TestStatusNeverBare (defect 4 of issue 31): an error always says something, and ctrl+r on
// an error leaves no bare ✗.
func TestStatusNeverBare(t *testing.T) {
	h, _ := newClockedHarness(t)
	h.send(common.ErrorMsg{What: "topics", Err: context.DeadlineExceeded})
	h.keys("ctrl+r")
	if got := statusOf(h.plain()); strings.TrimSpace(got) == "✗" {
		t.Errorf("ctrl+r left a bare ✗: %q", got)
	}
	h.send(common.ErrorMsg{Err: errors.New("")})
	if got := strings.TrimSpace(statusOf(h.plain())); got == "✗" || !strings.HasPrefix(got, "✗ ") {
		t.Errorf("an error without text: %q", got)
	}
	h.keys("j")
	if got := statusOf(h.plain()); strings.TrimSpace(got) == "✗" {
		t.Errorf("j left a bare ✗: %q", got)
	}
}

// TestStatusProduceSaysOneThing (defect 5 of issue 31): a send refused by the form replaces
// what the last send said, rather than show beside it.
func TestStatusProduceSaysOneThing(t *testing.T) {
	h, _ := newClockedHarness(t)
	h.command("produce public/demo/orders")
	h.keys("text:k1", "tab", "tab", "tab", "text:hello", "ctrl+s")
	if got := statusOf(h.plain()); !strings.HasPrefix(got, "sent ") {
		t.Fatalf("after a send: %q", got)
	}
	h.keys("shift+tab", "text:k3", "ctrl+s")
	got := h.plain()
	if s := statusOf(got); !strings.Contains(s, `delay "k3"`) {
		t.Errorf("the refused send's reason is not on the status line: %q", s)
	}
	if strings.Count(got, "✗") != 1 || strings.Contains(statusOf(got), "sent ") {
		t.Errorf("the form says two things at once:\n%s", got)
	}
}

// TestStatusIsTheScreensOwn: what a screen underneath reports does not show over the screen on
// top, and leaving a screen takes its news with it.
func TestStatusIsTheScreensOwn(t *testing.T) {
	h, _ := newClockedHarness(t)
	root := h.app.active()
	h.command("topic public/demo/orders")
	h.send(ownedMsg{page: root, msg: common.StatusMsg("broker x did not answer")})
	h.send(ownedMsg{page: root, msg: common.ErrorMsg{What: "topics", Err: errors.New("boom")}})
	if got := statusOf(h.plain()); got != "" {
		t.Errorf("the topics screen's news shows on the topic screen: %q", got)
	}
	h.send(ownedMsg{page: h.app.active(), msg: common.StatusMsg("the topic's own news")})
	if got := statusOf(h.plain()); got != "the topic's own news" {
		t.Errorf("the topic screen's own news: %q", got)
	}
	h.keys("esc")
	if got := statusOf(h.plain()); got != "" {
		t.Errorf("the topic screen's news stayed after it was left: %q", got)
	}
}

// TestStatusLongErrorWraps (defect 14 of issue 31): an error longer than the line wraps onto
// the lines above rather than being cut.
func TestStatusLongErrorWraps(t *testing.T) {
	h, _ := newClockedHarness(t)
	long := "the cluster refused it: " + strings.Repeat("a reason that goes on ", 4) + "and ends here"
	h.send(common.ErrorMsg{What: "topics", Err: errors.New(long)})
	got := h.plain()
	checkSize(t, got, 80, 24)
	if !strings.Contains(strings.Join(strings.Fields(got), " "), "and ends here") {
		t.Errorf("the end of a long error is cut:\n%s", got)
	}
}

// TestQuitAsksWhileOthersUseTheBroker (defect 10 of issue 31, the TUI's part): q asks, naming
// who else uses the embedded broker, while anyone does; n keeps letterbox running; with nobody
// else, q quits at once.
func TestQuitAsksWhileOthersUseTheBroker(t *testing.T) {
	h, _ := newClockedHarness(t)
	others := Others{Connections: 1, AdminClients: 2, AdminWithin: 30 * time.Second}
	h.app.others = func() Others { return others }
	h.keys("q")
	want := "The embedded broker serves others besides letterbox, 1 binary-protocol connection and 2 admin clients (requests in the last 30s): quitting stops it. Quit? y yes · n no"
	if got := strings.Join(strings.Fields(h.plain()), " "); !strings.Contains(got, want) || h.app.quitting {
		t.Fatalf("q while others use the broker:\n%s", h.plain())
	}
	h.keys("n")
	if h.app.quitting || strings.Contains(h.plain(), "Quit?") {
		t.Fatalf("n did not keep letterbox running:\n%s", h.plain())
	}
	others = Others{}
	h.keys("q")
	if !h.app.quitting {
		t.Errorf("q with nobody else did not quit:\n%s", h.plain())
	}
}

// TestProduceAsksBeforeSendingNothing (defect 11 of issue 31): ctrl+s with an empty payload
// sends nothing until y says so; the payload's placeholder is a hint, not content.
func TestProduceAsksBeforeSendingNothing(t *testing.T) {
	h, _ := newClockedHarness(t)
	h.command("produce public/demo/orders")
	if got := h.plain(); strings.Contains(got, `{"hello": "world"}`) || !strings.Contains(got, "the payload: any text, JSON") {
		t.Errorf("the payload's placeholder:\n%s", got)
	}
	h.keys("ctrl+s")
	if n := len(h.src.Produced); n != 0 {
		t.Fatalf("ctrl+s with an empty payload sent %d messages without asking", n)
	}
	if got := h.plain(); !strings.Contains(got, "The payload is empty: send a message without one? y yes") {
		t.Fatalf("no question:\n%s", got)
	}
	h.keys("n")
	if n := len(h.src.Produced); n != 0 || strings.Contains(h.plain(), "The payload is empty") {
		t.Fatalf("n: %d sent\n%s", n, h.plain())
	}
	h.keys("ctrl+s", "y")
	if n := len(h.src.Produced); n != 1 || len(h.src.Produced[0].Payload) != 0 {
		t.Errorf("y sent %d messages: %+v", n, h.src.Produced)
	}
}
