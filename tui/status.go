package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
)

// The status line, the line above the keys, keeps one discipline: it shows the screen on top's
// own news only (what the commands of a screen underneath report is not shown over another);
// news replaces what was there, so a success replaces an error; an error stays until the next
// key that does something, or ErrorFor on the TUI's clock, whichever comes first; and an error
// always says something.

// ErrorFor is how long an error stays on the status line when no key is pressed.
const ErrorFor = 10 * time.Second

// statusLines is how many lines a long error may take, the page giving up its last ones.
const statusLines = 3

// statusLine is what the status line says, and since when.
type statusLine struct {
	text string
	err  bool
	at   time.Time
	seq  int // numbers each thing said, so that an expiry is for the one it was set for
}

// ownedMsg is a status or an error that a screen's command reported: it shows only while that
// screen is on top.
type ownedMsg struct {
	page common.Page
	msg  tea.Msg // common.StatusMsg or common.ErrorMsg
}

// statusExpiredMsg says an error's time on the status line is up.
type statusExpiredMsg struct{ seq int }

// owned makes the status and error messages of cmd, a command page p returned, p's own.
func owned(p common.Page, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		switch m := cmd().(type) {
		case tea.BatchMsg:
			out := make(tea.BatchMsg, len(m))
			for i, c := range m {
				out[i] = owned(p, c)
			}
			return out
		case common.StatusMsg, common.ErrorMsg:
			return ownedMsg{page: p, msg: m}
		default:
			return m
		}
	}
}

// say puts text on the status line for the screen on top; an error is timed out.
func (a *App) say(text string, isErr bool) tea.Cmd {
	if isErr && strings.TrimSpace(text) == "" {
		text = "failed, and the cluster gave no reason"
	}
	a.status = statusLine{text: text, err: isErr, at: a.c.Clock.Now(), seq: a.status.seq + 1}
	if !isErr {
		return nil
	}
	seq := a.status.seq
	return a.c.Clock.Tick(ErrorFor, func(time.Time) tea.Msg { return statusExpiredMsg{seq: seq} })
}

// clearStatus empties the status line (a screen opened or left: what it said was its own).
func (a *App) clearStatus() { a.status = statusLine{seq: a.status.seq + 1} }

// expire takes an error off the status line once its time is up.
func (a *App) expire() {
	if a.status.err && a.c.Clock.Now().Sub(a.status.at) >= ErrorFor {
		a.clearStatus()
	}
}

// reported handles a screen's status or error message: shown when that screen is on top (or
// when no screen sent it), dropped otherwise.
func (a *App) reported(from common.Page, msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch m := msg.(type) {
	case common.ErrorMsg:
		if m.Network() {
			a.conn = connDown
		}
		if from == nil || from == a.active() {
			cmd = a.say(m.Error(), true)
		}
		// Every page sees it: the one whose reading failed shows its error state.
		return tea.Batch(cmd, a.toAll(m))
	case common.StatusMsg:
		if from == nil || from == a.active() {
			return a.say(string(m), false)
		}
	}
	return nil
}

// keyed runs a key and takes the error off the status line when the key did something: it
// made a command, or changed what is on screen. A key that does nothing leaves the error to
// be read.
func (a *App) keyed(msg tea.KeyPressMsg) tea.Cmd {
	before, seq := a.render(false), a.status.seq
	cmd := a.key(msg)
	if a.status.err && a.status.seq == seq && (cmd != nil || a.render(false) != before) {
		a.clearStatus()
	}
	return cmd
}

// statusView is the status line: an error wraps onto up to statusLines lines rather than be
// cut, the page giving them up.
func (a *App) statusView(w int) []string {
	st := a.c.Styles
	switch {
	case a.paletteOpen:
		return []string{common.Pad(a.palette.Hints(), w, false)}
	case a.question != nil:
		return a.paintLines(&st.Warn, common.Wrap(termtext.Line(a.question.text), w, statusLines))
	case a.status.err:
		return a.paintLines(&st.Error, common.Wrap("✗ "+termtext.Line(a.status.text), w, statusLines))
	}
	return []string{st.Subtle.Render(common.Pad(termtext.Line(a.status.text), w, false))}
}

// paintLines styles each line, padded to the width, so a line's colour spans the screen.
func (a *App) paintLines(style *lipgloss.Style, lines []string) []string {
	w := a.c.Width
	for i, l := range lines {
		lines[i] = style.Render(common.Pad(l, w, false))
	}
	return lines
}
