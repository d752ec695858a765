// Package help is the "?" overlay: every key of the current screen, then the general keys, in
// titled sections (as k9s's help). It scrolls (j/k, pgup/pgdn, ctrl+u/ctrl+d, g/G) and
// searches (/), so every key stays reachable however small the terminal.
package help

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/keymap"
)

// Model is the overlay: what it lists, where it is scrolled to, and the search typed after /.
type Model struct {
	c        *common.Common
	title    string
	sections []common.HelpSection
	off      int
	query    string
	in       input.Model
	typing   bool // the search prompt has focus
	w, h     int
}

// New returns a closed overlay.
func New(c *common.Common) Model {
	return Model{c: c, in: input.New(c, "/", "search keys and what they do")}
}

// Open shows sections under title, scrolled to the top, with no search.
func (m *Model) Open(title string, sections []common.HelpSection) {
	m.title, m.sections = title, sections
	m.off, m.query, m.typing = 0, "", false
	m.in.SetValue("")
	m.in.Blur()
}

// SetSize gives the overlay the page area.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
}

// Typing reports whether the search prompt has focus: every key then types into it.
func (m Model) Typing() bool { return m.typing }

// Query is the search in effect ("" none).
func (m Model) Query() string { return m.query }

// Update handles a key; closed is true when the key closes the overlay.
func (m Model) Update(msg tea.KeyPressMsg) (out Model, closed bool) {
	k := m.c.Keys
	if m.typing {
		switch msg.String() {
		case "esc":
			m.typing, m.query = false, ""
			m.in.SetValue("")
			m.in.Blur()
		case "enter":
			m.typing = false
			m.in.Blur()
		default:
			m.in, _ = m.in.Update(msg)
			m.query = strings.TrimSpace(m.in.Value())
			m.off = 0
		}
		return m, false
	}
	switch {
	case key.Matches(msg, k.Back):
		if m.query != "" { // esc first clears the search, then closes
			m.query = ""
			m.in.SetValue("")
			m.off = 0
			return m, false
		}
		return m, true
	case key.Matches(msg, k.Help, k.Quit):
		return m, true
	case key.Matches(msg, k.Filter):
		m.typing = true
		m.in.Restyle()
		m.in.SetValue(m.query)
		m.in.Focus()
	case key.Matches(msg, k.Up):
		m.scroll(-1)
	case key.Matches(msg, k.Down):
		m.scroll(1)
	case key.Matches(msg, k.PageUp):
		m.scroll(-m.visible())
	case key.Matches(msg, k.PageDown):
		m.scroll(m.visible())
	case key.Matches(msg, k.HalfUp):
		m.scroll(-max(1, m.visible()/2))
	case key.Matches(msg, k.HalfDown):
		m.scroll(max(1, m.visible()/2))
	case key.Matches(msg, k.Top):
		m.off = 0
	case key.Matches(msg, k.Bottom):
		m.scroll(1 << 20)
	}
	return m, false
}

// Wheel scrolls by d lines (the mouse wheel).
func (m *Model) Wheel(d int) { m.scroll(d) }

func (m *Model) scroll(d int) {
	m.off = max(0, min(m.off+d, len(m.body())-m.visible()))
}

// boxChrome is what the box takes besides its body: two borders, the title and the line under
// the body (where the position and the search prompt go).
const boxChrome = 4

// visible is how many body lines the box shows.
func (m Model) visible() int { return max(1, m.h-boxChrome) }

// body is the listing as lines: the sections that hold a match of the search, in as many
// columns as fit.
func (m Model) body() []string {
	st := m.c.Styles
	q := strings.ToLower(m.query)
	var cols []string
	for _, s := range m.sections {
		keyW := 0 // each section its own: one long list of keys does not widen them all
		for _, b := range s.Keys {
			keyW = max(keyW, ansi.StringWidth(keymap.Names(b)))
		}
		var lines []string
		for _, b := range s.Keys {
			if !b.Enabled() {
				continue
			}
			names, desc := keymap.Names(b), b.Help().Desc
			if q != "" && !strings.Contains(strings.ToLower(names+" "+desc), q) {
				continue
			}
			lines = append(lines, st.Key.Render(common.Pad(names, keyW, false))+" "+st.Text.Render(desc))
		}
		if len(lines) == 0 {
			continue
		}
		cols = append(cols, st.Title.Render(strings.ToUpper(s.Title))+"\n"+strings.Join(lines, "\n"))
	}
	if len(cols) == 0 {
		return []string{st.Subtle.Render("no key matches /" + m.query)}
	}
	return strings.Split(arrange(cols, max(10, m.w-4)), "\n")
}

// View renders the overlay centred in the page area.
func (m Model) View() string {
	st := m.c.Styles
	body := m.body()
	vis := m.visible()
	off := max(0, min(m.off, len(body)-vis))
	end := min(len(body), off+vis)
	shown := body[off:end]
	inner := max(10, m.w-4) // the box's borders and padding
	width := 0
	for _, l := range body {
		width = max(width, ansi.StringWidth(l))
	}
	head := st.Title.Render(m.title) + "  " + st.Subtle.Render("esc or ? closes")
	width = min(inner, max(width, ansi.StringWidth(head), 40))
	var foot string
	switch {
	case m.typing:
		in := m.in
		in.SetWidth(width)
		foot = in.View()
	default:
		pos := fmt.Sprintf("%d–%d of %d", off+1, end, len(body))
		if len(body) <= vis {
			pos = "all shown"
		}
		hint := " · j/k pgup/pgdn g/G scroll · / search"
		if m.query != "" {
			hint = " · /" + m.query + " · esc clears the search"
		}
		foot = st.Subtle.Render(pos + hint)
	}
	lines := []string{common.Trunc(head, width)}
	for _, l := range shown {
		lines = append(lines, common.Trunc(l, width))
	}
	for len(lines) < vis+1 && len(body) > vis { // a scrolled box keeps its height
		lines = append(lines, "")
	}
	lines = append(lines, common.Trunc(foot, width))
	box := st.Border.Border(lipgloss.RoundedBorder()).Padding(0, 1).Width(width + 4).Render(strings.Join(lines, "\n"))
	return lipgloss.Place(m.w, m.h, lipgloss.Center, lipgloss.Center, box)
}

// arrange puts the sections in as many columns as fit in w cells, each next section going to
// the shortest column; a single column when none fits side by side.
func arrange(sections []string, w int) string {
	for n := len(sections); n >= 1; n-- {
		cols := make([][]string, n)
		heights := make([]int, n)
		for _, s := range sections {
			k := 0
			for i := range heights {
				if heights[i] < heights[k] {
					k = i
				}
			}
			cols[k] = append(cols[k], s)
			heights[k] += lipgloss.Height(s) + 1
		}
		var rendered []string
		for _, c := range cols {
			rendered = append(rendered, strings.Join(c, "\n\n"))
		}
		body := lipgloss.JoinHorizontal(lipgloss.Top, intersperse(rendered, "   ")...)
		if lipgloss.Width(body) <= w || n == 1 {
			return body
		}
	}
	return ""
}

func intersperse(xs []string, sep string) []string {
	var out []string
	for i, x := range xs {
		if i > 0 {
			out = append(out, sep)
		}
		out = append(out, x)
	}
	return out
}
