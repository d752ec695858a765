package resend

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
)

func (p *Page) View() string {
	st := p.c.Styles
	head := st.Title.Render("Resend "+p.letter.ID) + st.Subtle.Render(" of "+termtext.Line(naming.ShortName(p.dlq, ""))+" · acknowledged on "+termtext.Line(p.sub)+" once the new message is stored")
	lines := []string{common.Trunc(head, p.w), ""}
	label := func(f int, name string) string {
		if f == p.focus && p.stage == Editing {
			return st.Accent.Render(fmt.Sprintf("›%-11s", name))
		}
		return st.Subtle.Render(fmt.Sprintf(" %-11s", name))
	}
	lines = append(lines,
		common.Trunc(label(fieldTo, "to")+" "+p.to.View(), p.w),
		common.Trunc(label(fieldKey, "key")+" "+p.key.View(), p.w),
		label(fieldProps, "properties"), p.props.View(),
		label(fieldPayload, "payload"), p.payload.View(), "")
	wrap := func(s string) []string { return strings.Split(lipgloss.NewStyle().Width(max(10, p.w)).Render(s), "\n") }
	paint := func(style *lipgloss.Style, ls []string) {
		for _, l := range ls {
			lines = append(lines, st.Paint(style, l))
		}
	}
	switch p.stage {
	case Editing:
		if p.problem != "" {
			paint(&st.Error, wrap("✗ "+termtext.Line(p.problem)))
		} else {
			paint(&st.Subtle, wrap(p.quotedHint()+"ctrl+s sends (asks first) · ctrl+e edits the payload in $VISUAL/$EDITOR · tab next field · esc leaves, nothing sent"))
		}
	case Confirming:
		_, to, _ := p.edit()
		paint(&st.Warn, wrap(fmt.Sprintf("Send this to %s, then acknowledge %s on %s? The new message carries REPLAYED_FROM=%s.  y yes · n no",
			termtext.Line(naming.ShortName(to, "")), p.letter.ID, termtext.Line(p.sub), p.letter.ID)))
	case Sending:
		paint(&st.Accent, []string{"sending…"})
	case Sent:
		_, to, _ := p.edit()
		paint(&st.OK, wrap(fmt.Sprintf("✓ sent to %s, and %s acknowledged on %s · recorded in the history · esc back",
			termtext.Line(naming.ShortName(to, "")), p.letter.ID, termtext.Line(p.sub))))
	case Failed:
		paint(&st.Error, wrap("✗ "+termtext.Line(p.problem)+" · esc back"))
	}
	return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	switch p.stage {
	case Confirming:
		return []key.Binding{keyYes, keyNo}
	case Editing:
		return []key.Binding{keySend, keyEdit, k.NextField, withDesc(k.Back, "back, nothing sent")}
	}
	return nil
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	return []common.HelpSection{{Title: "Resend", Keys: []key.Binding{withDesc(keySend, "send (asks first)"),
		withDesc(keyEdit, "edit the payload in $VISUAL or $EDITOR"), k.NextField, withDesc(k.PrevField, "previous field"),
		withDesc(keyYes, "yes, send it (when asked)"), withDesc(keyNo, "no, back to the form (when asked)"),
		withDesc(k.Back, "back, nothing sent")}}, input.EditingHelp(true, keyEdit.Keys()...)}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
