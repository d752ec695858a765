// Package help is the "?" overlay: every key of the current screen, then the general and
// navigation keys, in titled sections (as k9s's help).
package help

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/tui/common"
)

// View renders the overlay for sections, centred in a w×h area.
func View(c *common.Common, title string, sections []common.HelpSection, w, h int) string {
	st := c.Styles
	keyW := 0
	for _, s := range sections {
		for _, k := range s.Keys {
			keyW = max(keyW, ansi.StringWidth(k.Help().Key))
		}
	}
	var cols []string
	for _, s := range sections {
		var b strings.Builder
		b.WriteString(st.Title.Render(strings.ToUpper(s.Title)))
		for _, k := range s.Keys {
			if !k.Enabled() {
				continue
			}
			b.WriteString("\n" + st.Key.Render(common.Pad(k.Help().Key, keyW, false)) + " " + st.Text.Render(k.Help().Desc))
		}
		cols = append(cols, b.String())
	}
	body := arrange(cols, w-4)
	head := st.Title.Render(title) + "  " + st.Subtle.Render("esc or ? closes")
	box := st.Border.Border(lipgloss.RoundedBorder()).Padding(0, 1).Render(head + "\n\n" + body)
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box)
}

// arrange puts the sections in as many columns as fit in w cells, each next section going to
// the shortest column, so the overlay stays within 80×24 on the busiest screen.
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
