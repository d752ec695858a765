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
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestTeatestFlow runs the real Bubble Tea program (renderer, input parsing) on the fake
// source: open a topic through the filter, read a consumer's schema type, switch theme from
// the palette, show the help, quit.
func TestTeatestFlow(t *testing.T) {
	app, err := New(context.Background(), Options{Source: data.NewFake(), ThemesDir: t.TempDir(),
		Clock: common.FixedClock{T: data.FakeEpoch}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ANSI256)))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
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
