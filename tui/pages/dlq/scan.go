package dlq

import (
	"context"
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// scanState is the screen's whole-DLQ scan: running (with its progress), or done (with its
// result, whose Matches the table pages through).
type scanState struct {
	running  bool
	run      int // counts scans, so that a cancelled one's late messages are ignored
	cancel   context.CancelFunc
	counts   bool   // show the counts when done (S), rather than the letters (a search)
	filter   string // the expression the scan applied ("" none)
	progress data.ScanProgress
	result   *data.ScanResult
	causes   *data.CauseSplit // the result's split into causes (nil without facets)
	at       time.Time        // when the result arrived
}

// stop cancels a running scan; its goroutine ends with it.
func (s *scanState) stop() {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	s.running = false
}

// ScanProgressMsg reports how far scan Run of Topic has come.
type ScanProgressMsg struct {
	Topic    string
	Run      int
	Progress data.ScanProgress
}

// ScanDoneMsg ends scan Run of Topic.
type ScanDoneMsg struct {
	common.Fresh
	Topic  string
	Run    int
	Result *data.ScanResult
	// Causes split Result's letters (nil when the scan counted no facets); worked out in the
	// scan's goroutine, since it costs a pass over the facets' bitsets.
	Causes *data.CauseSplit
	Err    error
}

// scanMsg carries one of the scan's messages and the channel the next comes on.
type scanMsg struct {
	inner tea.Msg
	ch    <-chan tea.Msg
}

func waitScan(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		m, ok := <-ch
		if !ok {
			return nil
		}
		return scanMsg{inner: m, ch: ch}
	}
}

// startScan reads the whole DLQ, counting what filter selects (nil: every letter). The scan
// runs in a goroutine of its own until it ends, esc cancels it, or the page closes.
func (p *Page) startScan(filter *expr.Expr) tea.Cmd { return p.runScan(filter, true) }

// search selects what text (an expression) selects over the whole DLQ and lists it.
func (p *Page) search(text string) tea.Cmd {
	p.drilled = nil // drill sets it again for its own search
	e, err := expr.Parse(text, p.c.Clock.Now())
	if err != nil {
		return status("/" + text + ": " + err.Error())
	}
	if e.Empty() {
		return p.back()
	}
	p.filter, p.expr = e.String(), e
	return p.runScan(e, false)
}

func (p *Page) runScan(filter *expr.Expr, counts bool) tea.Cmd {
	ts, ok := p.c.Source.(data.TriageSource)
	if !ok {
		return status("this cluster connection cannot scan a whole topic")
	}
	p.scan.stop()
	p.scan.run++
	ctx, cancel := context.WithCancel(p.c.Ctx)
	p.scan.running, p.scan.cancel, p.scan.counts = true, cancel, counts
	p.scan.filter = ""
	if filter != nil {
		p.scan.filter = filter.String()
	}
	p.scan.progress = data.ScanProgress{}
	topic, run, view := p.topic, p.scan.run, p.view()
	ch := make(chan tea.Msg, 4)
	go func() {
		defer close(ch)
		res, err := ts.Scan(ctx, data.ScanRequest{Topic: topic, View: view, Filter: filter}, func(pr data.ScanProgress) {
			select { // a screen behind on progress skips some
			case ch <- ScanProgressMsg{Topic: topic, Run: run, Progress: pr}:
			default:
			}
		})
		done := ScanDoneMsg{Topic: topic, Run: run, Result: res, Err: err}
		if err == nil && res != nil && res.Facets != nil {
			split := res.Facets.Causes()
			done.Causes = &split
		}
		ch <- done
	}()
	return waitScan(ch)
}

// scanEvent handles a message of the scan's goroutine and waits for the next.
func (p *Page) scanEvent(m scanMsg) tea.Cmd {
	switch inner := m.inner.(type) {
	case ScanProgressMsg:
		p.scanProgress(inner)
		return waitScan(m.ch)
	case ScanDoneMsg:
		return p.scanDone(inner)
	}
	return nil
}

func (p *Page) scanProgress(m ScanProgressMsg) {
	if m.Topic == p.topic && m.Run == p.scan.run && p.scan.running {
		p.scan.progress = m.Progress
	}
}

func (p *Page) scanDone(m ScanDoneMsg) tea.Cmd {
	if m.Topic != p.topic || m.Run != p.scan.run {
		return nil
	}
	cancelled := !p.scan.running
	p.scan.stop()
	switch {
	case errors.Is(m.Err, dlqops.ErrTopicGone):
		return errorCmd("scan", errors.New("the DLQ was deleted while it was scanned"))
	case cancelled || errors.Is(m.Err, context.Canceled):
		read := int64(0)
		if m.Result != nil {
			read = m.Result.Read
		}
		return status("scan cancelled after " + common.Counted(read, "letter"))
	case m.Err != nil:
		return errorCmd("scan", m.Err)
	}
	if p.drilled != nil && !p.scan.counts && m.Result.Stats.Letters == 0 {
		// An action took every letter of the group searched: back to the counts, read again.
		p.stale = true
		return tea.Batch(status("no letter left in "+p.filter+": the counts again"), p.undrill())
	}
	p.scan.result, p.scan.causes, p.scan.at = m.Result, m.Causes, p.c.Clock.Now()
	p.counts.set(p.c.Styles, m.Result, m.Causes, p.c.Clock.Now().Location())
	p.counts.shown = p.scan.counts
	// The page of the last result is of letters that may have gone: never shown beside the
	// new counts.
	p.list.src, p.list.page, p.list.msgs = srcResults, 0, nil
	p.setRows()
	p.tbl.Top()
	return p.loadResults(0)
}

func errorCmd(what string, err error) tea.Cmd {
	return func() tea.Msg { return common.ErrorMsg{What: what, Err: err} }
}

// openPrompt opens the prompt line for a search expression or a position.
func (p *Page) openPrompt(kind int) {
	p.prompt, p.inErr, p.inMsg = kind, nil, ""
	switch kind {
	case promptFilter:
		p.in.SetPrompt("/", "reason=timeout, key=…, property.NAME=…, payload~REGEX, published>=-2h, or text")
		p.in.SetValue(p.filter)
		p.checkPrompt()
	case promptFrom:
		p.in.SetPrompt("open at: ", "earliest, latest, 2026-11-30 08:00, -2h, or a message id 12:34")
		p.in.SetValue("")
	case promptPurge:
		p.in.SetPrompt("purge how many letters from the head of the backlog? ", "enter: all "+p.backlog().Words())
		p.in.SetValue("")
	case promptSubscribe:
		p.in.SetPrompt("create subscription (earliest): ", "a name")
	case promptRetention:
		p.in.SetPrompt("retention of "+data.ParseTopic(p.topic).NamespaceName()+": ", "7d 1GB (-1: unlimited)")
	case promptConfirm:
		p.in.SetPrompt("confirm: ", "type "+p.confirm.want+", then enter (esc: no)")
		p.in.SetValue("")
	}
	p.in.SetWidth(p.w)
	p.in.Focus()
}

func (p *Page) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	if p.prompt == promptConfirm && p.confirm.want == "y" {
		// A yes-or-no question takes one key.
		c := p.confirm
		switch msg.String() {
		case "y", "Y":
			p.confirm = nil
			p.closePrompt()
			return c.do()
		case "n", "N", "esc":
			p.confirm = nil
			p.closePrompt()
			return status("not confirmed: nothing done")
		}
		return nil
	}
	switch msg.String() {
	case "esc":
		if p.prompt == promptConfirm {
			p.confirm = nil
			p.closePrompt()
			return status("not confirmed: nothing done")
		}
		p.closePrompt()
		p.filterLoaded(nil)
		return nil
	case "enter":
		v := strings.TrimSpace(p.in.Value())
		switch p.prompt {
		case promptFilter:
			if p.inErr != nil {
				return nil // the error is on screen; the prompt stays
			}
			p.closePrompt()
			p.filterLoaded(nil)
			if v == "" {
				return p.back()
			}
			return p.search(v)
		case promptFrom:
			from, err := data.ParseFrom(v, p.c.Clock.Now())
			if err != nil {
				p.inMsg = err.Error()
				return nil
			}
			p.closePrompt()
			p.list.src = srcBrowse
			p.tbl.Top()
			return p.browse(from)
		case promptPurge:
			p.closePrompt()
			return p.purgeCount(v)
		case promptSubscribe:
			p.closePrompt()
			return p.subscribeName(v)
		case promptRetention:
			p.closePrompt()
			return p.retentionValue(v)
		case promptConfirm:
			c := p.confirm
			p.closePrompt()
			p.confirm = nil
			if !strings.EqualFold(v, c.want) || (c.want != "y" && v != c.want) {
				return status("not confirmed: nothing done")
			}
			return c.do()
		}
	}
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	if p.prompt == promptFilter {
		p.checkPrompt()
	} else {
		p.inMsg = ""
	}
	return cmd
}

func (p *Page) closePrompt() {
	p.prompt, p.inErr, p.inMsg = promptNone, nil, ""
	p.in.Blur()
}

// checkPrompt parses what is typed, so that an error shows as it is made; what parses
// filters the letters loaded at once (enter searches the whole DLQ). What does not keeps the
// last filter that did.
func (p *Page) checkPrompt() {
	p.inErr = nil
	e, err := expr.Parse(p.in.Value(), p.c.Clock.Now())
	if err != nil {
		errors.As(err, &p.inErr)
		return
	}
	if e.Empty() {
		e = nil
	}
	p.filterLoaded(e)
}

// filterLoaded shows the letters loaded that e selects (nil: all), keeping the cursor on the
// letter it was on while that is still shown.
func (p *Page) filterLoaded(e *expr.Expr) {
	if p.indexMode || (e == nil && p.local == nil) {
		return
	}
	cur := p.current()
	p.local = e
	p.setRows()
	if cur == nil {
		return
	}
	p.tbl.Top()
	for row, i := range p.shown {
		if p.list.msgs[i].ID == cur.ID {
			p.tbl.SetCursor(row)
		}
	}
}

// drill searches the letters of the count under the cursor, within the current search: the
// two expressions joined by the grammar, so that a search with "or" keeps its meaning.
func (p *Page) drill() tea.Cmd {
	f := p.counts.drill()
	if f == "" {
		return nil
	}
	now := p.c.Clock.Now()
	sel, err := expr.Parse(f, now)
	if err != nil {
		return status("this count's selection does not parse: " + err.Error())
	}
	if p.scan.filter != "" {
		within, err := expr.Parse(p.scan.filter, now)
		if err != nil {
			return status("the search does not parse: " + err.Error())
		}
		sel = within.And(sel)
	}
	from := &drilledFrom{result: p.scan.result, causes: p.scan.causes, at: p.scan.at, filter: p.filter, expr: p.expr,
		cursor: p.counts.tbl.Cursor()}
	p.counts.shown = false
	cmd := p.search(sel.String())
	if p.scan.running {
		p.drilled = from
	}
	return cmd
}

// drilledFrom are the counts a search was made from with enter, to go back to.
type drilledFrom struct {
	result *data.ScanResult
	causes *data.CauseSplit
	at     time.Time
	filter string
	expr   *expr.Expr
	cursor int
}

// undrill goes back from a search made with enter to the counts it was made from: as they
// were when nothing changed since, else read again.
func (p *Page) undrill() tea.Cmd {
	from := p.drilled
	p.drilled = nil
	p.scan.stop()
	p.filter, p.expr = from.filter, from.expr
	if p.stale || from.result == nil {
		p.stale = false
		return p.runScan(from.expr, true)
	}
	p.scan.result, p.scan.causes, p.scan.at = from.result, from.causes, from.at
	p.counts.set(p.c.Styles, from.result, from.causes, p.c.Clock.Now().Location())
	p.counts.tbl.SetCursor(from.cursor)
	p.counts.shown = true
	p.list.src, p.list.page, p.list.msgs = srcResults, 0, nil
	p.setRows()
	return p.loadResults(0)
}
