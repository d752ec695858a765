package dlq

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// detailLines and historyLines are the panes under the table.
const detailLines = 2

func (p *Page) historyLines() int { return 1 + max(1, min(len(p.history), 3)) }

func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	p.in.SetWidth(w)
	if p.indexMode {
		p.tbl.SetSize(w, max(1, h-1))
		return
	}
	p.tbl.SetSize(w, max(2, h-3-detailLines-p.historyLines()))
}

func (p *Page) View() string {
	st := p.c.Styles
	if p.indexMode {
		title := st.Title.Render("Dead letters") + st.Subtle.Render(fmt.Sprintf(" · %d DLQ topics", len(p.index)))
		if len(p.index) == 0 && !p.loading {
			return common.Lines(title+"\n"+st.Subtle.Render("no DLQ topics: nothing has died yet"), p.w, p.h)
		}
		return common.Lines(title+"\n"+p.tbl.View(), p.w, p.h)
	}
	head := st.Title.Render("Dead letters " + data.ShortName(p.topic, ""))
	if p.detail == nil {
		return common.Lines(head+"\n"+st.Subtle.Render("loading…"), p.w, p.h)
	}
	p.SetSize(p.w, p.h)
	var sub string
	var backlog int64
	for _, s := range p.detail.Subscriptions {
		if s.Name == p.sub {
			backlog = s.Backlog
		}
	}
	if p.sub != "" {
		sub = fmt.Sprintf(" · via %s · backlog %s", p.sub, common.Count(backlog))
		if n := len(p.detail.Subscriptions); n > 1 {
			sub += fmt.Sprintf(" (s: %d subscriptions)", n)
		}
	} else {
		sub = " · no subscription"
	}
	if p.origin != "" {
		sub += " · from " + data.ShortName(p.origin, data.ParseTopic(p.topic).NS()) + " / " + p.originSub
	}
	lines := []string{common.Trunc(head+st.Subtle.Render(sub), p.w), p.healthLine(), p.selectionLine()}
	switch {
	case p.sub == "":
		lines = append(lines, st.Subtle.Render("no subscription to peek through: nothing can be read or replayed"))
		lines = append(lines, make([]string, max(0, p.h-len(lines)-p.historyLines()))...)
	case len(p.msgs) == 0 && !p.loading:
		lines = append(lines, st.Subtle.Render("the DLQ's backlog is empty"))
		lines = append(lines, make([]string, max(0, p.h-len(lines)-p.historyLines()))...)
	default:
		lines = append(lines, p.tbl.View())
		lines = append(lines, p.detailView()...)
	}
	lines = append(lines, p.historyView()...)
	return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
}

func (p *Page) healthLine() string {
	st := p.c.Styles
	in := data.HealthInput{DLQ: p.detail, Backlogs: p.backlogs, RedeliverBefore: -1}
	if p.retention != nil {
		in.Retention, in.RetentionKnown = *p.retention, true
	}
	if n := len(p.redeliver); n > 0 {
		in.Redeliver = p.redeliver[n-1]
		if n > 1 {
			in.RedeliverBefore = p.redeliver[n-2]
		}
	}
	h := data.JudgeHealth(in)
	if len(h.Warnings) > 0 {
		return st.Paint(&st.Warn, common.Trunc("⚠ "+strings.Join(h.Warnings, " · "), p.w))
	}
	return st.Paint(&st.OK, common.Trunc("✓ "+h.OK, p.w))
}

func (p *Page) selectionLine() string {
	st := p.c.Styles
	if p.prompt {
		return p.in.View()
	}
	var parts []string
	if len(p.msgs) > 0 {
		parts = append(parts, fmt.Sprintf("positions %d–%d", p.from, p.from+len(p.msgs)-1))
	}
	if p.filter != "" {
		kind := "search (replays what it matches on this page)"
		if p.expr != nil {
			kind = "filter (a replay applies it to the whole DLQ)"
		}
		parts = append(parts, fmt.Sprintf("%d shown · /%s · %s", len(p.shown), p.filter, kind))
	}
	if n := len(p.marked); n > 0 {
		parts = append(parts, fmt.Sprintf("%d marked", n))
	}
	if len(parts) == 0 {
		return ""
	}
	return st.Paint(&st.Subtle, common.Trunc(strings.Join(parts, " · "), p.w))
}

// detailView is the selected dead letter's reasons and payload, one line each.
func (p *Page) detailView() []string {
	st := p.c.Styles
	d := p.current()
	if d == nil {
		return make([]string, detailLines)
	}
	r := reasons(*d)
	if r == "" {
		r = "no reason property (keys containing reason, error or exception)"
	}
	payload := strings.Join(strings.Fields(string(d.Payload)), " ")
	if !isText(d.Payload) {
		payload = fmt.Sprintf("<%d bytes binary>", len(d.Payload))
	}
	return []string{
		st.Paint(&st.DLQ, common.Trunc(" "+r, p.w)),
		st.Paint(&st.Subtle, common.Trunc(fmt.Sprintf(" %s · %s", d.ID, payload), p.w)),
	}
}

func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

func (p *Page) historyView() []string {
	st := p.c.Styles
	out := []string{st.Paint(&st.ColHeader, "Replay history")}
	if len(p.history) == 0 {
		return append(out, st.Paint(&st.Subtle, " no replays of this DLQ yet"))
	}
	for i, e := range p.history {
		if i >= p.historyLines()-1 {
			break
		}
		line := fmt.Sprintf(" %s  %-10s moved %d · skipped %d · failed %d · %s · %s",
			e.When.Local().Format("2006-01-02 15:04"), e.Result, e.Moved, e.Skipped, e.Failed, e.Selection, by(e))
		style := &st.Text
		if e.Result != "complete" {
			style = &st.Warn
		}
		out = append(out, st.Paint(style, common.Trunc(line, p.w)))
	}
	return out
}

func by(e data.HistoryEntry) string {
	if e.By == "" {
		return "via " + e.Subscription
	}
	return "via " + e.Subscription + " (" + e.By + ")"
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.prompt {
		return []key.Binding{withDesc(k.Enter, "apply"), withDesc(k.Back, "cancel")}
	}
	if p.indexMode {
		return []key.Binding{withDesc(k.Enter, "open")}
	}
	return []key.Binding{keyMark, k.Filter, keyReason, keyReplay, keyFlow}
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	return []common.HelpSection{{Title: "Dead letters", Keys: []key.Binding{
		keyMark, keyMarkAll, withDesc(k.Filter, "filter: expression or text"), keyReason,
		withDesc(keyReplay, "replay marked / filtered / all"), keyFlow, withDesc(k.Enter, "open in messages"),
		keyNextPage, keyFirst, keySub, withDesc(k.Back, "clear marks+filter, back")}}}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
