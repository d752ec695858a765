package messages

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/data"
)

// updatePrompt handles a key while a prompt is open: the filter (applied as it is typed),
// the export's file name, or the position to read from.
func (p *Page) updatePrompt(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		if p.prompt == promptFilter { // esc clears the filter
			p.setFilter("")
		}
		p.prompt = promptNone
		return nil
	case "enter":
		kind := p.prompt
		if kind == promptFilter && p.fltErr != nil {
			return nil // the mistake is on screen: the filter stays open
		}
		p.prompt = promptNone
		v := strings.TrimSpace(p.in.Value())
		switch kind {
		case promptFilter: // enter keeps what typing filtered
			return nil
		case promptFrom:
			from, err := data.ParseFrom(v, p.c.Clock.Now())
			if err != nil {
				p.prompt = promptFrom // stays open, the reason in the status line
				return status(err.Error())
			}
			return p.openAt(from)
		}
		if v == "" {
			return status("export cancelled: no file name")
		}
		return export(p.c.ExportDir, p.c.DataDir, v, p.selection())
	}
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	if p.prompt == promptFilter { // filters as it is typed
		p.setFilter(p.in.Value())
	}
	return cmd
}
