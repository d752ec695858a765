// Package input is a one-line prompt (the ":" palette, the "/" filter, a file name): a bubbles
// text input with a fixed, non-blinking cursor, so it costs no timer while idle and renders
// the same in every golden run.
package input

import (
	"slices"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
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
	s.Focused.Placeholder = st.Subtle.Italic(true)
	s.Blurred.Placeholder = st.Subtle.Italic(true)
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

// EditingHelp is the help section of the keys that edit a field (bubbles' text input, and with
// multiline its text area), for the screens whose fields take them; taken are keys the screen
// binds to something else before its fields see them.
func EditingHelp(multiline bool, taken ...string) common.HelpSection {
	b := func(desc string, keys ...string) key.Binding {
		keys = slices.DeleteFunc(keys, func(k string) bool { return slices.Contains(taken, k) })
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], desc))
	}
	keys := []key.Binding{
		b("a character back, forward", "left", "right", "ctrl+b", "ctrl+f"),
		b("a word back, forward", "alt+left", "alt+right", "alt+b", "alt+f"),
		b("start, end of the line", "home", "end", "ctrl+a", "ctrl+e"),
		b("delete a character back, forward", "backspace", "delete", "ctrl+h", "ctrl+d"),
		b("delete a word back", "ctrl+w", "alt+backspace"),
		b("delete to the start, the end of the line", "ctrl+u", "ctrl+k"),
		b("paste", "ctrl+v"),
	}
	if multiline {
		keys = append(keys,
			b("a new line (in a text area)", "enter", "ctrl+m"),
			b("line up, down (in a text area)", "up", "down", "ctrl+p", "ctrl+n"),
			b("swap the characters before the cursor", "ctrl+t"),
			b("select everything", "ctrl+g"))
	}
	return common.HelpSection{Title: "Editing a field", Keys: keys}
}

// NewArea returns a blurred multi-line field (bubbles' text area) in the theme's styles: text
// in the text colour, the placeholder dimmed and slanted so that it never reads as content, no
// line numbers, a non-blinking cursor.
func NewArea(c *common.Common, placeholder string) textarea.Model {
	st := c.Styles
	a := textarea.New()
	a.Placeholder = placeholder
	a.ShowLineNumbers = false
	a.Prompt = "│ "
	s := textarea.DefaultStyles(st.Theme.Dark)
	for _, ss := range []*textarea.StyleState{&s.Focused, &s.Blurred} {
		ss.Base, ss.Text, ss.CursorLine = st.Text, st.Text, st.Text
		ss.Placeholder = st.Subtle.Italic(true)
		ss.EndOfBuffer, ss.LineNumber, ss.CursorLineNumber = st.Subtle, st.Subtle, st.Subtle
		ss.Prompt = st.Subtle
	}
	s.Focused.Prompt = st.Accent
	s.Cursor.Blink = false
	a.SetStyles(s)
	return a
}
