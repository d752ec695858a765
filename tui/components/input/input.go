// Package input is a one-line prompt (the ":" palette, the "/" filter, a file name): a bubbles
// text input with a fixed, non-blinking cursor, so it costs no timer while idle and renders
// the same in every golden run.
package input

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/tui/common"
)

// Model is a prompt line.
type Model struct {
	c  *common.Common
	ti textinput.Model
	w  int // the line's width, prompt included (0: unbounded)
}

// New returns a blurred prompt showing prompt before the text.
func New(c *common.Common, prompt, placeholder string) Model {
	ti := textinput.New()
	ti.Prompt = prompt
	ti.Placeholder = placeholder
	m := Model{c: c, ti: ti}
	m.Restyle()
	return m
}

// Restyle applies the current theme (after :theme).
func (m *Model) Restyle() {
	st := m.c.Styles
	s := textinput.DefaultStyles(m.c.Styles.Theme.Dark)
	s.Focused.Prompt = st.Accent
	s.Blurred.Prompt = st.Subtle
	s.Focused.Text = st.Text
	s.Blurred.Text = st.Text
	s.Focused.Placeholder = st.Subtle
	s.Blurred.Placeholder = st.Subtle
	s.Focused.Suggestion = st.Subtle
	s.Cursor.Blink = false
	m.ti.SetStyles(s)
}

// SetPrompt changes what the line shows before the text, and when empty.
func (m *Model) SetPrompt(prompt, placeholder string) {
	m.ti.Prompt, m.ti.Placeholder = prompt, placeholder
}

func (m *Model) Focus()                    { _ = m.ti.Focus() }
func (m *Model) Blur()                     { m.ti.Blur() }
func (m Model) Focused() bool              { return m.ti.Focused() }
func (m Model) Value() string              { return m.ti.Value() }
func (m *Model) SetValue(v string)         { m.ti.SetValue(v); m.ti.CursorEnd() }
func (m *Model) SetWidth(w int)            { m.w = w; m.ti.SetWidth(max(1, w-len([]rune(m.ti.Prompt))-1)) }
func (m *Model) SetSuggestions(s []string) { m.ti.ShowSuggestions = len(s) > 0; m.ti.SetSuggestions(s) }

// Update hands msg to the text input.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.ti, cmd = m.ti.Update(msg)
	return m, cmd
}

// View is the line, cut to its width: the text input pads to its width without counting a
// suggestion's grey completion, which would push the line over.
func (m Model) View() string {
	if m.w <= 0 {
		return m.ti.View()
	}
	return ansi.Truncate(m.ti.View(), m.w, "")
}
