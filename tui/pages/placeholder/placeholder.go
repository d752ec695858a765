// Package placeholder stands in for the screens of part 2 (flow, dead letters, replay) so the
// navigation has their place from the start. It says plainly that the screen is not available
// yet; it shows no made-up data.
package placeholder

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
)

// Page is a screen that is not available yet.
type Page struct {
	c           *common.Common
	title, what string
	w, h        int
}

// New returns the placeholder for id.
func New(c *common.Common, id common.PageID, topic string) *Page {
	p := &Page{c: c}
	switch id {
	case common.PageFlow:
		p.title, p.what = "Flow", "the live retry → DLQ flow of a topic and subscription"
	case common.PageDLQ:
		p.title, p.what = "Dead letters", "browsing a DLQ through its initial subscription, with a health line"
	case common.PageReplay:
		p.title, p.what = "Replay", "previewing, running and cancelling a replay of dead letters"
	default:
		p.title, p.what = string(id), "this screen"
	}
	if topic != "" {
		p.title += " › " + topic
	}
	return p
}

func (p *Page) Init() tea.Cmd            { return nil }
func (p *Page) Title() string            { return p.title }
func (p *Page) SetSize(w, h int)         { p.w, p.h = w, h }
func (p *Page) Capturing() bool          { return false }
func (p *Page) Busy() bool               { return false }
func (p *Page) Close()                   {}
func (p *Page) ShortHelp() []key.Binding { return []key.Binding{p.c.Keys.Back} }
func (p *Page) FullHelp() []common.HelpSection {
	return []common.HelpSection{{Title: p.title, Keys: []key.Binding{p.c.Keys.Back}}}
}

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, p.c.Keys.Back) {
		return p, common.Back
	}
	return p, nil
}

func (p *Page) View() string {
	st := p.c.Styles
	text := st.Title.Render(p.title) + "\n\n" +
		st.Warn.Render("This screen is not available yet.") + "\n\n" +
		st.Text.Render("It will show "+p.what+".") + "\n" +
		st.Subtle.Render("esc goes back.")
	return common.Lines(lipgloss.Place(p.w, p.h, lipgloss.Center, lipgloss.Center, text), p.w, p.h)
}
