package common

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/themes"
)

// Styles are the theme's palette turned into lip gloss styles, by use. Every colour on screen
// comes from one of these.
type Styles struct {
	Theme themes.Theme

	App         lipgloss.Style // the whole screen (background)
	Header      lipgloss.Style
	Brand       lipgloss.Style
	Title       lipgloss.Style
	Text        lipgloss.Style
	Subtle      lipgloss.Style
	Accent      lipgloss.Style
	OK          lipgloss.Style
	Warn        lipgloss.Style
	Error       lipgloss.Style
	DLQ         lipgloss.Style
	Retry       lipgloss.Style
	Selected    lipgloss.Style // the cursor row of the focused list
	SelectedDim lipgloss.Style // the cursor row of a list without focus
	Marked      lipgloss.Style
	ColHeader   lipgloss.Style
	Match       lipgloss.Style
	Border      lipgloss.Style // boxes: overlays, panes
	FocusBorder lipgloss.Style
	Key         lipgloss.Style // key names in the footer and help
	KeyDesc     lipgloss.Style

	paint map[*lipgloss.Style][2]string
}

// Paint styles s with *st (colours and attributes only: no padding, width or borders) by
// wrapping it in the style's escape sequences, computed once per style. It is what the table
// uses for its hundreds of cells a frame, where lipgloss's full Render (line splitting,
// measuring, margins) would cost most of the frame.
func (s *Styles) Paint(st *lipgloss.Style, text string) string {
	if s.paint == nil {
		s.paint = map[*lipgloss.Style][2]string{}
	}
	pair, ok := s.paint[st]
	if !ok {
		r := st.Render("\x00")
		pre, post, found := strings.Cut(r, "\x00")
		if !found {
			return st.Render(text)
		}
		pair = [2]string{pre, post}
		s.paint[st] = pair
	}
	return pair[0] + text + pair[1]
}

// NewStyles builds the styles of a theme.
func NewStyles(t themes.Theme) *Styles {
	p := t.Palette
	c := themes.Color
	noColor := t.Palette == (themes.Palette{})
	s := &Styles{Theme: t}
	base := lipgloss.NewStyle().Foreground(c(p.Text))
	s.App = lipgloss.NewStyle().Background(c(p.Background)).Foreground(c(p.Text))
	s.Text = base
	s.Header = lipgloss.NewStyle().Foreground(c(p.Text))
	s.Brand = lipgloss.NewStyle().Foreground(c(p.Primary)).Bold(true)
	s.Title = lipgloss.NewStyle().Foreground(c(p.Primary)).Bold(true)
	s.Subtle = lipgloss.NewStyle().Foreground(c(p.Subtle))
	s.Accent = lipgloss.NewStyle().Foreground(c(p.Accent))
	s.OK = lipgloss.NewStyle().Foreground(c(p.OK))
	s.Warn = lipgloss.NewStyle().Foreground(c(p.Warn))
	s.Error = lipgloss.NewStyle().Foreground(c(p.Error)).Bold(true)
	s.DLQ = lipgloss.NewStyle().Foreground(c(p.DLQ)).Bold(true)
	s.Retry = lipgloss.NewStyle().Foreground(c(p.Retry)).Bold(true)
	s.Selected = lipgloss.NewStyle().Background(c(p.Selection)).Foreground(c(p.Primary)).Bold(true)
	s.SelectedDim = lipgloss.NewStyle().Background(c(p.Selection))
	s.Marked = lipgloss.NewStyle().Foreground(c(p.Accent)).Bold(true)
	s.ColHeader = lipgloss.NewStyle().Foreground(c(p.Subtle)).Bold(true)
	s.Match = lipgloss.NewStyle().Foreground(c(p.Accent)).Underline(true)
	s.Border = lipgloss.NewStyle().BorderForeground(c(p.Subtle))
	s.FocusBorder = lipgloss.NewStyle().BorderForeground(c(p.Primary))
	s.Key = lipgloss.NewStyle().Foreground(c(p.Accent)).Bold(true)
	s.KeyDesc = lipgloss.NewStyle().Foreground(c(p.Subtle))
	if noColor {
		// Without colour, selection is reverse video and emphasis is weight.
		s.Selected = lipgloss.NewStyle().Reverse(true)
		s.SelectedDim = lipgloss.NewStyle().Underline(true)
		s.Subtle = lipgloss.NewStyle().Faint(true)
		s.KeyDesc = s.Subtle
		s.ColHeader = lipgloss.NewStyle().Bold(true)
	}
	return s
}

// Kind styles a topic kind's badge.
func (s *Styles) Kind(k interface{ String() string }) *lipgloss.Style {
	switch k.String() {
	case "DLQ":
		return &s.DLQ
	case "RETRY":
		return &s.Retry
	}
	return &s.Text
}
