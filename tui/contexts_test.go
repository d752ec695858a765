package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

// closingFake is a fake source that counts its Close calls.
type closingFake struct {
	*datatest.Fake
	mu     sync.Mutex
	closed int
}

func (c *closingFake) Close() { c.mu.Lock(); c.closed++; c.mu.Unlock() }
func (c *closingFake) closes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// clusters are the fake clusters of the context tests, by context name ("" is the start one).
type clusters struct {
	mu     sync.Mutex
	opened map[string][]*closingFake
	fail   map[string]error // Open fails
	down   map[string]error // Open works, the cluster does not answer
}

func newClusters() *clusters {
	return &clusters{opened: map[string][]*closingFake{}, fail: map[string]error{}, down: map[string]error{}}
}

// open makes a fake per context: prod has one namespace and one topic of its own.
func (cl *clusters) open(_ context.Context, name string) (data.Source, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if err := cl.fail[name]; err != nil {
		return nil, err
	}
	f := datatest.NewFake()
	switch name {
	case "prod":
		f.Name = "https://pulsar.example:8443"
		f.NS = []string{"payments/live"}
		f.Rows = []data.TopicRow{{Name: "persistent://payments/live/charges", Namespace: "payments/live", Local: "charges",
			StatsKnown: true, Stats: data.Stats{RateIn: 950, RateOut: 949, Backlog: 3, Subscriptions: 1, Producers: 4, Consumers: 4}}}
	case "":
	default:
		f.Name = "http://" + name + ":8080"
	}
	f.Err = cl.down[name]
	c := &closingFake{Fake: f}
	cl.opened[name] = append(cl.opened[name], c)
	return c, nil
}

func (cl *clusters) last(name string) *closingFake {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	o := cl.opened[name]
	if len(o) == 0 {
		return nil
	}
	return o[len(o)-1]
}

var testContexts = []Context{
	{Name: "local"},
	{Name: "prod", Colour: "1"},
	{Name: "staging", Colour: "#e0af68", Theme: "light"},
}

// newContextHarness is a harness started on start (zero: no named context) with testContexts.
func newContextHarness(t *testing.T, w, h int, start Context) (*harness, *clusters, *closingFake) {
	t.Helper()
	cl := newClusters()
	first := &closingFake{Fake: datatest.NewFake()}
	if start.Name == "prod" {
		s, _ := cl.open(context.Background(), "prod")
		first = s.(*closingFake)
	}
	app, err := New(context.Background(), Options{
		Source: first, Theme: "", ThemesDir: t.TempDir(), Clock: common.FixedClock{T: datatest.FakeEpoch},
		Getenv: func(string) string { return "" }, ExportDir: t.TempDir(),
		Contexts: Contexts{Current: start, List: testContexts, Open: cl.open},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{t: t, app: app, src: first.Fake}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(app.Init())
	return hs, cl, first
}

func (h *harness) statusLine() string {
	lines := splitLines(h.plain())
	return lines[len(lines)-2]
}

// The header names the context in its colour: goldens at both sizes, and the colours as a
// 256-colour terminal gets them.
func TestGoldenContextHeader(t *testing.T) {
	for _, sz := range sizes {
		name := fmt.Sprintf("context-prod-%dx%d", sz[0], sz[1])
		t.Run(name, func(t *testing.T) {
			h, _, _ := newContextHarness(t, sz[0], sz[1], Context{Name: "prod", Colour: "1"})
			got := h.plain()
			checkSize(t, got, sz[0], sz[1])
			if !strings.HasPrefix(got, "letterbox  prod  Topics") {
				t.Errorf("header: %q", splitLines(got)[0])
			}
			tuitest.Golden(t, name, got)
		})
	}
	t.Run("colours", func(t *testing.T) {
		h, _, _ := newContextHarness(t, 80, 24, Context{Name: "prod", Colour: "1"})
		header := splitLines(tuitest.Profile(h.app.Render(), colorprofile.ANSI256))[0]
		tuitest.Golden(t, "colours-context-prod", header)
		// Reverse video in the terminal's red: ESC[1;7;31m (bold, reverse, red).
		if !strings.Contains(header, "\x1b[1;7;31m prod ") {
			t.Errorf("the badge is not bold reversed red: %q", header)
		}
	})
	t.Run("deep breadcrumb at 56", func(t *testing.T) {
		h, _, first := newContextHarness(t, 56, 24, Context{Name: "prod", Colour: "1"})
		first.Lock()
		first.Rows = append(first.Rows, data.TopicRow{Name: "persistent://payments/live/charges-with-a-very-long-name-for-the-breadcrumb",
			Namespace: "payments/live", Local: "charges-with-a-very-long-name-for-the-breadcrumb"})
		first.Unlock()
		h.command("peek payments/live/charges-with-a-very-long-name-for-the-breadcrumb some-subscription")
		checkSize(t, h.plain(), 56, 24)
		if first := splitLines(h.plain())[0]; !strings.HasPrefix(first, "letterbox  prod  … peek some-subscription") {
			t.Errorf("a truncated breadcrumb keeps the badge and where you are: %q", first)
		}
	})
}

func TestContextSwitch(t *testing.T) {
	h, cl, first := newContextHarness(t, 160, 48, Context{})
	if strings.Contains(splitLines(h.plain())[0], "prod") {
		t.Fatalf("no context, yet a badge: %q", splitLines(h.plain())[0])
	}
	h.command("topic public/demo/orders")
	if len(h.app.stack) != 2 {
		t.Fatalf("stack %d", len(h.app.stack))
	}

	h.command("context prod")
	screen := h.plain()
	header := splitLines(screen)[0]
	if !strings.HasPrefix(header, "letterbox  prod  Topics") || !strings.Contains(header, "https://pulsar.example:8443") {
		t.Errorf("header after the switch: %q", header)
	}
	if len(h.app.stack) != 1 || !strings.Contains(screen, "charges") || strings.Contains(screen, "orders") {
		t.Errorf("after the switch: stack %d, screen:\n%s", len(h.app.stack), screen)
	}
	if got := h.statusLine(); !strings.Contains(got, "context prod · https://pulsar.example:8443") {
		t.Errorf("status %q", got)
	}
	if first.closes() != 1 {
		t.Errorf("the start source closed %d times, want 1", first.closes())
	}

	// Back to the start cluster, which is reopened; prod's source is closed.
	h.command("context -")
	if cl.last("prod").closes() != 1 || cl.last("") == nil {
		t.Errorf("prod closed %d times; start reopened: %v", cl.last("prod").closes(), cl.last("") != nil)
	}
	if header := splitLines(h.plain())[0]; strings.Contains(header, "prod") || !strings.Contains(h.plain(), "orders") {
		t.Errorf("back at the start: %q", header)
	}

	// The TUI closes what it opened when it ends; not the caller's source.
	h.app.closeSources(first)
	if cl.last("").closes() != 1 || first.closes() != 1 {
		t.Errorf("at the end: reopened start closed %d, caller's %d", cl.last("").closes(), first.closes())
	}
}

// An answer of the old cluster that arrives after the switch is dropped.
func TestContextSwitchDropsStaleAnswers(t *testing.T) {
	h, _, _ := newContextHarness(t, 160, 48, Context{Name: "local"})
	// A refresh of the local cluster's topics, still in flight.
	_, stale := h.app.Update(common.RefreshMsg{Forced: true})
	h.command("context prod")
	h.run(stale)
	if screen := h.plain(); strings.Contains(screen, "orders") || !strings.Contains(screen, "charges") {
		t.Errorf("the old cluster's answer replaced the new one's:\n%s", screen)
	}
	// The new cluster's own refreshes still arrive.
	h.send(common.RefreshMsg{Forced: true})
	if !strings.Contains(h.plain(), "charges") {
		t.Errorf("after a refresh:\n%s", h.plain())
	}
}

func TestContextSwitchErrors(t *testing.T) {
	h, cl, first := newContextHarness(t, 160, 48, Context{Name: "local"})
	cl.fail["prod"] = errors.New("token_file: open /nope: no such file or directory")
	h.command("context prod")
	if got := h.statusLine(); !strings.Contains(got, "✗ context prod: token_file: open /nope") || !strings.Contains(got, "(still on local)") {
		t.Errorf("status %q", got)
	}
	delete(cl.fail, "prod")
	cl.down["prod"] = errors.New("dial tcp: connection refused")
	h.command("context prod")
	if got := h.statusLine(); !strings.Contains(got, "context prod: dial tcp: connection refused (still on local)") {
		t.Errorf("status %q", got)
	}
	if cl.last("prod").closes() != 1 {
		t.Errorf("the unanswering source was closed %d times, want 1", cl.last("prod").closes())
	}
	if first.closes() != 0 || !strings.HasPrefix(splitLines(h.plain())[0], "letterbox  local  Topics") || !strings.Contains(h.plain(), "orders") {
		t.Errorf("a failed switch left the old cluster: closes %d\n%s", first.closes(), h.plain())
	}
	h.command("context nope")
	if got := h.statusLine(); !strings.Contains(got, `no context "nope" (contexts: local, prod, staging)`) {
		t.Errorf("status %q", got)
	}
	h.command("context")
	if got := h.statusLine(); !strings.Contains(got, "contexts: local (current), prod, staging") {
		t.Errorf(":context lists %q", got)
	}
}

// A later :context wins over one still connecting.
func TestContextSwitchSuperseded(t *testing.T) {
	h, cl, _ := newContextHarness(t, 160, 48, Context{Name: "local"})
	slow := h.app.contextCommand([]string{"prod"}) // still connecting
	h.command("context staging")
	h.run(slow) // the older request answers last
	if header := splitLines(h.plain())[0]; !strings.Contains(header, "staging") {
		t.Errorf("header %q", header)
	}
	prods := cl.opened["prod"]
	if n := prods[len(prods)-1].closes(); n != 1 {
		t.Errorf("the superseded source was closed %d times, want 1", n)
	}
}

func TestContextThemeAndCompletion(t *testing.T) {
	h, _, _ := newContextHarness(t, 80, 24, Context{Name: "local"})
	comp := strings.Join(h.app.completions(), "|")
	for _, want := range []string{"context local", "context prod", "context staging"} {
		if !strings.Contains(comp, want) {
			t.Errorf("completions lack %q: %s", want, comp)
		}
	}
	h.command("context staging")
	if got := h.app.c.Styles.Theme.Name; got != "light" {
		t.Errorf("staging's theme: %s", got)
	}
	if !strings.Contains(strings.Join(h.app.completions(), "|"), "context -") {
		t.Errorf("no completion back to the start")
	}
	h.command("context prod")
	if got := h.app.c.Styles.Theme.Name; got != "dark" {
		t.Errorf("prod has no theme: back to the start's, got %s", got)
	}
}

// --theme (or NO_COLOR) wins over a context's theme.
func TestContextThemeFixed(t *testing.T) {
	cl := newClusters()
	app, err := New(context.Background(), Options{
		Source: datatest.NewFake(), Theme: "high-contrast", ThemesDir: t.TempDir(), Clock: common.FixedClock{T: datatest.FakeEpoch},
		Getenv:   func(string) string { return "" },
		Contexts: Contexts{Current: Context{Name: "staging", Theme: "light"}, List: testContexts, Open: cl.open},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := app.c.Styles.Theme.Name; got != "high-contrast" {
		t.Errorf("theme %s", got)
	}
	_, err = New(context.Background(), Options{Source: datatest.NewFake(), ThemesDir: t.TempDir(),
		Getenv: func(string) string { return "" }, Contexts: Contexts{Current: Context{Name: "x", Theme: "nope"}}})
	if err == nil || !strings.Contains(err.Error(), `context x: unknown theme "nope"`) {
		t.Errorf("unknown context theme: %v", err)
	}
}

// Without contexts, :context says how to get some, and nothing is tagged.
func TestContextNone(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	h.command("context prod")
	if got := h.statusLine(); !strings.Contains(got, "no contexts: add [[context]] tables") {
		t.Errorf("status %q", got)
	}
	h.app.ctxs.opts.Problem = "config.toml:3: unknown key"
	h.command("context")
	if got := h.statusLine(); !strings.Contains(got, "contexts: config.toml:3: unknown key") {
		t.Errorf("status %q", got)
	}
	if h.app.ctxs.tag(func() tea.Msg { return common.StatusMsg("x") })() != common.StatusMsg("x") {
		t.Errorf("tagged without contexts")
	}
}

// TestContextReadOnly: a context marked read-only turns the actions off while the TUI is on it,
// and only then; --readonly holds on every context.
func TestContextReadOnly(t *testing.T) {
	cl := newClusters()
	list := []Context{{Name: "local"}, {Name: "prod", ReadOnly: true}}
	for _, flag := range []bool{false, true} {
		opts := Options{Source: datatest.NewFake(), ThemesDir: t.TempDir(), Clock: common.FixedClock{T: datatest.FakeEpoch},
			Getenv: func(string) string { return "" }, Contexts: Contexts{List: list, Open: cl.open}}
		if flag {
			opts.ReadOnly, opts.ReadOnlyFlag = "read-only (--readonly)", true
		}
		app, err := New(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{t: t, app: app}
		h.send(tea.WindowSizeMsg{Width: 120, Height: 30})
		h.run(app.Init())
		header := func() string { return splitLines(h.plain())[0] }
		if strings.Contains(header(), "READ-ONLY") != flag {
			t.Errorf("flag %v, at start: %s", flag, header())
		}
		h.command("context prod")
		if !strings.Contains(header(), "READ-ONLY") {
			t.Errorf("flag %v, on prod: %s", flag, header())
		}
		h.command("produce persistent://public/demo/orders")
		if want := "read-only (context prod): producing is turned off"; !flag && !strings.Contains(h.plain(), want) {
			t.Errorf("on prod, :produce: want %q:\n%s", want, h.plain())
		}
		h.command("context local")
		if strings.Contains(header(), "READ-ONLY") != flag {
			t.Errorf("flag %v, back on local: %s", flag, header())
		}
	}
}
