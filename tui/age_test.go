package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

// movingClock is a clock the test moves; it never ticks (the test refreshes by hand).
type movingClock struct {
	mu sync.Mutex
	t  time.Time
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

func (*movingClock) Tick(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }

// What is on screen says how old it is once two refreshes have failed to bring anything new,
// and an error stays on the status line until a key is pressed or the cluster answers again.
func TestDataAgeAndHeldErrors(t *testing.T) {
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
	header := func() string { return strings.SplitN(tuitest.Plain(app.Render()), "\n", 2)[0] }
	if strings.Contains(header(), "as of") {
		t.Fatalf("fresh data carries an age:\n%s", header())
	}

	clk.add(3 * time.Second) // one refresh missed: still current enough
	if strings.Contains(header(), "as of") {
		t.Fatalf("data one refresh old carries an age:\n%s", header())
	}
	clk.add(2 * time.Second)
	if want := "as of " + datatest.FakeEpoch.Format("15:04:05"); !strings.Contains(header(), want) {
		t.Fatalf("data two refreshes old: want %q in the header:\n%s", want, header())
	}
	h.send(common.RefreshMsg{Forced: true}) // the cluster answers: the age goes
	if strings.Contains(header(), "as of") {
		t.Fatalf("refreshed data carries an age:\n%s", header())
	}

	h.send(common.ErrorMsg{What: "topics", Err: context.DeadlineExceeded})
	h.send(common.StatusMsg("exported 3 messages"))
	if !strings.Contains(h.plain(), "✗ topics") {
		t.Fatalf("a background status replaced the error:\n%s", h.plain())
	}
	h.keys("j") // the user acts: news may replace the error
	h.send(common.StatusMsg("exported 3 messages"))
	if !strings.Contains(h.plain(), "exported 3 messages") {
		t.Fatalf("the status after a key did not show:\n%s", h.plain())
	}
}
