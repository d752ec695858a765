package tui

import (
	"cmp"
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

// harness drives the app without a terminal: messages go straight to Update and the commands
// they return run synchronously, so a view is a pure function of the fake snapshot, the fixed
// clock and the keys sent.
type harness struct {
	t   *testing.T
	app *App
	src *datatest.Fake
	// patience is how long a command may take before the test fails (default 30 s);
	// streamWait how long a command waiting on a page's stream may wait before it is abandoned
	// (default 300 ms: the fake's streams block for good once they have delivered what they
	// hold; a real broker's take their time and end, and tests on one raise it).
	patience, streamWait time.Duration
}

func newHarness(t *testing.T, w, h int, theme string) *harness {
	t.Helper()
	src := datatest.NewFake()
	app, err := New(context.Background(), Options{
		Source: src, Theme: theme, ThemesDir: t.TempDir(), Clock: common.FixedClock{T: datatest.FakeEpoch},
		Getenv: func(string) string { return "" }, ExportDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{t: t, app: app, src: src}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(app.Init())
	return hs
}

// run executes cmd and everything it leads to, each command to its end, however loaded the
// machine: a view is then the same on every run. The one exception is a command that waits on
// a stream of the active page (a tail, a scan or a replay held half way): the page says so
// (common.Streaming), and after a short wait the command is abandoned.
func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	start := time.Now()
	deadline := start.Add(cmp.Or(h.patience, 30*time.Second))
	for msg == nil {
		select {
		case msg = <-done:
			if msg == nil {
				return
			}
		case <-time.After(50 * time.Millisecond):
			if s, ok := h.app.active().(common.Streaming); ok && s.Streaming() && time.Since(start) > cmp.Or(h.streamWait, 300*time.Millisecond) {
				return
			}
			if time.Now().After(deadline) {
				h.t.Fatalf("a command of %s did not finish in %v", h.app.active().Title(), cmp.Or(h.patience, 30*time.Second))
			}
		}
	}
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case tea.QuitMsg:
	default:
		h.send(msg)
	}
}

// send delivers msg and runs what it returns.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.app.Update(msg)
	h.run(cmd)
}

// keys types each key: a single character, or a name like "enter", "esc", "tab", "down";
// "text:…" types the text after the colon.
func (h *harness) keys(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		if text, ok := strings.CutPrefix(k, "text:"); ok {
			h.typeText(text)
			continue
		}
		h.send(keyMsg(k))
	}
}

// typeText types s one rune at a time.
func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab,
		"down": tea.KeyDown, "up": tea.KeyUp, "space": tea.KeySpace, "end": tea.KeyEnd, "home": tea.KeyHome,
		"backspace": tea.KeyBackspace, "pgdown": tea.KeyPgDown}
	if r, ok := special[k]; ok {
		return tea.KeyPressMsg{Code: r}
	}
	if len(k) > 5 && k[:5] == "ctrl+" {
		return tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
	}
	if k == "shift+tab" {
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// plain is the current screen without styles.
func (h *harness) plain() string { return tuitest.Plain(h.app.Render()) }

// newClusterHarness is a harness on the cluster opts names (a real broker), at w×h on the wall
// clock, started; with the source it reads.
func newClusterHarness(t *testing.T, ctx context.Context, opts data.AdminOptions, w, h int) (*harness, *data.Admin) {
	t.Helper()
	src, err := data.NewAdmin(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	app, err := New(ctx, Options{Source: src, ThemesDir: t.TempDir(), Clock: common.FixedClock{T: time.Now()},
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{t: t, app: app}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(app.Init())
	return hs, src
}
