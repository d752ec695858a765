package flow

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// wide is the width from which the histogram and the latest dead letters sit side by side.
const wide = 120

func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	p.idx.SetSize(w, max(1, h-1))
	p.layout()
}

// layout sizes the latest dead letters table for the current reading.
func (p *Page) layout() {
	if p.flow == nil {
		return
	}
	rest := p.h - 8 // title, graph (5), redeliveries, health
	journey := 4
	if p.w >= wide {
		p.latest.SetSize(p.w-p.w*2/5-2, max(2, rest-journey-1))
		return
	}
	hist := min(len(p.flow.Histogram)+1, 5)
	p.latest.SetSize(p.w, max(2, min(len(p.flow.Latest)+1, rest-hist-journey-2)))
}

func (p *Page) View() string {
	st := p.c.Styles
	if p.indexMode {
		return p.indexView()
	}
	// The topic and subscription may come from a letter (its REAL_TOPIC, its producer's name):
	// written with control characters escaped, as everything else from letters.
	head := st.Title.Render("Flow " + termtext.Line(naming.ShortName(p.topic, "")))
	if p.failed() {
		return head + "\n" + common.ErrorState(st, common.Subject{Topic: p.topic, Sub: p.sub}, p.loadErr, p.w, p.h-1)
	}
	if p.problem != "" {
		return common.Lines(head+"\n"+st.Warn.Render(common.Trunc(p.problem, p.w)), p.w, p.h)
	}
	f := p.flow
	if f == nil {
		return common.Lines(head+"\n"+st.Subtle.Render("loading…"), p.w, p.h)
	}
	p.layout()
	head = st.Title.Render("Flow "+termtext.Line(naming.ShortName(f.Topic, ""))) + st.Subtle.Render(" · subscription ") + st.Text.Render(termtext.Line(f.Sub)) +
		st.Subtle.Render(" · read "+f.At.Format("15:04:05"))
	lines := []string{common.Trunc(head, p.w)}
	lines = append(lines, p.graph(f)...)
	red := fmt.Sprintf("redeliveries on %s: %s msg/s", termtext.Line(f.Sub), common.Rate(f.Redeliver()))
	if f.Retry.SubKnown {
		red += fmt.Sprintf(" (%s on the topic, %s on the retry topic)", common.Rate(f.Main.Redeliver), common.Rate(f.Retry.Redeliver))
	}
	rs := &st.Text
	if f.Redeliver() > 0 {
		rs = &st.Warn
	}
	lines = append(lines, st.Paint(rs, common.Trunc(red, p.w)))
	lines = append(lines, p.healthLine(f))
	bodyH := p.h - len(lines)
	var body string
	if p.w >= wide {
		lw := p.w * 2 / 5
		top := min(bodyH-5, max(min(len(f.Histogram), 10)+1, len(f.Latest)+2, 4))
		p.latest.SetSize(p.w-lw-2, top-1)
		left := common.Lines(p.histogram(f, lw, top), lw, top)
		right := common.Lines(p.latestView(f), p.w-lw-2, top)
		body = lipgloss.JoinHorizontal(lipgloss.Top, left, "  ", right) + "\n\n" + p.journey(f, 4)
	} else {
		hist := p.histogram(f, p.w, min(len(f.Histogram)+1, 5))
		body = hist + "\n" + p.latestView(f) + "\n" + p.journey(f, 4)
	}
	lines = append(lines, body)
	return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
}

// graph draws the three nodes as boxes joined by edges labelled with msg/s.
func (p *Page) graph(f *data.Flow) []string {
	st := p.c.Styles
	ew := 9
	if p.w >= wide {
		ew = 16
	}
	bw := max(14, (p.w-2*ew)/3)
	main := p.box(f.Main, bw, &st.Border, nodeLines(f.Main, "main", p.w >= wide))
	retry := p.box(f.Retry, bw, &st.Retry, nodeLines(f.Retry, "retry", p.w >= wide))
	dlq := p.box(f.DLQ, bw, &st.DLQ, nodeLines(f.DLQ, "dlq", p.w >= wide))
	e1 := p.edge(ew, f.Retry.Stats().RateIn, "retries", f.Retry.Exists)
	e2 := p.edge(ew, f.DLQ.Stats().RateIn, "dead", f.DLQ.Exists)
	out := make([]string, 5)
	for i := range out {
		out[i] = main[i] + e1[i] + retry[i] + e2[i] + dlq[i]
	}
	return out
}

func nodeLines(n data.FlowNode, role string, wide bool) [3]string {
	if !n.Exists {
		return [3]string{"not created yet", "", ""}
	}
	s := n.Stats()
	var l [3]string
	l[0] = "in " + common.Rate(s.RateIn) + "/s · out " + common.Rate(s.RateOut) + "/s"
	if !wide {
		l[0] = "in " + common.Rate(s.RateIn) + " · out " + common.Rate(s.RateOut)
	}
	switch {
	case role == "dlq" && !n.SubKnown:
		l[1] = "no subscription!"
	case n.SubKnown:
		l[1] = "backlog " + common.Count(n.SubBacklog)
		if wide {
			l[1] += " on " + termtext.Line(n.Sub)
		}
	default:
		l[1] = "no " + termtext.Line(n.Sub) + " subscription"
	}
	l[2] = common.Count(s.InCounter) + " published"
	if wide {
		l[2] += " · " + common.Bytes(s.Storage)
	}
	return l
}

// box is a node: a rounded border in style bs, the topic's short name in the top edge.
func (p *Page) box(n data.FlowNode, w int, bs *lipgloss.Style, body [3]string) []string {
	st := p.c.Styles
	border := lipgloss.NewStyle().Foreground(bs.GetBorderTopForeground())
	if bs != &st.Border {
		border = *bs
	}
	inner := w - 2
	name := termtext.Line(data.ParseTopic(n.Topic).Local)
	if room := inner - 3; len(name) > room && room > 1 {
		name = "…" + name[len(name)-room+1:] // the suffix (-RETRY, -DLQ) says most
	}
	title := " " + name + " "
	top := "╭─" + title + strings.Repeat("─", max(0, inner-1-common.Width(title))) + "╮"
	out := []string{st.Paint(&border, top)}
	for _, l := range body {
		out = append(out, st.Paint(&border, "│")+st.Paint(&st.Text, common.Pad(" "+l, inner, false))+st.Paint(&border, "│"))
	}
	out = append(out, st.Paint(&border, "╰"+strings.Repeat("─", inner)+"╯"))
	return out
}

// edge is an arrow ew cells wide with the rate above it and what flows below.
func (p *Page) edge(ew int, rate float64, what string, exists bool) []string {
	st := p.c.Styles
	label, arrow := common.Rate(rate)+"/s", strings.Repeat("─", ew-2)+"▶"
	style := &st.Accent
	if !exists {
		label, style = "", &st.Subtle
	}
	center := func(s string) string {
		gap := ew - common.Width(s)
		if gap <= 0 {
			return common.Trunc(s, ew)
		}
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	blank := strings.Repeat(" ", ew)
	return []string{blank, st.Paint(style, center(label)), st.Paint(&st.Subtle, " "+arrow), st.Paint(&st.Subtle, center(what)), blank}
}

func (p *Page) healthLine(f *data.Flow) string {
	st := p.c.Styles
	if !f.DLQ.Exists {
		return st.Paint(&st.OK, common.Trunc("✓ no DLQ topic yet: nothing has died on "+termtext.Line(f.Sub), p.w))
	}
	h := data.JudgeHealth(data.HealthInput{DLQ: f.DLQ.Detail, Retention: f.Retention, RetentionKnown: f.RetentionKnown, RedeliverBefore: -1})
	if len(h.Warnings) > 0 {
		return st.Paint(&st.Warn, common.Trunc("⚠ "+strings.Join(h.Warnings, " · "), p.w))
	}
	return st.Paint(&st.OK, common.Trunc("✓ DLQ "+h.OK, p.w))
}

// histogram draws RECONSUMETIMES: a row per value, a bar for the retry messages and one for
// the dead letters, each scaled to its largest count.
func (p *Page) histogram(f *data.Flow, w, h int) string {
	st := p.c.Styles
	title := fmt.Sprintf("RECONSUMETIMES · %d retry, %d DLQ messages peeked", f.RetryPeeked, f.DLQPeeked)
	lines := []string{st.Paint(&st.ColHeader, common.Pad(title, w, false))}
	if len(f.Histogram) == 0 {
		lines = append(lines, st.Paint(&st.Subtle, common.Trunc("  nothing in the retry or DLQ backlog", w)))
		return strings.Join(lines, "\n")
	}
	maxR, maxD := 0, 0
	for _, b := range f.Histogram {
		maxR, maxD = max(maxR, b.Retry), max(maxD, b.Dead)
	}
	col := (w - 4) / 2
	bar := func(n, of int, style *lipgloss.Style, label string) string {
		if n == 0 {
			return common.Pad("", col, false)
		}
		room := max(1, col-len(label)-8)
		l := max(1, n*room/max(1, of))
		return st.Paint(style, strings.Repeat("█", l)) + st.Paint(&st.Text, common.Pad(fmt.Sprintf(" %d %s", n, label), col-l, false))
	}
	buckets := f.Histogram
	if len(buckets) > h-1 {
		buckets = buckets[len(buckets)-(h-1):]
	}
	for _, b := range buckets {
		lines = append(lines, st.Paint(&st.Retry, fmt.Sprintf("%3d ", b.N))+bar(b.Retry, maxR, &st.Retry, "retry")+bar(b.Dead, maxD, &st.DLQ, "DLQ"))
	}
	return strings.Join(lines, "\n")
}

func (p *Page) latestView(f *data.Flow) string {
	st := p.c.Styles
	title := fmt.Sprintf("Latest dead letters (%d peeked of %s)", len(f.Latest), common.Count(f.DLQ.SubBacklog))
	if !f.DLQ.SubKnown {
		title = "Latest dead letters: the DLQ has no subscription to peek through"
	}
	out := st.Paint(&st.ColHeader, title)
	if len(f.Latest) == 0 {
		return out + "\n" + st.Paint(&st.Subtle, "  none")
	}
	return out + "\n" + p.latest.View()
}

// journey shows where the selected dead letter's original message has been.
func (p *Page) journey(f *data.Flow, h int) string {
	st := p.c.Styles
	d := p.selected()
	if d == nil || d.OriginID == "" {
		return st.Paint(&st.ColHeader, "Journey") + "\n" + st.Paint(&st.Subtle, "  select a dead letter with ORIGIN_MESSAGE_ID to follow it")
	}
	now := p.c.Clock.Now()
	lines := []string{st.Paint(&st.ColHeader, common.Trunc(fmt.Sprintf("Journey of %s (key %s)", termtext.Line(d.OriginID), termtext.Line(d.Key)), p.w))}
	steps := f.Journey(d.OriginID)
	local := func(topic string) string { return termtext.Line(data.ParseTopic(topic).Local) }
	nameW := common.Width(local(f.Retry.Topic))
	for _, s := range steps {
		nameW = max(nameW, common.Width(local(s.Topic)))
	}
	sawRetry := false
	for _, s := range steps {
		sawRetry = sawRetry || s.Topic == f.Retry.Topic
	}
	row := func(mark string, style *lipgloss.Style, topic, id, what string) string {
		l := fmt.Sprintf(" %s %s %-10s %s", mark, common.Pad(local(topic), nameW, false), termtext.Line(id), termtext.Line(what))
		return st.Paint(style, common.Trunc(l, p.w))
	}
	for i, s := range steps {
		switch {
		case i == 0:
			lines = append(lines, row("●", &st.Text, s.Topic, s.ID, s.What))
			if !sawRetry && d.Reconsumes > 0 {
				lines = append(lines, row("↓", &st.Retry, f.Retry.Topic, common.Plural(d.Reconsumes, "hop"), "retried (consumed from the retry topic; RECONSUMETIMES on the dead letter)"))
			}
		case s.Topic == f.Retry.Topic:
			lines = append(lines, row("↓", &st.Retry, s.Topic, s.ID, fmt.Sprintf("hop %d, %s %s", s.Hop, s.What, since(now, s.At))))
		default:
			lines = append(lines, row("●", &st.DLQ, s.Topic, s.ID, since(now, s.At)+" · "+s.What))
		}
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

func (p *Page) indexView() string {
	st := p.c.Styles
	title := st.Title.Render("Flows") + st.Subtle.Render(fmt.Sprintf(" · %d found: a topic's subscription with its retry and DLQ topics", len(p.index)))
	if p.index == nil && p.loading {
		return common.Lines(title+"\n"+st.Subtle.Render("loading…"), p.w, p.h)
	}
	if len(p.index) == 0 {
		return common.Lines(title+"\n"+st.Subtle.Render("no retry or DLQ topics: nothing has failed yet (open :flow TOPIC SUB to watch one)"), p.w, p.h)
	}
	return common.Lines(common.Trunc(title, p.w)+"\n"+p.idx.View(), p.w, p.h)
}
