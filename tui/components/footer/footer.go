// Package footer renders the context-sensitive key hints at the bottom of the screen: the keys
// of the active page, then the global ones. The global keys (help, command, quit) always keep
// their place; the page's keys fill the room left, in order.
package footer

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/tui/common"
)

// View renders page and global bindings on one line of width cells.
func View(c *common.Common, page, global []key.Binding, width int) string {
	st := c.Styles
	sep := st.Subtle.Render(" · ")
	render := func(bs []key.Binding, room int) (string, int) {
		var parts []string
		used := 0
		for _, k := range bs {
			if !k.Enabled() || k.Help().Key == "" {
				continue
			}
			h := k.Help()
			w := ansi.StringWidth(h.Key) + 1 + ansi.StringWidth(h.Desc)
			if used > 0 {
				w += 3
			}
			if used+w > room {
				break
			}
			parts = append(parts, st.Key.Render(h.Key)+" "+st.KeyDesc.Render(h.Desc))
			used += w
		}
		return strings.Join(parts, sep), used
	}
	g, gw := render(global, width)
	p, pw := render(page, width-gw-3)
	out := g
	if pw > 0 {
		out = p
		if gw > 0 {
			out += sep + g
		}
	}
	return common.Pad(out, width, false)
}
