package tui

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
)

// TestTeatestFlow runs the real Bubble Tea program (renderer, input parsing) on the fake
// source: open a topic through the filter, read a consumer's schema type, switch theme from
// the palette, show the help, quit.
func TestTeatestFlow(t *testing.T) {
	app, err := New(context.Background(), Options{Source: datatest.NewFake(), ThemesDir: t.TempDir(),
		Clock: common.FixedClock{T: datatest.FakeEpoch}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ANSI256)))
	// Output is a stream: what one wait reads past its match must stay there for the next, so
	// everything read is kept and each wait looks after the previous match.
	var seen []byte
	mark := 0
	wait := func(what string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second) // generous: the suite runs on 2 busy cores
		buf := make([]byte, 32<<10)
		for {
			if i := bytes.Index(seen[mark:], []byte(what)); i >= 0 {
				mark += i + len(what)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q not on screen after 15s; last output:\n%s", what, seen[max(0, len(seen)-2000):])
			}
			n, _ := tm.Output().Read(buf)
			seen = append(seen, buf[:n]...)
			if n == 0 {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	wait("orders-billing-DLQ")
	tm.Type("/orders")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	wait("AUTO_CONSUME")
	tm.Type(":theme light")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	wait("theme light")
	tm.Type("?")
	wait("NAVIGATION")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(*App)
	if final.c.Styles.Theme.Name != "light" || !final.quitting {
		t.Errorf("final theme %s, quitting %v", final.c.Styles.Theme.Name, final.quitting)
	}
}
