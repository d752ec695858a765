package topic

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// wide is the width from which the schema goes to a column of its own on the right.
const wide = 140

func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	if p.detail == nil {
		return
	}
	left := w
	if w >= wide {
		left = w * 3 / 5
	}
	// Heights: two summary lines, then subs and consumers (a header line each, a title line
	// each), the schema below them when narrow.
	body := h - 2
	nSubs, nCons := max(1, len(p.detail.Subscriptions)), max(1, p.cons.Len())
	subsH := min(nSubs+1, max(2, body/4))
	consH := min(nCons+1, max(2, body/3))
	if w >= wide {
		subsH = min(nSubs+1, body/2-1)
		consH = body - subsH - 2
	}
	p.subs.SetSize(left, subsH)
	p.cons.SetSize(left, consH)
}

func (p *Page) View() string {
	st := p.c.Styles
	name := naming.ShortName(p.topic, "")
	head := st.Title.Render(name)
	if k := p.kind(); k != data.KindTopic {
		head += " " + st.Kind(k).Render("["+k.String()+"]")
	}
	if p.detail == nil || p.gone() {
		if p.loadErr != nil {
			return head + "\n" + common.ErrorState(st, common.Subject{Topic: p.topic}, p.loadErr, p.w, p.h-1)
		}
		return common.Lines(head+"\n"+st.Subtle.Render("loading…"), p.w, p.h)
	}
	d := p.detail
	if d.Partitions > 0 {
		head += st.Subtle.Render(" · " + common.Plural(d.Partitions, "partition"))
	}
	s := d.Stats
	stats := fmt.Sprintf("in %s/s · out %s/s · backlog %s · storage %s · %s · %s",
		common.Rate(s.RateIn), common.Rate(s.RateOut), data.Backlog{N: s.Backlog, EntriesOnly: s.BacklogEntriesOnly}.Cell(0), common.Bytes(s.Storage),
		common.Plural(s.Producers, "producer"), common.Plural(s.Consumers, "consumer"))
	lines := []string{head, st.Text.Render(common.Trunc(stats, p.w))}

	left := []string{p.paneTitle(paneSubs, fmt.Sprintf("Subscriptions (%d)", len(d.Subscriptions)))}
	if len(d.Subscriptions) == 0 {
		left = append(left, st.Subtle.Render("no subscriptions"))
	} else {
		left = append(left, p.subs.View())
	}
	consTitle := fmt.Sprintf("Consumers (%d)", p.cons.Len())
	if !d.SchemaTypesReported {
		consTitle += st.Subtle.Render(" · schema types " + NotReported)
	}
	left = append(left, p.paneTitle(paneConsumers, consTitle))
	if p.cons.Len() == 0 {
		left = append(left, st.Subtle.Render("no consumers"))
	} else {
		left = append(left, p.cons.View())
	}
	leftS := strings.Join(left, "\n")
	used := lipgloss.Height(leftS)
	if p.w >= wide {
		lw := p.w * 3 / 5
		right := p.schemaView(p.w-lw-2, p.h-2)
		lines = append(lines, lipgloss.JoinHorizontal(lipgloss.Top, common.Lines(leftS, lw, p.h-2), "  ", right))
	} else {
		lines = append(lines, leftS, p.schemaView(p.w, max(2, p.h-2-used)))
	}
	return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
}

func (p *Page) paneTitle(pane int, title string) string {
	st := p.c.Styles
	if p.focus == pane {
		return st.Title.Render("▌" + title)
	}
	return st.ColHeader.Render(" " + title)
}

// schemaView is the schema pane: a title and as many lines of the definition as fit.
func (p *Page) schemaView(w, h int) string {
	st := p.c.Styles
	title := "Schema"
	switch {
	case !p.schemaLoaded:
		title += " · loading"
	case p.schema != nil:
		title += fmt.Sprintf(" · %s · version %d", p.schema.Type, p.schema.Version)
	}
	out := []string{p.paneTitle(paneSchema, title)}
	lines := p.schemaLines
	if p.schemaOff < len(lines) {
		lines = lines[p.schemaOff:]
	}
	for i, l := range lines {
		if i >= h-1 {
			break
		}
		out = append(out, st.Text.Render(common.Trunc(" "+l, w)))
	}
	if rest := len(lines) - (h - 1); rest > 0 && h > 2 {
		out[len(out)-1] = st.Subtle.Render(fmt.Sprintf(" … %d more lines (tab to the schema, ↓ scrolls)", rest+1))
	}
	return common.Lines(strings.Join(out, "\n"), w, h)
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.detail == nil || p.gone() {
		return []key.Binding{withDesc(k.Refresh, "try again")}
	}
	if p.kind() == data.KindDLQ {
		return []key.Binding{withDesc(k.Enter, "peek"), k.DeadLetters, k.Flow, k.Tail, k.Produce}
	}
	return []key.Binding{withDesc(k.Enter, "peek"), k.Tail, k.Produce, k.Flow, k.NextPane}
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	return []common.HelpSection{{Title: "Topic", Keys: []key.Binding{
		withDesc(k.Enter, "peek the subscription"), withDesc(k.Messages, "peek the subscription"), withDesc(k.Tail, "tail the topic"),
		withDesc(k.Produce, "produce to the topic"), withDesc(k.Flow, "retry → DLQ flow of the subscription"),
		withDesc(k.DeadLetters, "dead letters (of a DLQ, or the subscription's DLQ)"),
		withDesc(k.NextPane, "next pane: subscriptions, consumers, schema"), withDesc(k.PrevField, "previous pane"),
		withDesc(k.Back, "back")}},
		common.NavigationHelp(k)}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
