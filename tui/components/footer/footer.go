// Package footer renders the context-sensitive key hints at the bottom of the screen: the keys
// of the active page, then the global ones. The page's own keys come first and keep their
// place; when the line is too narrow for all, the global keys (back, command, quit) go first,
// then the page's last ones — all but the help key, which lists everything and then reads
// "? more", so that a key left out is never a key nobody is told about.
package footer

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/tui/common"
)

// View renders page and global bindings on one line of width cells. The global binding whose
// help reads helpKey ("?", or "f1" while letters type) is the help key: it is the last to go,
// and says "more" once anything else went.
func View(c *common.Common, page, global []key.Binding, helpKey string, width int) string {
	st := c.Styles
	sep := st.Subtle.Render(" · ")
	shown := func(bs []key.Binding) []key.Binding {
		return slices.DeleteFunc(slices.Clone(bs), func(k key.Binding) bool { return !k.Enabled() || k.Help().Key == "" })
	}
	widthOf := func(k key.Binding) int { h := k.Help(); return ansi.StringWidth(h.Key) + 1 + ansi.StringWidth(h.Desc) }
	lineWidth := func(bs []key.Binding) int {
		w := 0
		for i, k := range bs {
			if i > 0 {
				w += 3
			}
			w += widthOf(k)
		}
		return w
	}
	page, global = shown(page), shown(global)
	shownBefore := len(page) + len(global)
	// Drop global keys, the help key last, until the page's keys fit beside them.
	for lineWidth(append(slices.Clone(page), global...)) > width {
		i := slices.IndexFunc(global, func(k key.Binding) bool { return k.Help().Key != helpKey })
		if i < 0 {
			break // only the help key is left
		}
		global = slices.Delete(global, i, i+1)
	}
	all := append(slices.Clone(page), global...)
	// Still too wide: the page's last keys go, the help key staying.
	for lineWidth(all) > width && len(all) > 1 {
		i := len(page) - 1
		if i < 0 {
			break
		}
		page = page[:i]
		all = append(slices.Clone(page), global...)
	}
	if dropped := shownBefore - len(all); dropped > 0 {
		for i, k := range all {
			if k.Help().Key == helpKey {
				all[i].SetHelp(helpKey, "more")
			}
		}
	}
	parts := make([]string, 0, len(all))
	for _, k := range all {
		h := k.Help()
		parts = append(parts, st.Key.Render(h.Key)+" "+st.KeyDesc.Render(h.Desc))
	}
	return common.Pad(strings.Join(parts, sep), width, false)
}
