// Package common is what every page and component of the TUI shares (as soft-serve's
// pkg/ui/common): the screen size, styles, key map, clock, the data source and the context that
// bounds all I/O, plus the messages that travel between pages and the app.
package common

import (
	"context"
	"errors"
	"net"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/keymap"
)

// Common is shared by pointer: a theme switch or a resize is seen by every page at once.
type Common struct {
	Ctx     context.Context
	Width   int
	Height  int
	Styles  *Styles
	Keys    *keymap.KeyMap
	Clock   Clock
	Source  data.Source
	Timeout time.Duration // bound of every data call
	// UserThemes are the themes read from the user's theme directory.
	UserThemes []themes.Theme
	// ExportDir is where exports are written ("" = the working directory).
	ExportDir string
	// DataDir is the embedded broker's data directory ("" when letterbox runs none): no
	// export is written inside it.
	DataDir string
	// ReadOnly, when set, says why the TUI may not change anything ("read-only (context
	// prod)"): every action answers with it instead of acting, and the header shows it.
	ReadOnly string
	// Getenv reads the environment ($VISUAL, $EDITOR).
	Getenv func(string) string
}

// Refuse returns a command that says why action cannot be done when the TUI is read-only,
// and nil when it may act.
func (c *Common) Refuse(action string) tea.Cmd {
	if c.ReadOnly == "" {
		return nil
	}
	msg := c.ReadOnly + ": " + action + " is turned off"
	return func() tea.Msg { return StatusMsg(msg) }
}

// SetTheme switches every style to t.
func (c *Common) SetTheme(t themes.Theme) { c.Styles = NewStyles(t) }

// Clock is time as the TUI sees it: real in the program, fixed in tests (so views with ages
// and clocks are stable), and the only source of timer commands.
type Clock interface {
	Now() time.Time
	// Tick returns a command that fires fn after d, or nil when the clock never ticks.
	Tick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }
func (RealClock) Tick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	return tea.Tick(d, fn)
}

// FixedClock always says T and never ticks: tests deliver ticks themselves.
type FixedClock struct{ T time.Time }

func (c FixedClock) Now() time.Time                                    { return c.T }
func (FixedClock) Tick(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }

// Load runs fn in a command bounded by c.Timeout and turns the result into a message: ok's
// on success, ErrorMsg (with What) on failure. All data I/O goes through here.
func Load[T any](c *Common, what string, fn func(context.Context, data.Source) (T, error), ok func(T) tea.Msg) tea.Cmd {
	return LoadFor(c, nil, what, fn, ok)
}

// LoadFor is Load for a page's own reading: its ErrorMsg names the page as its Owner, so that
// the page can tell its own failure (and show an error state) from others'.
func LoadFor[T any](c *Common, owner any, what string, fn func(context.Context, data.Source) (T, error), ok func(T) tea.Msg) tea.Cmd {
	ctx, src, timeout := c.Ctx, c.Source, c.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		v, err := fn(ctx, src)
		if err != nil {
			return ErrorMsg{What: what, Err: err, Owner: owner}
		}
		return ok(v)
	}
}

// ErrorMsg reports a failed operation; the app shows it in the status line and marks the
// connection down when it is a network error. Pages also see it, to stop their spinners.
type ErrorMsg struct {
	What string
	Err  error
	// Owner is the page whose own reading failed (LoadFor), nil for other operations.
	Owner any
}

// Problem is what an error means for a screen, in words a user acts on: the thing is not
// there, the cluster refuses it, the cluster cannot be reached, or something else.
type Problem int

const (
	ProblemOther Problem = iota
	ProblemNotFound
	ProblemUnauthorized
	ProblemUnreachable
)

// ProblemOf classifies err.
func ProblemOf(err error) Problem {
	var se *client.ServerError
	switch {
	case err == nil:
		return ProblemOther
	case data.IsNotFound(err), errors.Is(err, client.ErrTopicNotFound), errors.Is(err, client.ErrSubscriptionNotFound):
		return ProblemNotFound
	case data.IsUnauthorized(err), errors.Is(err, client.ErrAuthorization), errors.Is(err, client.ErrAuthentication):
		return ProblemUnauthorized
	case (ErrorMsg{Err: err}).Network(), errors.Is(err, client.ErrConnect):
		return ProblemUnreachable
	case errors.As(err, &se):
		return ProblemOther
	}
	return ProblemOther
}

// Words are a problem's name, for a screen's error state.
func (p Problem) Words() string {
	switch p {
	case ProblemNotFound:
		return "not found"
	case ProblemUnauthorized:
		return "not authorized"
	case ProblemUnreachable:
		return "the cluster cannot be reached"
	}
	return "failed"
}

func (e ErrorMsg) Error() string {
	why := ""
	if e.Err != nil {
		why = e.Err.Error()
	}
	if why == "" {
		why = "failed, and no reason was given"
	}
	if e.What == "" {
		return why
	}
	return e.What + ": " + why
}

// Network reports whether the error says the cluster is unreachable (rather than refusing a
// request).
func (e ErrorMsg) Network() bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(e.Err, &ne) || errors.As(e.Err, &oe) || errors.Is(e.Err, context.DeadlineExceeded) ||
		errors.Is(e.Err, data.ErrLinkLost)
}

// Fresh is embedded by messages carrying data that just arrived from the cluster: the app
// takes them as proof the connection is up.
type Fresh struct{}

// FromCluster marks a message as fresh data.
func (Fresh) FromCluster() {}

// FreshMsg is implemented by messages embedding Fresh.
type FreshMsg interface{ FromCluster() }

// StatusMsg puts an informational line in the status bar.
type StatusMsg string

// PageID names a screen.
type PageID string

const (
	PageTopics   PageID = "topics"
	PageTopic    PageID = "topic"
	PageMessages PageID = "messages"
	PageProduce  PageID = "produce"
	PageFlow     PageID = "flow"
	PageDLQ      PageID = "dlq"
	PageReplay   PageID = "replay"
	PageResend   PageID = "resend"
)

// NavigateMsg opens a page on top of the current one.
type NavigateMsg struct {
	Page  PageID
	Topic string // full topic name, for topic/messages/produce
	Sub   string // subscription, for messages (peek); "" tails
	// Filter is the expression the messages screen starts filtered by (a DLQ search that
	// opened one of its letters).
	Filter string
	// Extra carries what a page needs beyond a topic and a subscription (a replay's
	// selection, data.ReplayRequest).
	Extra any
}

// ChangedMsg says that letters of Topic were moved, discarded or resent: screens that show
// them read them again, and marks on letters that are gone go.
type ChangedMsg struct{ Topic string }

// PaletteMsg opens the ":" palette with Line typed (p on an empty cluster: "produce ").
type PaletteMsg struct{ Line string }

// QuitMsg asks the app to quit (a page that confirmed it, e.g. over a running replay).
type QuitMsg struct{}

// BackMsg closes the current page.
type BackMsg struct{}

// RefreshMsg asks the active page to reload (the app's live-refresh tick, or ctrl+r).
type RefreshMsg struct{ Forced bool }

// Navigate returns a command that sends NavigateMsg.
func Navigate(m NavigateMsg) tea.Cmd { return func() tea.Msg { return m } }

// Back returns a command that sends BackMsg.
func Back() tea.Msg { return BackMsg{} }

// Page is one screen.
type Page interface {
	Init() tea.Cmd
	Update(tea.Msg) (Page, tea.Cmd)
	View() string
	// SetSize gives the page its area (the screen minus header, status and footer).
	SetSize(w, h int)
	// Title is the breadcrumb text.
	Title() string
	// ShortHelp is the footer's keys; FullHelp the help overlay's sections.
	ShortHelp() []key.Binding
	FullHelp() []HelpSection
	// Capturing is true while an input of the page has focus: the app then hands it every key
	// except ctrl+c, so typing "q" types a q.
	Capturing() bool
	// Busy is true while the page waits for data (the header shows a spinner).
	Busy() bool
	// Close releases what the page holds (a tail reader) when it leaves the stack.
	Close()
}

// Streaming is implemented by pages that hold a long-lived stream (a tail, a scan, a replay):
// Streaming reports that a command of theirs is waiting for its next event, which may never
// come in a test. The test harness uses it; the app does not.
type Streaming interface{ Streaming() bool }

// HelpSection is one titled group of the help overlay.
type HelpSection struct {
	Title string
	Keys  []key.Binding
}

// MouseMsg is a mouse event in page coordinates (the app subtracts the header).
type MouseMsg struct {
	X, Y  int
	Wheel int // -1 up, +1 down, 0 for a click
	Click bool
}

// NavigationHelp is the help section of the keys that move through a list, for the pages that
// show one.
func NavigationHelp(k *keymap.KeyMap) HelpSection {
	return HelpSection{Title: "Navigation", Keys: []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.HalfUp, k.HalfDown,
		k.Top, k.Bottom, key.NewBinding(key.WithKeys("wheel"), key.WithHelp("wheel", "scroll · click selects"))}}
}
