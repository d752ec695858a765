package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

// movingClock is a clock the test moves. Its ticks never fire by themselves: due hands the
// test the messages of those whose time has come, to deliver by hand.
type movingClock struct {
	mu    sync.Mutex
	t     time.Time
	ticks []tick
}

type tick struct {
	at time.Time
	fn func(time.Time) tea.Msg
}

// due returns the messages of the ticks whose time has come, oldest first, and forgets them.
func (c *movingClock) due() []tea.Msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []tea.Msg
	rest := c.ticks[:0]
	for _, tk := range c.ticks {
		if tk.at.After(c.t) {
			rest = append(rest, tk)
			continue
		}
		out = append(out, tk.fn(tk.at))
	}
	c.ticks = rest
	return out
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movingClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Tick records the tick for due, and returns no command: nothing fires unless the test says.
func (c *movingClock) Tick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ticks = append(c.ticks, tick{at: c.t.Add(d), fn: fn})
	return nil
}

// agingApp is the app on src at 160×48, started, on a clock the test moves, refreshing every
// 2 s; header reads its top line.
func agingApp(t *testing.T, src *datatest.Fake) (h *harness, clk *movingClock, header func() string) {
	t.Helper()
	clk = &movingClock{t: datatest.FakeEpoch}
	app, err := New(context.Background(), Options{Source: src, ThemesDir: t.TempDir(), Clock: clk,
		Getenv: func(string) string { return "" }, ExportDir: t.TempDir(), Refresh: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h = &harness{t: t, app: app, src: src}
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.run(app.Init())
	return h, clk, func() string { return strings.SplitN(tuitest.Plain(app.Render()), "\n", 2)[0] }
}

// What is on screen says how old it is only once a refresh has gone unanswered for a whole
// period — never while the broker answers, however old what is shown — and an error stays on
// the status line through a key that does nothing, until news replaces it.
func TestDataAgeAndHeldErrors(t *testing.T) {
	src := datatest.NewFake()
	h, clk, header := agingApp(t, src)
	if strings.Contains(header(), "as of") {
		t.Fatalf("fresh data carries an age:\n%s", header())
	}

	clk.add(5 * time.Second) // nothing asked since: what is shown is all there is to show
	if strings.Contains(header(), "as of") {
		t.Fatalf("data nobody asked to refresh carries an age:\n%s", header())
	}
	read := clk.Now()
	h.send(common.RefreshMsg{}) // the cluster answers at once
	clk.add(3 * time.Second)
	if strings.Contains(header(), "as of") {
		t.Fatalf("answered data carries an age:\n%s", header())
	}

	src.Lock()
	src.Err = context.DeadlineExceeded // the cluster stops answering
	src.Unlock()
	h.send(common.RefreshMsg{})
	clk.add(time.Second)
	h.send(common.RefreshMsg{})
	if strings.Contains(header(), "as of") {
		t.Fatalf("a refresh unanswered for less than a period carries an age:\n%s", header())
	}
	clk.add(time.Second)
	if want := "as of " + read.Format("15:04:05"); !strings.Contains(header(), want) {
		t.Fatalf("a refresh unanswered for a period: want %q in the header:\n%s", want, header())
	}
	src.Lock()
	src.Err = nil
	src.Unlock()
	h.send(common.RefreshMsg{Forced: true}) // the cluster answers: the age goes
	if strings.Contains(header(), "as of") {
		t.Fatalf("refreshed data carries an age:\n%s", header())
	}

	h.send(common.ErrorMsg{What: "topics", Err: context.DeadlineExceeded})
	h.keys("1") // a key that does nothing: the error is still to be read
	if !strings.Contains(h.plain(), "✗ topics") {
		t.Fatalf("a key that did nothing took the error away:\n%s", h.plain())
	}
	h.send(common.StatusMsg("exported 3 messages")) // news replaces it
	if got := h.plain(); !strings.Contains(got, "exported 3 messages") || strings.Contains(got, "✗") {
		t.Fatalf("the news after an error did not replace it:\n%s", got)
	}
}

// A screen with nothing to read again (a finished discard) is never said to be old: the
// refreshes that go by ask the cluster nothing, so none goes unanswered.
func TestNoAgeWhereNothingIsRead(t *testing.T) {
	clk := &movingClock{t: datatest.FakeEpoch}
	src := datatest.NewFake()
	app, err := New(context.Background(), Options{Source: src, ThemesDir: t.TempDir(), Clock: clk,
		Getenv: func(string) string { return "" }, ExportDir: t.TempDir(), Refresh: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, app: app, src: src}
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.run(app.Init())
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("space", "space", "X", "enter", "y")
	if !strings.Contains(h.plain(), "Discard complete") {
		t.Fatalf("the discard did not finish:\n%s", h.plain())
	}
	for range 3 {
		clk.add(2 * time.Second)
		h.send(refreshTickMsg{})
	}
	if got := strings.SplitN(h.plain(), "\n", 2)[0]; strings.Contains(got, "as of") {
		t.Errorf("a finished discard, which reads nothing again, is said to be old:\n%s", got)
	}
}

// Between the listings of a large cluster a refresh asks for the rows on screen only: their
// answer is the cluster answering, so the screen is never said to be old while it does (it
// said "as of" a minute-old listing while the broker answered every refresh).
func TestLargeListingRefreshesAreAnswers(t *testing.T) {
	src := bigFake(data.OnScreenFrom + 1)
	src.ListsWithoutStats = true
	h, clk, header := agingApp(t, src)
	for range 5 {
		h.send(common.RefreshMsg{})
		clk.add(3 * time.Second)
		if strings.Contains(header(), "as of") {
			t.Fatalf("a large listing whose rows on screen were refreshed carries an age:\n%s", header())
		}
	}
	src.Lock()
	src.Err = context.DeadlineExceeded // the cluster stops answering
	src.Unlock()
	h.send(common.RefreshMsg{})
	clk.add(3 * time.Second)
	if !strings.Contains(header(), "as of") {
		t.Fatalf("rows on screen unanswered for a period: want an age in the header:\n%s", header())
	}
}
