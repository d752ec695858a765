// Package waiting is the screen a palette command opens while the cluster does not answer: a
// command such as ":flow orders billing" names its topic by a short name, which only the
// cluster can resolve. The screen says what it waits for, asks again at each refresh (and on
// ctrl+r), and once the cluster answers hands the resolved name to the app, which opens the
// command's screen in its place; nothing typed is dropped. A name the cluster does not know
// turns it into the not-found page.
package waiting

import (
	"context"
	"errors"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// ResolvedMsg says the cluster answered for the page's name: Topic is the topic it names, or
// Err why it names none (a *naming.NameError: none or several match).
type ResolvedMsg struct {
	common.Fresh
	Page  *Page
	Topic string
	Err   error
}

// Page is the waiting screen.
type Page struct {
	c       *common.Common
	line    string // the command as typed, without the colon
	name    string // the topic name to resolve
	err     error  // why the last try failed: the cluster unreachable, or the name unknown
	loading bool
	w, h    int
}

// New returns the screen that waits to resolve name for the command line, after a first try
// failed with err.
func New(c *common.Common, line, name string, err error) *Page {
	return &Page{c: c, line: line, name: name, err: err}
}

// Name is the topic name the page waits to resolve.
func (p *Page) Name() string { return p.name }

func (p *Page) Init() tea.Cmd { return nil } // the first try failed just now: the next refresh tries again

func (p *Page) resolve() tea.Cmd {
	p.loading = true
	name := p.name
	return common.LoadFor(p.c, p, "topic "+name, func(ctx context.Context, s data.Source) (ResolvedMsg, error) {
		t, err := data.Resolve(ctx, s, name)
		var ne *naming.NameError
		if errors.As(err, &ne) {
			return ResolvedMsg{Page: p, Err: err}, nil
		}
		return ResolvedMsg{Page: p, Topic: t}, err
	}, func(m ResolvedMsg) tea.Msg { return m })
}

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	switch msg := msg.(type) {
	case ResolvedMsg:
		if msg.Page == p {
			p.loading, p.err = false, msg.Err
		}
	case common.ErrorMsg:
		if msg.Owner == p {
			p.loading, p.err = false, msg.Err
		}
	case common.RefreshMsg:
		if !p.loading || msg.Forced {
			return p, p.resolve()
		}
	case tea.KeyPressMsg:
		if key.Matches(msg, p.c.Keys.Back) {
			return p, common.Back
		}
	}
	return p, nil
}

func (p *Page) View() string {
	st := p.c.Styles
	head := st.Title.Render(":" + p.line)
	var ne *naming.NameError
	if errors.As(p.err, &ne) {
		// The cluster answered: the name is unknown (or names several topics).
		lines := []string{head,
			st.Paint(&st.Error, common.Trunc("✗ "+ne.Error(), p.w)),
			st.Paint(&st.Text, common.Trunc("  ctrl+r looks again; esc goes back.", p.w))}
		return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
	}
	lines := []string{head,
		st.Paint(&st.Warn, common.Trunc("Waiting for the cluster: this opens once it answers.", p.w)),
		st.Paint(&st.Text, common.Trunc("  It is asked again at every refresh; ctrl+r asks now; esc gives up.", p.w))}
	if p.err != nil {
		lines = append(lines, st.Paint(&st.Subtle, common.Trunc("  (last answer: "+p.err.Error()+")", p.w)))
	}
	return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
}

func (p *Page) SetSize(w, h int) { p.w, p.h = w, h }
func (p *Page) Title() string    { return ":" + p.line }
func (p *Page) Capturing() bool  { return false }
func (p *Page) Busy() bool       { return p.loading }
func (p *Page) Close()           {}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	return []key.Binding{withDesc(k.Refresh, "ask now")}
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	return []common.HelpSection{{Title: "Waiting for the cluster", Keys: []key.Binding{withDesc(k.Back, "give up, back")}}}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
