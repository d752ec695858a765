package dlq

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// detailLines are the pane under the letters: the reasons and payload of the one selected.
const detailLines = 2

func (p *Page) historyLines() int { return 1 + max(1, min(len(p.history), 3)) }

func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	p.in.SetWidth(w)
	if p.indexMode {
		p.tbl.SetSize(w, max(1, h-1))
		return
	}
	body := max(2, h-3-p.historyLines())
	p.tbl.SetSize(w, max(2, body-detailLines))
	p.setRows() // the columns depend on the width
	p.counts.tbl.SetSize(w, body)
	p.counts.setWidth(w)
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
	head := st.Title.Render("Dead letters " + naming.ShortName(p.topic, ""))
	if p.detail == nil || p.gone() {
		if p.loadErr != nil {
			return head + "\n" + common.ErrorState(st, common.Subject{Topic: p.topic}, p.loadErr, p.w, p.h-1)
		}
		return common.Lines(head+"\n"+st.Subtle.Render("loading…"), p.w, p.h)
	}
	p.SetSize(p.w, p.h)
	lines := []string{common.Trunc(head+st.Subtle.Render(p.headline()), p.w)}
	switch p.prompt {
	case promptNone:
		lines = append(lines, p.healthLine(), p.stateLine())
	case promptConfirm:
		// What is to be confirmed is never cut: it wraps, and the table gives up the lines.
		q := strings.Split(lipgloss.NewStyle().Width(max(10, p.w)).Render(p.confirm.question), "\n")
		for _, l := range q {
			lines = append(lines, st.Paint(&st.Warn, l))
		}
		if p.confirm.want == "y" {
			lines = append(lines, st.Paint(&st.Warn, "y yes · n no"))
		} else {
			lines = append(lines, p.in.View())
		}
		p.tbl.SetSize(p.w, max(2, p.tbl.Height()-(len(q)-1)))
		p.counts.tbl.SetSize(p.w, max(2, p.counts.tbl.Height()-(len(q)-1)))
	default:
		lines = append(lines, p.in.View(), p.promptProblem())
	}
	switch {
	case p.counts.shown:
		lines = append(lines, p.counts.tbl.View())
	case len(p.list.msgs) == 0 && !p.loading:
		lines = append(lines, st.Subtle.Render(p.emptyText()))
		lines = append(lines, make([]string, max(0, p.h-len(lines)-p.historyLines()))...)
	case len(p.shown) == 0 && p.local != nil:
		lines = append(lines, st.Subtle.Render(common.Trunc("none of the "+common.Plural(len(p.list.msgs), "letter")+" shown matches: enter searches the whole DLQ", p.w)))
		lines = append(lines, make([]string, max(0, p.h-len(lines)-p.historyLines()))...)
	default:
		lines = append(lines, p.tbl.View())
		lines = append(lines, p.detailView()...)
	}
	lines = append(lines, p.historyView()...)
	return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
}

// headline is what follows the title: the subscription, the letters it has not acknowledged,
// and the origin.
func (p *Page) headline() string {
	var s string
	if p.sub != "" {
		s = fmt.Sprintf(" · via %s · %s", termtext.Line(p.sub), p.lettersWords())
		if p.includeAcked {
			s += " · acknowledged shown (i)"
		}
		if n := len(p.detail.Subscriptions); n > 1 {
			s += fmt.Sprintf(" (u: %d subscriptions)", n)
		}
	} else {
		s = " · no subscription: every retained letter"
	}
	if p.origin != "" { // from the newest letter, when the DLQ's name does not say
		s += " · from " + termtext.Line(naming.ShortName(p.origin, data.ParseTopic(p.topic).NamespaceName()))
		if p.originSub != "" {
			s += " / " + termtext.Line(p.originSub)
		}
	}
	return s
}

// lettersWords is the subscription's letters in words: the broker's count, or where it counts
// only entries, the count of the last scan of all its letters (as of then), else the entries,
// marked "≈", and how to count the letters.
func (p *Page) lettersWords() string {
	b := p.backlog()
	if !b.EntriesOnly {
		return b.Words()
	}
	if res := p.scan.result; res != nil && p.scan.filter == "" && res.Complete && !p.includeAcked {
		if res.Approx != "" {
			return fmt.Sprintf("≈ %s letters (counted %s: %s)", data.Grouped(res.Stats.Letters), p.scan.at.Format("15:04:05"), res.Approx)
		}
		return fmt.Sprintf("%s letters (counted %s)", data.Grouped(res.Stats.Letters), p.scan.at.Format("15:04:05"))
	}
	return b.Words() + " · c counts the letters"
}

func (p *Page) emptyText() string {
	switch p.list.src {
	case srcResults:
		if p.filter != "" {
			return "no letter matches " + p.filter
		}
		return "the DLQ holds no letters"
	case srcBrowse:
		if !p.list.at.Earliest {
			return "nothing from there on"
		}
		if p.sub == "" {
			return "the DLQ retains no letters: with no subscription, nothing keeps them"
		}
		return "the DLQ retains no letters"
	}
	if p.sub == "" {
		return "no subscription to peek through: o reads the DLQ from a position, c counts it"
	}
	return "the subscription's backlog is empty: o reads what the DLQ retains, c counts it"
}

// promptProblem is the line under the prompt: where the expression is wrong, or a hint.
func (p *Page) promptProblem() string {
	st := p.c.Styles
	switch {
	case p.inErr != nil:
		typed := []rune(p.inErr.Expr)
		pad := strings.Repeat(" ", common.Width(p.inPrefix())+common.Width(string(typed[:min(p.inErr.Col-1, len(typed))])))
		return st.Paint(&st.Error, common.Trunc(pad+"^ "+p.inErr.Msg, p.w))
	case p.inMsg != "":
		return st.Paint(&st.Error, common.Trunc(p.inMsg, p.w))
	case p.prompt == promptFilter && p.local != nil:
		return st.Paint(&st.Subtle, common.Trunc(fmt.Sprintf("%d of the %s shown %s · enter searches the whole DLQ · esc cancels", len(p.shown),
			common.Plural(len(p.list.msgs), "letter"), common.Agree(len(p.shown), "matches", "match")), p.w))
	case p.prompt == promptFilter:
		return st.Paint(&st.Subtle, common.Trunc("filters the letters shown as you type · enter searches the whole DLQ · conditions join with and · esc cancels", p.w))
	case p.prompt == promptFrom:
		return st.Paint(&st.Subtle, common.Trunc("enter reads the DLQ from there, without consuming · esc cancels", p.w))
	}
	return st.Paint(&st.Subtle, common.Trunc("enter goes on (it asks before changing anything) · esc cancels", p.w))
}

func (p *Page) inPrefix() string { return "/" } // errors are pointed at in search expressions only

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
		line := "⚠ " + strings.Join(h.Warnings, " · ")
		if len(p.detail.Subscriptions) == 0 {
			line += " · A adds a subscription, T sets retention"
		}
		return st.Paint(&st.Warn, common.Trunc(line, p.w))
	}
	return st.Paint(&st.OK, common.Trunc("✓ "+h.OK, p.w))
}

// stateLine says what the table lists (or how far a scan has come), and the marks.
func (p *Page) stateLine() string {
	st := p.c.Styles
	if p.scan.running {
		return st.Paint(&st.Accent, common.Trunc(p.progressLine(), p.w))
	}
	var parts []string
	switch {
	case p.counts.shown:
		parts = append(parts, p.countsLine())
	case p.list.src == srcResults && p.scan.result != nil:
		res := p.scan.result
		pages := max(1, (len(res.Matches)+PageSize-1)/PageSize)
		what := "all " + data.Letters(res.Read)
		if p.scan.filter != "" {
			what = fmt.Sprintf("/%s · %s of %s", p.scan.filter, data.Grouped(int64(len(res.Matches))), data.Letters(res.Read))
		}
		parts = append(parts, fmt.Sprintf("%s (scan of %s) · page %d of %d", what, p.scan.at.Format("15:04:05"), p.list.page+1, pages))
	case p.list.src == srcBrowse:
		parts = append(parts, "from "+p.list.at.String())
		if p.list.hasPrev {
			parts = append(parts, "[ previous")
		}
		if p.list.hasNext {
			parts = append(parts, "] next")
		}
	case len(p.list.msgs) > 0:
		l := p.list
		parts = append(parts, fmt.Sprintf("letters %d–%d of the backlog", l.before+1, l.before+int64(len(l.msgs))))
		if l.before > 0 {
			parts = append(parts, "[ previous")
		}
		if l.more {
			parts = append(parts, "] next")
		}
	}
	if p.includeAcked {
		parts = append(parts, "✓ acknowledged, still retained")
	}
	if n := len(p.marked); n > 0 {
		parts = append(parts, fmt.Sprintf("%d marked", n))
	}
	return st.Paint(&st.Subtle, common.Trunc(strings.Join(parts, " · "), p.w))
}

// progressLine is a running scan: a bar when the total is known, the letters read, the rate
// and the time left.
func (p *Page) progressLine() string {
	pr := p.scan.progress
	verb := "scanning"
	if p.scan.filter != "" {
		verb = "searching /" + p.scan.filter
	}
	parts := []string{verb}
	if pr.TotalEntries > 0 {
		const width = 20
		done := int(pr.Fraction * width)
		parts[0] += fmt.Sprintf(" %s%s %3.0f%%", strings.Repeat("█", done), strings.Repeat("░", width-done), 100*pr.Fraction)
	}
	read := common.Counted(pr.Read, "letter") + " read"
	if p.scan.filter != "" {
		read = fmt.Sprintf("%s found in %s", common.Count(pr.Matched), common.Counted(pr.Read, "letter"))
	}
	parts = append(parts, read)
	if pr.Rate > 0 {
		parts = append(parts, common.Rate(pr.Rate)+"/s")
	}
	if pr.Left > 0 {
		parts = append(parts, pr.Left.Round(time.Second).String()+" left")
	}
	return strings.Join(append(parts, "esc cancels"), " · ")
}

func (p *Page) countsLine() string {
	res := p.scan.result
	s := res.Stats
	what := "counts of " + data.Letters(s.Letters)
	if p.scan.filter != "" {
		what = fmt.Sprintf("counts of %s matching /%s (of %s)", data.Letters(s.Letters), p.scan.filter, data.Grouped(res.Read))
	}
	if res.Acknowledged > 0 {
		what += fmt.Sprintf(", %s acknowledged", data.Grouped(res.Acknowledged))
	}
	if res.Approx != "" {
		what = "≈ " + what
	}
	if s.Letters > 0 {
		loc := p.c.Clock.Now().Location()
		what += fmt.Sprintf(" · published %s – %s", s.First.In(loc).Format("01-02 15:04"), s.Last.In(loc).Format("01-02 15:04"))
	}
	return what + fmt.Sprintf(" · scanned in %s · enter searches a count", res.Elapsed.Round(time.Millisecond))
}

// detailView is the selected dead letter's reasons and payload, one line each.
func (p *Page) detailView() []string {
	st := p.c.Styles
	d := p.current()
	if d == nil {
		return make([]string, detailLines)
	}
	if d.Unreadable != "" {
		return []string{
			st.Paint(&st.Error, common.Trunc(" "+termtext.Line("unreadable: "+d.Unreadable), p.w)),
			st.Paint(&st.Subtle, common.Trunc(fmt.Sprintf(" position %d · the letters around it are read as usual", d.Position), p.w)),
		}
	}
	r := reasons(*d)
	if r == "" {
		r = "no reason property (keys containing reason, error or exception)"
	}
	payload := termtext.Line(strings.Join(strings.Fields(string(d.Payload)), " "))
	if !isText(d.Payload) {
		payload = "<" + common.Plural(len(d.Payload), "byte") + " binary>"
	}
	return []string{
		st.Paint(&st.DLQ, common.Trunc(" "+termtext.Line(r), p.w)),
		st.Paint(&st.Subtle, common.Trunc(fmt.Sprintf(" %s · %s", d.ID, payload), p.w)),
	}
}

func reasons(d data.DeadLetter) string {
	var parts []string
	for _, r := range deadletter.Reasons(d.Properties) {
		parts = append(parts, r[0]+"="+r[1])
	}
	return strings.Join(parts, " ")
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
	out := []string{st.Paint(&st.ColHeader, "History")}
	if len(p.history) == 0 {
		return append(out, st.Paint(&st.Subtle, " nothing done to this DLQ yet"))
	}
	for i, e := range p.history {
		if i >= p.historyLines()-1 {
			break
		}
		// A selection and a result may quote a letter (an edited resend's destination, an
		// error): written with its control characters escaped.
		line := termtext.Line(fmt.Sprintf(" %s  %-9s %-10s %s · %s · %s",
			e.When.Local().Format("2006-01-02 15:04"), e.What(), e.Result, counted(e), e.Selection, by(e)))
		style := &st.Text
		if e.Result != "complete" {
			style = &st.Warn
		}
		out = append(out, st.Paint(style, common.Trunc(line, p.w)))
	}
	return out
}

// counted is what an action did, in numbers.
func counted(e data.HistoryEntry) string {
	switch e.What() {
	case dlqops.ActionDiscard:
		return fmt.Sprintf("discarded %d · skipped %d · failed %d", e.Discarded, e.Skipped, e.Failed)
	case dlqops.ActionReplay, dlqops.ActionResend:
		return fmt.Sprintf("moved %d · skipped %d · failed %d", e.Moved, e.Skipped, e.Failed)
	case dlqops.ActionPurge, dlqops.ActionSkip:
		if e.Discarded > 0 {
			return fmt.Sprintf("%s letters acknowledged", data.Grouped(e.Discarded))
		}
	}
	return "done"
}

func by(e data.HistoryEntry) string {
	s := "via " + e.Subscription
	if e.Subscription == "" {
		s = "namespace policy"
	}
	if e.User != "" {
		s += " · " + e.User
	}
	if e.By != "" {
		s += " (" + e.By + ")"
	}
	return s
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	switch {
	case p.prompt == promptConfirm && p.confirm.want == "y":
		return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes")), key.NewBinding(key.WithKeys("n"), key.WithHelp("n/esc", "no"))}
	case p.prompt != promptNone:
		return []key.Binding{withDesc(k.Enter, "apply"), withDesc(k.Back, "cancel")}
	case p.indexMode:
		return []key.Binding{withDesc(k.Enter, "open")}
	case p.detail == nil || p.gone():
		return []key.Binding{withDesc(k.Refresh, "try again")}
	case p.scan.running:
		return []key.Binding{withDesc(k.Back, "cancel scan")}
	case p.counts.shown:
		return []key.Binding{withDesc(k.Enter, "search"), withDesc(keyCounts, "letters"), keyReplay}
	}
	return []key.Binding{keyMark, withDesc(k.Filter, "search"), keyCounts, keyReplay, keyDiscard, keyResend, keyFrom, keyFlow}
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	if p.indexMode {
		return []common.HelpSection{{Title: "Dead-letter topics", Keys: []key.Binding{withDesc(k.Enter, "open the DLQ"), withDesc(k.Back, "back")}},
			common.NavigationHelp(k)}
	}
	return []common.HelpSection{{Title: "Dead letters", Keys: []key.Binding{
		keyMark, keyMarkAll, withDesc(k.Filter, "search the whole DLQ: expression or text"), keyReason,
		withDesc(keyCounts, "counts of the whole DLQ (again: the letters)"), withDesc(keyScan, "count the whole DLQ again"),
		withDesc(keyFrom, "read the DLQ from earliest, latest, a time or an id"),
		withDesc(keyReplay, "replay marked / searched / all"), withDesc(keyFlow, "the flow its letters died in"),
		withDesc(k.Enter, "open the letter (on counts: search it)"), keyNextPage, keyPrevPage,
		withDesc(keySub, "the next subscription's letters"), withDesc(keyAcked, "show the letters it acknowledged too (✓), or not"),
		withDesc(k.Back, "cancel scan, close counts, end search, clear marks, back")}},
		{Title: "Acting on dead letters (each asks first)", Keys: []key.Binding{
			withDesc(keyDiscard, "discard marked / searched"), withDesc(keyPurge, "purge or skip the backlog's head"),
			withDesc(keyResend, "edit & resend the letter"), withDesc(keySubscribe, "add a subscription (keeps letters)"),
			withDesc(keyRetention, "set the namespace's retention")}},
		common.NavigationHelp(k)}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
