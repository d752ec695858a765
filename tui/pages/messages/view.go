package messages

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/table"
)

func itoa(i int) string { return strconv.Itoa(i) }

// wide is the width from which the detail pane goes to the right of the list.
const wide = 140

func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	listW, listH := w, max(3, (h-2)/2)
	if w >= wide {
		listW, listH = w/2, h-2
	}
	p.tbl.SetSize(listW, listH)
}

// refreshRows rebuilds the list's rows from the loaded messages.
func (p *Page) refreshRows() {
	st := p.c.Styles
	p.filterShown()
	rows := make([]table.Row, len(p.shown))
	for row, i := range p.shown {
		m := p.msgs[i]
		if m.Unreadable != "" {
			rows[row] = table.Row{Cells: []string{" ", itoa(m.Position), "-", "?", "-", "n/a", "-", "unreadable: " + m.Unreadable},
				Styles: []*lipgloss.Style{&st.Error, &st.Error, &st.Error, &st.Error, &st.Error, &st.Error, &st.Error, &st.Error}}
			continue
		}
		mark := " "
		if p.marked[m.ID] {
			mark = "●"
		}
		pos := itoa(i + 1)
		if m.Position > 0 {
			pos = itoa(m.Position)
		}
		redlv := "n/a"
		if m.RedeliveriesKnown {
			redlv = itoa(m.Redeliveries)
		}
		recons, ok := m.ReconsumeTimes()
		if !ok {
			recons = "-"
		}
		published := "-"
		if !m.PublishTime.IsZero() {
			published = m.PublishTime.In(time.UTC).Format("15:04:05")
		}
		prev := &st.Text
		if p.query != "" {
			prev = &st.Match
		}
		rc := &st.Subtle
		if ok {
			rc = &st.Retry
		}
		rows[row] = table.Row{
			Cells:  []string{mark, pos, published, m.Key, common.Bytes(int64(len(m.Payload))), redlv, recons, p.dec.preview(m.Payload)},
			Styles: []*lipgloss.Style{&st.Marked, &st.Subtle, &st.Subtle, &st.Accent, &st.Subtle, &st.Subtle, rc, prev},
		}
	}
	p.tbl.SetRows(rows)
}

func (p *Page) View() string {
	st := p.c.Styles
	lines := []string{p.titleLine()}
	var body string
	switch {
	case p.failed():
		// Nothing read, or what a peek or a reading showed is gone: the not-found page. A tail
		// keeps what it read, and its state line says why it ended.
		body = common.ErrorState(st, common.Subject{Topic: p.topic, Sub: p.sub}, p.loadErr, p.w, p.h-2)
	case len(p.msgs) == 0 && p.loading:
		body = st.Subtle.Render("loading…")
	case len(p.msgs) == 0 && p.browsing:
		body = st.Subtle.Render("no messages from " + p.at.String() + " on (o opens another position)")
	case len(p.msgs) == 0 && p.sub == "":
		body = st.Subtle.Render("waiting for new messages on " + naming.ShortName(p.topic, "") + " (a tail shows what arrives from now on)")
	case len(p.msgs) == 0:
		body = st.Subtle.Render("the backlog of " + p.sub + " is empty from position " + itoa(p.from))
	default:
		detail := p.detail()
		if p.w >= wide {
			lw := p.w / 2
			body = lipgloss.JoinHorizontal(lipgloss.Top, p.tbl.View(), " ", common.Lines(detail, p.w-lw-1, p.h-2))
		} else {
			body = p.tbl.View() + "\n" + common.Lines(detail, p.w, p.h-2-lipgloss.Height(p.tbl.View()))
		}
	}
	lines = append(lines, body)
	bottom := ""
	switch p.prompt {
	case promptFilter:
		bottom = p.in.View()
		if p.fltErr != nil { // the line above the prompt points down at the mistake
			pad := strings.Repeat(" ", 1+common.Width(string([]rune(p.fltErr.Expr)[:min(p.fltErr.Col-1, len([]rune(p.fltErr.Expr)))])))
			lines = append(lines[:1], common.Lines(lines[1], p.w, p.h-3))
			bottom = st.Paint(&st.Error, common.Trunc(pad+"↓ "+p.fltErr.Msg, p.w)) + "\n" + bottom
			return common.Lines(common.Lines(strings.Join(lines, "\n"), p.w, p.h-2)+"\n"+bottom, p.w, p.h)
		}
	case promptExport, promptFrom:
		bottom = p.in.View()
	default:
		bottom = p.stateLine()
	}
	return common.Lines(common.Lines(strings.Join(lines, "\n"), p.w, p.h-1)+"\n"+bottom, p.w, p.h)
}

func (p *Page) titleLine() string {
	st := p.c.Styles
	name := naming.ShortName(p.topic, "")
	var t string
	switch {
	case p.browsing:
		t = st.Title.Render("Read "+name) + st.Subtle.Render(" · from "+p.at.String()+" · non-durable reader, nothing acknowledged")
	case p.sub == "":
		t = st.Title.Render("Tail "+name) + st.Subtle.Render(" · non-durable reader from latest")
	default:
		t = st.Title.Render("Peek "+name) + st.Subtle.Render(" · subscription "+p.sub+" · cursor not moved")
	}
	return common.Trunc(t, p.w)
}

// stateLine says what is loaded and how it is shown.
func (p *Page) stateLine() string {
	st := p.c.Styles
	var parts []string
	switch {
	case p.browsing:
		parts = append(parts, "from "+p.at.String())
		if p.hasPrev {
			parts = append(parts, "[ previous")
		}
		if p.hasNext {
			parts = append(parts, "] next")
		}
	case p.sub != "":
		if len(p.msgs) > 0 {
			parts = append(parts, fmt.Sprintf("positions %d–%d", p.from, p.from+p.span()-1))
		}
		if p.more {
			parts = append(parts, "] next page")
		}
	default:
		switch {
		case p.tailDone:
			why, then := tailEnd(p.tailErr, p.gone())
			parts = append(parts, st.Error.Render("tail ended: "+why)+" · "+then)
		case p.tailLost:
			parts = append(parts, st.Error.Render("connection lost: the broker is unreachable")+" · the tail reads on when it is back · ctrl+r starts it again")
		case p.following:
			parts = append(parts, st.OK.Render("● following"))
		default:
			parts = append(parts, st.Warn.Render("⏸ paused")+" (F follows)")
		}
		parts = append(parts, common.Plural(len(p.msgs), "message"))
		if p.dropped > 0 {
			parts = append(parts, fmt.Sprintf("%d older dropped (keeps the last %d)", p.dropped, TailLimit))
		}
	}
	parts = append(parts, "decode: "+decodeNames[p.mode])
	if len(p.marked) > 0 {
		parts = append(parts, fmt.Sprintf("%d marked", len(p.marked)))
	}
	if p.query != "" {
		parts = append(parts, fmt.Sprintf("/%s: %d of %d shown", p.query, len(p.shown), len(p.msgs)))
	}
	return st.Subtle.Render(common.Trunc(strings.Join(parts, " · "), p.w))
}

// detail is the selected message: metadata, properties, then the decoded payload.
func (p *Page) detail() string {
	st := p.c.Styles
	m := p.current()
	if m == nil {
		return ""
	}
	if m.Unreadable != "" {
		return st.Error.Render(termtext.Line(fmt.Sprintf("position %d: unreadable: %s", m.Position, m.Unreadable))) + "\n" +
			st.Subtle.Render("the cluster answered, but not with anything letterbox can read; the messages around it are read as usual")
	}
	now := p.c.Clock.Now()
	when := func(t time.Time) string {
		if t.IsZero() {
			return "not set"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000Z") + " (" + common.Age(now, t) + " ago)"
	}
	redlv := "n/a (a peek carries no redelivery count)"
	if m.RedeliveriesKnown {
		redlv = itoa(m.Redeliveries)
	}
	recons, ok := m.ReconsumeTimes()
	if !ok {
		recons = "-"
	}
	// The key, the properties and the payload are the producer's: shown with control
	// characters escaped (client/termtext).
	kv := func(k, v string) string {
		return st.Subtle.Render(fmt.Sprintf("%-11s", k)) + " " + st.Text.Render(termtext.Line(v))
	}
	lines := []string{
		kv("id", m.ID) + st.Subtle.Render("  "+naming.ShortName(m.Topic, "")),
		kv("key", orDash(m.Key)),
		kv("published", when(m.PublishTime)),
		kv("event time", when(m.EventTime)),
		kv("redelivered", redlv) + st.Subtle.Render("  reconsumed ") + st.Retry.Render(recons),
	}
	// Every property on a line of its own (a reason is long), then the payload: the pane
	// scrolls as a whole (tab to it, then ↑↓).
	if len(m.Properties) > 0 {
		lines = append(lines, st.ColHeader.Render(fmt.Sprintf("properties · %d", len(m.Properties))))
		width := 0
		for k := range m.Properties {
			width = max(width, common.Width(termtext.Line(k)))
		}
		width = min(width, 28)
		for _, k := range slices.Sorted(maps.Keys(m.Properties)) {
			name := common.Pad(common.Trunc(termtext.Line(k), width), width, false)
			lines = append(lines, " "+st.Accent.Render(name)+" "+st.Text.Render(termtext.Line(m.Properties[k])))
		}
	}
	text, form := p.dec.decode(m.Payload, p.mode)
	lines = append(lines, st.ColHeader.Render(fmt.Sprintf("payload · %s · %s", form, common.Bytes(int64(len(m.Payload))))))
	lines = append(lines, strings.Split(termtext.Block(text), "\n")...)
	off := min(p.detailOff, max(0, len(lines)-1))
	return strings.Join(lines[off:], "\n")
}

// unreadableNote is what the screen says when asked to act on a message it could not read.
const unreadableNote = "the cluster could not hand this message over (why is in its row): nothing to act on"

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.prompt != promptNone {
		return []key.Binding{withDesc(k.Enter, "ok"), withDesc(k.Back, "cancel")}
	}
	if p.failed() {
		return []key.Binding{withDesc(k.Refresh, "try again")}
	}
	keys := []key.Binding{k.Decode, k.Filter, k.Mark, k.Export, k.Copy, k.OpenAt}
	switch {
	case p.browsing:
		return append(keys, k.NextPage, k.PrevPage)
	case p.sub == "":
		return append(keys, k.Follow)
	}
	return append(keys, k.NextPage)
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	return []common.HelpSection{{Title: "Messages", Keys: []key.Binding{
		withDesc(k.Decode, "decode as: auto, json, string, hex"), withDesc(k.Filter, "filter what is loaded: text or expression"),
		withDesc(k.NextMatch, "next match"), withDesc(k.PrevMatch, "previous match"), withDesc(k.Mark, "mark the message"),
		withDesc(k.Export, "export marked (else all loaded) as JSON lines"), withDesc(k.Copy, "copy the payload (OSC 52)"),
		withDesc(k.Follow, "follow new messages (tail)"), withDesc(k.OpenAt, "read from earliest, latest, a time or an id"),
		k.NextPage, k.PrevPage, withDesc(k.NextPane, "list / message"), withDesc(k.Back, "clear the filter, then back")}},
		common.NavigationHelp(k)}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
