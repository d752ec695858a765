package replay

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	p.opts.setWidth(w)
}

func (p *Page) View() string {
	st := p.c.Styles
	ns := data.ParseTopic(p.req.DLQ).NamespaceName()
	title := "Replay "
	if p.req.Discard {
		title = "Discard "
	}
	head := st.Title.Render(title+naming.ShortName(p.req.DLQ, "")) + st.Subtle.Render(" · via "+p.req.Subscription+" · selection: ") +
		st.Text.Render(p.req.Describe())
	if c := p.controls(); c != "" {
		head += st.Subtle.Render(" · " + c)
	}
	// What a confirmation is about is never cut: the head wraps instead.
	lines := append(strings.Split(lipgloss.NewStyle().Width(max(10, p.w)).Render(head), "\n"), "")
	switch p.stage {
	case Previewing:
		lines = append(lines, st.Title.Render("Preview")+st.Subtle.Render(" · dry run, nothing moves"), "")
		lines = append(lines, p.bar(p.prog, p.req.Total), "")
		lines = append(lines, p.counts(p.prog, true)...)
	case Previewed, Confirming:
		through := ""
		if u := p.req.Until; u != nil && u.Entry >= 0 {
			through = fmt.Sprintf(" up to %d:%d", u.Ledger, u.Entry)
		}
		lines = append(lines, st.Title.Render("Preview")+st.Subtle.Render(fmt.Sprintf(" · dry run over %s%s, nothing changed", common.Plural(int(p.preview.Considered), "dead letter"), through)), "")
		lines = append(lines, p.counts(p.preview.Progress, true)...)
		lines = append(lines, "")
		if !p.req.Discard {
			lines = append(lines, p.breakdown(p.dests, ns)...)
			lines = append(lines, "")
		}
		switch {
		case p.opts.open:
			lines = append(lines, p.optionsView()...)
		case p.stage == Confirming:
			lines = append(lines, p.question()...)
		case p.anySelected():
			lines = append(lines, st.Paint(&st.Accent, common.Trunc("enter runs it (asks first) · O sets rate, limit, destination… · ctrl+r previews again · esc leaves, nothing changed", p.w)))
		default:
			lines = append(lines, st.Paint(&st.Subtle, "nothing selected · O changes the controls · esc leaves"))
		}
	case Starting:
		lines = append(lines, st.Title.Render("Starting"), "", st.Paint(&st.Subtle, "reading the DLQ and the destinations before anything moves…"))
	case Running:
		title := "Running"
		if p.cancelled {
			title = "Cancelling…"
		}
		lines = append(lines, st.Title.Render(title), "")
		lines = append(lines, p.bar(p.prog, p.preview.Considered), "")
		lines = append(lines, p.counts(p.prog, false)...)
		lines = append(lines, "")
		if p.quitAsk {
			lines = append(lines, st.Paint(&st.Warn, common.Trunc("A replay is running. Quit and cancel it? Moved messages stay moved, the rest stay in the DLQ.  y quit · n keep running", p.w)))
		} else {
			lines = append(lines, st.Paint(&st.Subtle, common.Trunc("esc cancels at any time: moved messages stay moved, the rest stay in the DLQ", p.w)))
		}
	case Done:
		lines = append(lines, p.summary(ns)...)
	case Failed:
		lines = append(lines, st.Paint(&st.Error, common.Trunc("✗ "+errString(p.err), p.w)), "", st.Paint(&st.Subtle, "ctrl+r tries the preview again · esc leaves"))
	}
	used := len(lines)
	if rest := p.h - used - 1; rest > 1 && len(p.recent) > 0 {
		lines = append(lines, "", st.Paint(&st.ColHeader, "Latest messages considered"))
		lines = append(lines, p.recentLines(rest-2, ns)...)
	}
	return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
}

// question asks before anything changes, wrapped so that none of it is cut.
func (p *Page) question() []string {
	st := p.c.Styles
	wrap := func(s string) []string { return strings.Split(lipgloss.NewStyle().Width(max(10, p.w)).Render(s), "\n") }
	n := p.preview.WouldMove
	if !p.req.Discard {
		var other int64
		var names []string
		for _, d := range slices.Sorted(maps.Keys(p.crossTenant)) {
			other += p.crossTenant[d]
			to, _ := dlqops.TenantOf(d)
			names = append(names, fmt.Sprintf("%s (tenant %s)", termtext.Line(naming.ShortName(d, "")), termtext.Line(to)))
		}
		q := fmt.Sprintf("Move %s back now? Each is acknowledged in the DLQ only once its destination has it; letters that arrive from now on stay.  y yes · n no", common.Plural(int(n), "dead letter"))
		if other > 0 {
			from, _ := dlqops.TenantOf(p.req.DLQ)
			q = fmt.Sprintf("Move %s back now, %d of them to another tenant than the DLQ's (%s): %s? Each is acknowledged in the DLQ only once its destination has it; letters that arrive from now on stay.  y yes, to those topics too · n no",
				common.Plural(int(n+other), "dead letter"), other, from, strings.Join(names, ", "))
		}
		if r := p.preview.WouldResume; r != nil && !p.req.New {
			// The run carries on where that one stopped: said, since it may be days old.
			q = "Resuming " + r.Describe(p.c.Clock.Now()) + " (O: a new run instead). " + q
		}
		return paint(st, &st.Warn, wrap(q))
	}
	q := fmt.Sprintf("Discard %s of %s? They are acknowledged on %s, one by one, and gone for any replay; the others stay.", common.Plural(int(n), "dead letter"),
		naming.ShortName(p.req.DLQ, ""), p.req.Subscription)
	out := paint(st, &st.Warn, wrap(q))
	if p.mustType() {
		out = append(out, paint(st, &st.Warn, wrap(fmt.Sprintf("More than %d letters: type the DLQ's name, %s, and enter (esc: no).",
			TypeToConfirm, shortName(p.req.DLQ))))...)
		return append(out, p.typed.View())
	}
	return append(out, st.Paint(&st.Warn, "y yes · n no"))
}

func paint(st *common.Styles, style *lipgloss.Style, lines []string) []string {
	for i, l := range lines {
		lines[i] = st.Paint(style, l)
	}
	return lines
}

func errString(err error) string {
	if err == nil {
		return "failed"
	}
	return err.Error()
}

// bar is a progress bar over total (0: unknown) with the rate and the ETA.
func (p *Page) bar(pr dlqops.ReplayProgress, total int64) string {
	st := p.c.Styles
	bw := min(50, p.w-30)
	frac := 0.0
	if total > 0 {
		frac = min(1, float64(pr.Considered)/float64(total))
	}
	fill := int(frac * float64(bw))
	bar := st.Paint(&st.Accent, strings.Repeat("█", fill)) + st.Paint(&st.Subtle, strings.Repeat("░", bw-fill))
	of := fmt.Sprintf(" %d", pr.Considered)
	if total > 0 {
		of = fmt.Sprintf(" %d/%d · %d%%", pr.Considered, total, int(frac*100))
	}
	// The rate counts letters moved (discarded; in a preview, found movable), never letters
	// only looked at.
	info := fmt.Sprintf("rate %.1f letters/s · elapsed %s", pr.Rate, dur(pr.Elapsed))
	if pr.ETA > 0 {
		info += " · ETA " + dur(pr.ETA)
	}
	return bar + st.Paint(&st.Text, of) + "\n" + st.Paint(&st.Subtle, common.Trunc(info, p.w))
}

func dur(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func (p *Page) counts(pr dlqops.ReplayProgress, dry bool) []string {
	st := p.c.Styles
	moved, label := pr.Moved, "moved"
	switch {
	case dry && p.req.Discard:
		moved, label = pr.WouldMove, "to discard"
	case dry:
		moved, label = pr.WouldMove, "would move"
	case p.req.Discard:
		moved, label = pr.Discarded, "discarded"
	}
	row := func(name string, n int64, hot bool) string {
		s := &st.Text
		if hot && n > 0 {
			s = &st.Warn
		}
		return st.Paint(s, fmt.Sprintf(" %-11s %6d", name, n))
	}
	return []string{row(label, moved, false), row("skipped", pr.Skipped-pr.Guarded, false), row("loop guard", pr.Guarded, true), row("failed", pr.Failed, true)}
}

// breakdown is where dead letters go and why others stay.
func (p *Page) breakdown(dests map[string]int64, ns string) []string {
	st := p.c.Styles
	var out []string
	for _, d := range slices.Sorted(maps.Keys(dests)) {
		// A destination is a letter's REAL_TOPIC, a reason may quote a letter: escaped.
		out = append(out, st.Paint(&st.OK, common.Trunc(fmt.Sprintf(" → %-30s %6d", termtext.Line(naming.ShortName(d, ns)), dests[d]), p.w)))
	}
	whys := slices.Sorted(maps.Keys(p.why))
	slices.SortStableFunc(whys, func(a, b string) int { return int(p.why[b] - p.why[a]) })
	for i, w := range whys {
		if i == 4 {
			out = append(out, st.Paint(&st.Subtle, "   … "+common.Plural(len(whys)-4, "more reason")))
			break
		}
		out = append(out, st.Paint(&st.Subtle, common.Trunc(fmt.Sprintf("   %6d %s", p.why[w], termtext.Line(w)), p.w)))
	}
	return out
}

func (p *Page) summary(ns string) []string {
	st := p.c.Styles
	s := p.sum
	res := dlqops.Result(s, p.err)
	if p.cancelled {
		res = "cancelled"
	}
	title := fmt.Sprintf("Replay %s in %s: moved %d · skipped %d · failed %d", res, dur(s.Elapsed), s.Moved, s.Skipped, s.Failed)
	if p.req.Discard {
		title = fmt.Sprintf("Discard %s in %s: discarded %d · skipped %d · failed %d", res, dur(s.Elapsed), s.Discarded, s.Skipped, s.Failed)
	}
	style := &st.OK
	if !s.OK() || p.cancelled || p.err != nil {
		style = &st.Warn
	}
	out := []string{st.Paint(style, common.Trunc(title, p.w)), ""}
	out = append(out, p.counts(s.Progress, false)...)
	out = append(out, "")
	if !p.req.Discard {
		out = append(out, p.breakdown(p.dests, ns)...)
		out = append(out, "")
	}
	if s.LeftOut > 0 {
		out = append(out, st.Paint(&st.Text, common.Trunc(fmt.Sprintf("%d dead letters up to the preview's last were left out: the selection was done before them", s.LeftOut), p.w)))
	}
	if s.Arrived > 0 {
		out = append(out, st.Paint(&st.Text, common.Trunc(fmt.Sprintf("%s arrived after the preview and %s left in the DLQ", common.Plural(int(s.Arrived), "dead letter"), common.Agree(int(s.Arrived), "was", "were")), p.w)))
	}
	switch {
	case p.after == nil:
		out = append(out, st.Paint(&st.Subtle, "reading the DLQ and the origin again…"))
	default:
		line := fmt.Sprintf("now: DLQ backlog on %s: %s", termtext.Line(p.req.Subscription), p.after.Backlog.Words())
		if p.before != nil {
			line += fmt.Sprintf(" (was %s)", data.Grouped(p.before.Backlog.N))
		}
		out = append(out, st.Paint(&st.Text, common.Trunc(line, p.w)))
		for _, t := range slices.Sorted(maps.Keys(p.after.Origins)) {
			l := fmt.Sprintf("      %s: %d published", naming.ShortName(t, ns), p.after.Origins[t])
			if p.before != nil {
				if b, ok := p.before.Origins[t]; ok {
					l += fmt.Sprintf(" (+%d since the run started)", p.after.Origins[t]-b)
				}
			}
			out = append(out, st.Paint(&st.Text, common.Trunc(l, p.w)))
		}
	}
	if l := p.returnsLine(); l != "" {
		out = append(out, l)
	}
	if p.err != nil && !p.cancelled {
		out = append(out, st.Paint(&st.Error, common.Trunc("✗ "+p.err.Error(), p.w)))
	}
	switch {
	case s.Run != "" && !p.req.Discard:
		out = append(out, st.Paint(&st.Subtle, common.Trunc("run "+s.Run+" · recorded in the history · ctrl+r previews again · esc back", p.w)))
	default:
		out = append(out, st.Paint(&st.Subtle, common.Trunc("recorded in the history · ctrl+r previews again · esc back", p.w)))
	}
	return out
}

func (p *Page) recentLines(n int, ns string) []string {
	st := p.c.Styles
	ev := p.recent
	if len(ev) > n {
		ev = ev[len(ev)-n:]
	}
	var out []string
	for _, e := range ev {
		what := string(e.Action)
		if e.Destination != "" && (e.Action == dlqops.Moved || e.Action == dlqops.WouldMove) {
			what += " → " + naming.ShortName(e.Destination, ns)
		}
		if e.Reason != "" {
			what += " · " + e.Reason
		}
		s := &st.Text
		switch e.Action {
		case dlqops.Failed:
			s = &st.Error
		case dlqops.Skipped:
			s = &st.Subtle
		}
		line := fmt.Sprintf(" %-12s %-14s %s", e.IDString(), termtext.Line(e.Key), termtext.Line(what))
		out = append(out, st.Paint(s, common.Trunc(line, p.w)))
	}
	return out
}
