package dlq

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// Where the table's letters come from.
const (
	srcBacklog = iota // the subscription's backlog, peeked by position
	srcResults        // the last scan's or search's letters, read back by id
	srcBrowse         // the DLQ read from a position
)

// letters is what the table lists and how to get the neighbouring pages.
type letters struct {
	src  int
	msgs []data.DeadLetter
	// srcBacklog: the backlog position (an entry's) of the first letter, and whether more
	// follow; before counts the letters of the pages before it, and froms and befores are those
	// pages' own, to page back.
	from    int
	more    bool
	before  int64
	froms   []int
	befores []int64
	// srcResults: the page of the scan's matches shown.
	page int
	// srcBrowse: where this page started, and its neighbours.
	at               data.From
	next, prev       data.From
	hasNext, hasPrev bool
}

// resetPages puts the backlog's list back on its first page.
func (l *letters) resetPages() {
	l.from, l.before, l.froms, l.befores = 1, 0, nil, nil
}

// BacklogMsg carries one page of the subscription's backlog.
type BacklogMsg struct {
	common.Fresh
	Topic, Sub string
	From       int
	Msgs       []data.Message
}

// ResultsMsg carries one page of a scan's letters.
type ResultsMsg struct {
	common.Fresh
	Topic string
	Run   int
	Page  int
	Msgs  []data.Message
}

// BrowsedMsg carries one page of the DLQ read from a position.
type BrowsedMsg struct {
	common.Fresh
	Topic string
	At    data.From
	Page  *data.BrowsePage
}

// Columns of the letters table. The narrow ones come first; the wide ones show only on a
// terminal wide enough to give them room.
const (
	colMark = iota
	colAge
	colKey
	colOrigin
	colOriginID
	colRCN
	colReplayed
	colPublished // from wideFrom
	colProducer  // from widerFrom
	colSize      // from widerFrom
	colReason
	colPayload // from widerFrom
)

// The widths from which the letters table shows the publish time, then the producer, the
// size and the first line of the payload.
const (
	wideFrom  = 140
	widerFrom = 200
)

// letterColumns are the table's columns at width w, those holding names and reasons sized to
// the letters shown (between a minimum and a cap).
func letterColumns(w int, msgs []data.DeadLetter, ns string) []table.Column {
	key, origin, producer, reason := 3, 6, 8, 6
	for i := range msgs {
		d := &msgs[i]
		// As the table shows them: control characters escaped.
		key = max(key, common.Width(termtext.Line(d.Key)))
		origin = max(origin, common.Width(termtext.Line(naming.ShortName(d.Origin, ns))))
		producer = max(producer, common.Width(termtext.Line(shortProducer(d.ProducerName, ns))))
		reason = max(reason, common.Width(termtext.Line(reasonCell(d))))
	}
	cols := [colPayload + 1]table.Column{
		colMark:     {Title: " ", Width: 1},
		colAge:      {Title: "AGE", Width: 4, Right: true},
		colKey:      {Title: "KEY", Width: min(key, 24), Droppable: true},
		colOrigin:   {Title: "ORIGIN", Width: min(origin, 30)},
		colOriginID: {Title: "ORIGINAL ID", Width: 11, Droppable: true},
		colRCN:      {Title: "RCN", Width: 3, Right: true},
		colReplayed: {Title: "REPLAYED", Width: 8, Right: true, Droppable: true},
		colReason:   {Title: "REASON", Flex: true, Min: 14, Max: reason},
	}
	if w >= wideFrom {
		cols[colPublished] = table.Column{Title: "PUBLISHED", Width: 20}
	}
	if w >= widerFrom {
		cols[colProducer] = table.Column{Title: "PRODUCER", Width: min(producer, 40)}
		cols[colSize] = table.Column{Title: "SIZE", Width: 7, Right: true}
		// The reason keeps its width; the payload takes what is left.
		cols[colReason] = table.Column{Title: "REASON", Width: min(reason, 60)}
		cols[colPayload] = table.Column{Title: "PAYLOAD", Flex: true, Min: 12}
	}
	return slices.DeleteFunc(cols[:], func(c table.Column) bool { return c.Title == "" })
}

func (p *Page) loadBacklog(from int) tea.Cmd {
	if p.sub == "" {
		return nil
	}
	p.loading = true
	t, sub := p.topic, p.sub
	return common.Load(p.c, "peek "+naming.ShortName(t, ""), func(ctx context.Context, s data.Source) ([]data.Message, error) {
		return s.Peek(ctx, t, sub, from, PageSize)
	}, func(msgs []data.Message) tea.Msg { return BacklogMsg{Topic: t, Sub: sub, From: from, Msgs: msgs} })
}

// loadResults reads page i of the last scan's letters back.
func (p *Page) loadResults(i int) tea.Cmd {
	res := p.scan.result
	ts, ok := p.c.Source.(data.TriageSource)
	if res == nil || !ok {
		return nil
	}
	lo := min(i*PageSize, len(res.Matches))
	ps := res.Matches[lo:min(lo+PageSize, len(res.Matches))]
	p.loading = true
	t, run, v := p.topic, p.scan.run, p.view()
	return common.Load(p.c, "read "+naming.ShortName(t, "")+" back", func(ctx context.Context, _ data.Source) ([]data.Message, error) {
		return ts.Letters(ctx, t, v, ps)
	}, func(msgs []data.Message) tea.Msg { return ResultsMsg{Topic: t, Run: run, Page: i, Msgs: msgs} })
}

// browse reads the page of the DLQ that starts at from.
func (p *Page) browse(from data.From) tea.Cmd {
	ts, ok := p.c.Source.(data.TriageSource)
	if !ok {
		return status("this cluster connection cannot read a topic from a position")
	}
	p.loading = true
	t, v := p.topic, p.view()
	return common.Load(p.c, "read "+naming.ShortName(t, ""), func(ctx context.Context, _ data.Source) (*data.BrowsePage, error) {
		return ts.Browse(ctx, t, v, from, PageSize)
	}, func(bp *data.BrowsePage) tea.Msg { return BrowsedMsg{Topic: t, At: from, Page: bp} })
}

// takeLetters shows a page that arrived, if it is still the one the screen wants.
func (p *Page) takeLetters(msg tea.Msg) {
	var msgs []data.Message
	switch m := msg.(type) {
	case BacklogMsg:
		if m.Topic != p.topic || m.Sub != p.sub || p.list.src != srcBacklog {
			return
		}
		// A peek reads whole entries: a page holds at least PageSize letters when more follow.
		p.list.from, p.list.more = m.From, len(m.Msgs) >= PageSize
		msgs = m.Msgs
	case ResultsMsg:
		if m.Topic != p.topic || m.Run != p.scan.run || p.list.src != srcResults {
			return
		}
		p.list.page = m.Page
		msgs = m.Msgs
	case BrowsedMsg:
		if m.Topic != p.topic || p.list.src != srcBrowse {
			return
		}
		p.list.at = m.At
		p.list.next, p.list.hasNext = m.Page.Next, m.Page.More
		p.list.prev, p.list.hasPrev = m.Page.Prev, m.Page.HasPrev
		msgs = m.Page.Msgs
	}
	p.list.msgs = p.list.msgs[:0]
	for _, m := range msgs {
		p.list.msgs = append(p.list.msgs, data.NewDeadLetter(m))
	}
	p.setRows()
}

// reload reads the page shown again.
func (p *Page) reload() tea.Cmd {
	switch p.list.src {
	case srcResults:
		return p.loadResults(p.list.page)
	case srcBrowse:
		return p.browse(p.list.at)
	}
	return p.loadBacklog(p.list.from)
}

func (p *Page) nextPage() tea.Cmd {
	switch p.list.src {
	case srcResults:
		if (p.list.page+1)*PageSize < p.resultCount() {
			p.tbl.Top()
			return p.loadResults(p.list.page + 1)
		}
	case srcBrowse:
		if p.list.hasNext {
			p.tbl.Top()
			return p.browse(p.list.next)
		}
	default:
		if p.list.more && len(p.list.msgs) > 0 {
			// The next page starts at the entry after the last one shown: a page of letters of
			// batches spans fewer entries than it holds letters.
			l := &p.list
			l.froms, l.befores = append(l.froms, l.from), append(l.befores, l.before)
			l.before += int64(len(l.msgs))
			p.tbl.Top()
			return p.loadBacklog(l.msgs[len(l.msgs)-1].Position + 1)
		}
	}
	return status("this is the last page")
}

func (p *Page) prevPage() tea.Cmd {
	switch p.list.src {
	case srcResults:
		if p.list.page > 0 {
			p.tbl.Top()
			return p.loadResults(p.list.page - 1)
		}
	case srcBrowse:
		if p.list.hasPrev {
			p.tbl.Top()
			return p.browse(p.list.prev)
		}
	default:
		if l := &p.list; len(l.froms) > 0 {
			from := l.froms[len(l.froms)-1]
			l.before = l.befores[len(l.befores)-1]
			l.froms, l.befores = l.froms[:len(l.froms)-1], l.befores[:len(l.befores)-1]
			p.tbl.Top()
			return p.loadBacklog(from)
		}
	}
	return status("this is the first page")
}

func (p *Page) resultCount() int {
	if p.scan.result == nil {
		return 0
	}
	return len(p.scan.result.Matches)
}

// setRows lists the letters loaded that the expression being typed selects (all without one).
func (p *Page) setRows() {
	st := p.c.Styles
	now := p.c.Clock.Now()
	msgs := p.list.msgs
	p.shown = p.shown[:0]
	var shownMsgs []data.DeadLetter
	for i := range msgs {
		if p.local == nil || p.local.Match(letterSubject(&msgs[i])) {
			p.shown = append(p.shown, i)
			shownMsgs = append(shownMsgs, msgs[i])
		}
	}
	shown := p.shown
	ns := data.ParseTopic(p.topic).NamespaceName()
	wide, wider := p.w >= wideFrom, p.w >= widerFrom
	p.tbl.SetColumns(letterColumns(p.w, shownMsgs, ns))
	p.tbl.SetRowFunc(len(shown), func(row int) table.Row {
		d := msgs[shown[row]]
		if d.Unreadable != "" {
			return unreadableRow(st, d, wide, wider)
		}
		mark := ""
		if p.marked[d.ID] {
			mark = "●"
		}
		origin := "-"
		if d.Origin != "" {
			origin = naming.ShortName(d.Origin, ns)
		}
		replayed := ""
		if d.ReplayCount > 0 {
			replayed = fmt.Sprintf("×%d", d.ReplayCount)
		}
		cells := []string{mark, common.Age(now, d.PublishTime), d.Key, origin, or(d.OriginID, "-"), rcn(d.Reconsumes), replayed}
		styles := []*lipgloss.Style{&st.Marked, &st.Subtle, nil, nil, &st.Subtle, &st.Retry, &st.Warn}
		if d.Acked && mark == "" {
			// Acknowledged by the subscription, shown because asked for (i): marked apart.
			cells[0], styles[0] = "✓", &st.Subtle
		}
		if wide {
			cells, styles = append(cells, d.PublishTime.UTC().Format("2006-01-02 15:04:05Z")), append(styles, &st.Subtle)
		}
		if wider {
			cells = append(cells, or(shortProducer(d.ProducerName, ns), "-"), common.Bytes(int64(len(d.Payload))))
			styles = append(styles, &st.Subtle, &st.Subtle)
		}
		cells, styles = append(cells, reasonCell(&d)), append(styles, &st.DLQ)
		if wider {
			cells, styles = append(cells, firstLine(d.Payload)), append(styles, &st.Subtle)
		}
		return table.Row{Cells: cells, Styles: styles}
	})
}

// unreadableRow is the row of a letter the cluster could not hand over: its position and why,
// in the reason's column.
func unreadableRow(st *common.Styles, d data.DeadLetter, wide, wider bool) table.Row {
	cells := []string{"", "?", "?", "-", "-", "-", ""}
	if wide {
		cells = append(cells, "-")
	}
	if wider {
		cells = append(cells, "-", "-")
	}
	cells = append(cells, reasonCell(&d))
	if wider {
		cells = append(cells, "")
	}
	styles := make([]*lipgloss.Style, len(cells))
	for i := range styles {
		styles[i] = &st.Error
	}
	return table.Row{Cells: cells, Styles: styles}
}

// reasonCell is what the REASON column says of d: its reason, or why it could not be read.
func reasonCell(d *data.DeadLetter) string {
	if d.Unreadable != "" {
		return fmt.Sprintf("unreadable (position %d): %s", d.Position, d.Unreadable)
	}
	return or(d.Reason, "-")
}

// shortProducer is a producer's name without the persistent://tenant/ns/ that the clients'
// DLQ routers put before it (their names start with the origin topic's).
func shortProducer(name, ns string) string {
	return strings.TrimPrefix(strings.TrimPrefix(name, "persistent://"), ns+"/")
}

// firstLine is the payload's first line, spaces squeezed, or what it is when not text.
func firstLine(b []byte) string {
	if !isText(b) {
		return "<" + common.Plural(len(b), "byte") + " binary>"
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.Join(strings.Fields(line), " ")
}

// letterSubject is what an expression is matched against.
func letterSubject(d *data.DeadLetter) *expr.Message {
	return &expr.Message{Key: d.Key, Properties: d.Properties, Payload: d.Payload, PublishTime: d.PublishTime, ProducerName: d.ProducerName}
}

func or(v, none string) string {
	if v == "" {
		return none
	}
	return v
}

func rcn(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}
