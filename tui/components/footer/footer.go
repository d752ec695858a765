// Package footer renders the context-sensitive key hints at the bottom of the screen: the keys
// of the active page first, then the global ones, as many as fit.
package footer

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/tui/common"
)

// View renders bindings on one line of width cells.
func View(c *common.Common, bindings []key.Binding, width int) string {
	st := c.Styles
	sep := st.Subtle.Render(" · ")
	var b strings.Builder
	used := 0
	for _, k := range bindings {
		if !k.Enabled() || k.Help().Key == "" {
			continue
		}
		h := k.Help()
		w := ansi.StringWidth(h.Key) + 1 + ansi.StringWidth(h.Desc)
		extra := 0
		if used > 0 {
			extra = 3
		}
		if used+extra+w > width {
			break
		}
		if used > 0 {
			b.WriteString(sep)
		}
		b.WriteString(st.Key.Render(h.Key) + " " + st.KeyDesc.Render(h.Desc))
		used += extra + w
	}
	return common.Pad(b.String(), width, false)
}
