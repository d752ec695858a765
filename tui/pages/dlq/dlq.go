// Package dlq is the dead-letters screen: a DLQ's letters, each with its origin topic
// (REAL_TOPIC), original id (ORIGIN_MESSAGE_ID), reconsume count and reason; a health line (no
// subscription and no retention, climbing redeliveries, a growing DLQ); and the DLQ's replay
// history. The table lists one of three things: the backlog of the DLQ's subscription a page at
// a time, the letters of a whole-DLQ scan or search (every retained letter, or those an
// expression selects), or the DLQ read from any position. A scan also counts the letters by
// reason, origin, subscription, key, hour and reconsume times, and a count drills down into a
// search. Marks or the search select what a replay moves. Nothing on this screen acknowledges a
// letter or creates a subscription. Without a topic it lists the cluster's DLQ topics. New
// opens it.
package dlq

import (
	"context"
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// PageSize is how many dead letters one page shows.
const PageSize = 50

// HistoryRows is how many past replays the screen lists.
const HistoryRows = 5

// StateMsg carries the DLQ's stats and what its health is judged from.
type StateMsg struct {
	common.Fresh
	Topic     string
	Detail    *data.TopicDetail
	Retention *data.Retention // nil when the source cannot tell
	Origin    string          // the topic and subscription the DLQ's letters died on ("" unknown)
	OriginSub string
	Redeliver float64 // the origin subscription's redelivery rate
	History   []data.HistoryEntry
}

// What the prompt line is asking for.
const (
	promptNone = iota
	promptFilter
	promptFrom
	promptPurge     // how many letters to purge
	promptSubscribe // the name of a subscription to create
	promptRetention // a retention policy
	promptConfirm   // the answer to p.confirm
)

// Page is the dead-letters screen.
type Page struct {
	c         *common.Common
	topic     string
	sub       string // "" until the DLQ's stats name its subscriptions
	detail    *data.TopicDetail
	retention *data.Retention
	origin    string
	originSub string
	history   []data.HistoryEntry
	backlogs  []int64
	redeliver []float64

	list    letters // what the table lists (letters.go)
	scan    scanState
	counts  countsView
	marked  map[string]bool
	filter  string     // the search expression in effect ("" none)
	expr    *expr.Expr // …parsed
	local   *expr.Expr // the expression being typed after /, applied to the letters loaded
	shown   []int      // indexes into list.msgs that pass local (all without it)
	prompt  int
	confirm *confirmation // the question promptConfirm asks (actions.go)
	in      input.Model
	inErr   *expr.SyntaxError // the expression being typed does not parse
	inMsg   string            // another problem with what is typed
	tbl     table.Model
	loading bool // letters are being read
	// stateLoading: the DLQ's stats and state are being read (loadState)
	stateLoading bool
	loadErr      error // the DLQ could not be read
	w, h         int

	indexMode bool
	index     []data.TopicRow

	// includeAcked: the list and the scans show the letters the subscription acknowledged too
	// (marked), while the DLQ retains them.
	includeAcked bool
	// stale: the DLQ's letters changed since the counts and the search results were read (an
	// action here or elsewhere): they are read again as soon as no scan runs.
	stale bool
	// drilled holds the counts a search was made from with enter (nil for a search typed):
	// esc goes back to them, and so does an action that leaves the search no letter.
	drilled *drilledFrom
}

// view is what the screen's reads show: the subscription's letters (every retained letter
// without one), those it acknowledged too with includeAcked.
func (p *Page) view() data.View { return data.View{Sub: p.sub, IncludeAcked: p.includeAcked} }

// New returns the screen of the DLQ topic read through sub ("" picks its first
// subscription); an empty topic lists every DLQ.
func New(c *common.Common, topic, sub string) *Page {
	p := &Page{c: c, topic: topic, sub: sub, marked: map[string]bool{}, indexMode: topic == ""}
	p.list.from = 1
	p.in = input.New(c, "/", "")
	p.tbl = table.New(c, nil)
	p.counts.tbl = table.New(c, countColumns(16))
	if p.indexMode {
		p.tbl.SetColumns(indexColumns)
	} else {
		p.tbl.SetColumns(letterColumns(0, nil, ""))
	}
	return p
}

func (p *Page) Init() tea.Cmd {
	if p.indexMode {
		return p.loadIndex()
	}
	return p.loadState()
}

func (p *Page) loadState() tea.Cmd {
	p.stateLoading = true
	t := p.topic
	return common.LoadFor(p.c, p, "DLQ "+naming.ShortName(t, ""), func(ctx context.Context, s data.Source) (StateMsg, error) {
		return readState(ctx, s, t)
	}, func(m StateMsg) tea.Msg { return m })
}

// readState reads the DLQ's stats, its namespace's retention, the origin subscription's
// redelivery rate and the replay history.
func readState(ctx context.Context, s data.Source, t string) (StateMsg, error) {
	m := StateMsg{Topic: t}
	d, err := s.TopicDetail(ctx, t)
	if err != nil {
		return m, err
	}
	m.Detail = d
	m.Origin, m.OriginSub = d.Verdict.Origin, d.Verdict.OriginSub
	if m.Origin != "" && m.OriginSub != "" {
		if od, err := s.TopicDetail(ctx, m.Origin); err == nil {
			for _, os := range od.Subscriptions {
				if os.Name == m.OriginSub {
					m.Redeliver = os.RateRedeliver
				}
			}
		}
	}
	if ds, ok := s.(data.DeadLetterSource); ok {
		if r, err := ds.Retention(ctx, t); err == nil {
			m.Retention = &r
		}
		m.History, _ = ds.History(ctx, t, HistoryRows)
	}
	return m, nil
}

func (p *Page) Title() string {
	if p.indexMode {
		return "Dead letters"
	}
	return "Dead letters " + naming.ShortName(p.topic, "")
}
func (p *Page) Capturing() bool { return p.prompt != promptNone }

// Streaming: a running scan reports as it goes.
func (p *Page) Streaming() bool { return p.scan.running }
func (p *Page) Busy() bool      { return p.loading || p.stateLoading || p.scan.running }

// Close stops a scan that is still running.
func (p *Page) Close() { p.scan.stop() }

// Loaded is the dead letters the table lists (tests).
func (p *Page) Loaded() []data.DeadLetter { return p.list.msgs }

var (
	keyMark     = key.NewBinding(key.WithKeys("space", "v"), key.WithHelp("space", "mark"))
	keyMarkAll  = key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "mark all shown"))
	keyReason   = key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "search its reason"))
	keyReplay   = key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "replay…"))
	keyFlow     = key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "flow"))
	keySub      = key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "use the next subscription"))
	keyNextPage = key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next page"))
	keyPrevPage = key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous page"))
	keyCounts   = key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "counts"))
	keyScan     = key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "count again"))
	keyFrom     = key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open at…"))
	keyAcked    = key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "show acknowledged letters too"))
)

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	switch msg := msg.(type) {
	case IndexMsg:
		if p.indexMode {
			p.loading = false
			p.index = msg.Rows
			p.setIndex()
		}
	case StateMsg:
		if p.indexMode || msg.Topic != p.topic {
			return p, nil
		}
		p.stateLoading, p.loadErr = false, nil
		first := p.detail == nil
		sub, before := p.sub, p.backlog()
		p.setState(msg)
		if first && p.sub == "" && p.list.src == srcBacklog {
			// Nothing to peek through: read what the DLQ retains instead.
			p.list.src = srcBrowse
			return p, p.browse(data.From{Earliest: true})
		}
		// The subscription's letters changed: what was counted or searched is read again.
		changed := !first && sub == p.sub && p.backlog() != before
		p.stale = p.stale || changed
		var cmds []tea.Cmd
		if p.list.src == srcBacklog && (first || changed) {
			cmds = append(cmds, p.loadBacklog(p.list.from))
		}
		return p, tea.Batch(append(cmds, p.catchUp())...)
	case BacklogMsg, ResultsMsg, BrowsedMsg:
		p.loading = false
		p.takeLetters(msg)
	case scanMsg:
		return p, p.scanEvent(msg)
	case ScanProgressMsg:
		p.scanProgress(msg)
	case ScanDoneMsg:
		return p, p.scanDone(msg)
	case ActedMsg:
		if msg.Topic == p.topic {
			p.marked, p.stale = map[string]bool{}, true
			return p, tea.Batch(status(msg.Status), p.loadState(), p.reload())
		}
	case common.ChangedMsg:
		if msg.Topic == data.ParseTopic(p.topic).String() && !p.indexMode {
			// Marked letters were moved or discarded: the marks were for them. A search's
			// positions name letters that may be gone: its page is read again, and the counts
			// and the search with the state that follows.
			p.marked, p.stale = map[string]bool{}, true
			return p, tea.Batch(p.loadState(), p.reload())
		}
	case common.ErrorMsg:
		p.loading = false
		if msg.Owner == p {
			p.stateLoading, p.loadErr = false, msg.Err
		}
	case common.RefreshMsg:
		if p.indexMode {
			return p, p.loadIndex()
		}
		if msg.Forced {
			return p, tea.Batch(p.loadState(), p.reload())
		}
		// The state is read at every refresh unless its last reading is still on its way: a
		// page of letters being read does not hold it back.
		if !p.stateLoading {
			return p, p.loadState()
		}
	case common.MouseMsg:
		t := p.activeTable()
		if msg.Wheel != 0 {
			t.Move(msg.Wheel)
		} else if msg.Click {
			if i := t.RowAt(msg.Y - 3); i >= 0 {
				t.SetCursor(i)
			}
		}
	case tea.KeyPressMsg:
		if p.prompt != promptNone {
			return p, p.promptKey(msg)
		}
		return p, p.key(msg)
	}
	return p, nil
}

// gone reports that the DLQ was not found at the last reading, whatever was read before: the
// screen turns into the not-found page until it is there again.
func (p *Page) gone() bool {
	return p.loadErr != nil && common.ProblemOf(p.loadErr) == common.ProblemNotFound
}

// activeTable is the table the cursor keys move: the counts while they are shown.
func (p *Page) activeTable() *table.Model {
	if p.counts.shown {
		return &p.counts.tbl
	}
	return &p.tbl
}

func (p *Page) key(msg tea.KeyPressMsg) tea.Cmd {
	km := p.c.Keys
	if p.indexMode {
		return p.indexKey(msg)
	}
	if (p.detail == nil || p.gone()) && !key.Matches(msg, km.Back) {
		if p.loadErr != nil { // nothing read, or the DLQ went: nothing to act on
			return status(common.Subject{Topic: p.topic}.Missing(p.loadErr) + ": " + common.ProblemOf(p.loadErr).Words())
		}
		return nil
	}
	if key.Matches(msg, km.Back) {
		return p.back()
	}
	if p.move(msg) {
		return nil
	}
	switch {
	case key.Matches(msg, km.Filter):
		p.openPrompt(promptFilter)
	case key.Matches(msg, keyFrom):
		p.openPrompt(promptFrom)
	case key.Matches(msg, keyScan):
		return p.startScan(p.expr)
	case key.Matches(msg, keyCounts):
		// The counts of the last scan, or a scan when there is none; again: the letters.
		if p.scan.result == nil && !p.scan.running {
			return p.startScan(p.expr)
		}
		p.counts.shown = !p.counts.shown
	case p.counts.shown && key.Matches(msg, km.Enter):
		return p.drill()
	case key.Matches(msg, keyReplay):
		return p.replay()
	case key.Matches(msg, keyDiscard):
		return p.discard()
	case key.Matches(msg, keyPurge):
		return p.purge()
	case key.Matches(msg, keySubscribe):
		return p.subscribe()
	case key.Matches(msg, keyRetention):
		return p.setRetention()
	case key.Matches(msg, keyFlow):
		if p.origin != "" {
			return common.Navigate(common.NavigateMsg{Page: common.PageFlow, Topic: p.topic})
		}
		return status("the DLQ's letters name no origin topic: no flow to show")
	case p.counts.shown:
		return nil
	case key.Matches(msg, keyMark):
		return p.toggleMark()
	case key.Matches(msg, keyMarkAll):
		for _, i := range p.shown {
			if d := p.list.msgs[i]; d.Unreadable == "" {
				p.marked[d.ID] = true
			}
		}
		p.setRows()
	case key.Matches(msg, keyResend):
		return p.resend()
	case key.Matches(msg, keyReason):
		if d := p.current(); d != nil && d.Unreadable == "" {
			f := "reason=" + expr.Quote(d.Reason)
			return p.search(f)
		}
	case key.Matches(msg, km.Enter):
		if d := p.current(); d != nil {
			if d.Unreadable != "" {
				return status(unreadableNote)
			}
			return p.open(d)
		}
	case key.Matches(msg, keyNextPage):
		return p.nextPage()
	case key.Matches(msg, keyPrevPage):
		return p.prevPage()
	case key.Matches(msg, keySub):
		return p.nextSubscription()
	case key.Matches(msg, keyAcked):
		return p.toggleAcked()
	}
	return nil
}

// move moves the cursor of the table shown when msg is a movement key, skipping the counts'
// headers; false for any other key.
func (p *Page) move(msg tea.KeyPressMsg) bool {
	km, t := p.c.Keys, p.activeTable()
	for _, m := range []struct {
		key  key.Binding
		move func()
		dir  int // the way a section header under the cursor is skipped
	}{
		{km.Up, func() { t.Move(-1) }, -1}, {km.Down, func() { t.Move(1) }, 1},
		{km.PageUp, t.PageUp, -1}, {km.PageDown, t.PageDown, 1},
		{km.HalfUp, t.HalfUp, -1}, {km.HalfDown, t.HalfDown, 1},
		{km.Top, t.Top, 1}, {km.Bottom, t.Bottom, -1},
	} {
		if key.Matches(msg, m.key) {
			m.move()
			p.counts.skipHeader(m.dir)
			return true
		}
	}
	return false
}

// toggleMark marks the letter under the cursor, or unmarks it, and moves to the next.
func (p *Page) toggleMark() tea.Cmd {
	d := p.current()
	switch {
	case d == nil:
		return nil
	case d.Unreadable != "":
		return status(unreadableNote)
	}
	if p.marked[d.ID] {
		delete(p.marked, d.ID)
	} else {
		p.marked[d.ID] = true
	}
	p.tbl.Move(1)
	p.setRows()
	return nil
}

// catchUp reads the counts and the search results again once they are stale and no scan runs,
// as they were shown: counts, or the search's letters.
func (p *Page) catchUp() tea.Cmd {
	if !p.stale || p.scan.running || p.scan.result == nil {
		return nil
	}
	p.stale = false
	return p.runScan(p.expr, p.counts.shown)
}

// back undoes the last thing: the counts, then a search or a browse (back to the backlog),
// then the marks; then it leaves the screen.
func (p *Page) back() tea.Cmd {
	switch {
	case p.scan.running:
		p.scan.stop()
		return status("scan cancelled")
	case p.counts.shown:
		p.counts.shown = false
		return nil
	case p.drilled != nil:
		return p.undrill()
	case p.list.src != srcBacklog && p.sub != "" && !p.includeAcked:
		p.filter, p.expr = "", nil
		p.scan.result = nil
		p.list.src = srcBacklog
		p.list.resetPages()
		return p.loadBacklog(1)
	case len(p.marked) > 0:
		p.marked = map[string]bool{}
		p.setRows()
		return nil
	}
	return common.Back
}

// open shows one letter on the messages screen, read from its own position.
func (p *Page) open(d *data.DeadLetter) tea.Cmd {
	pos, err := data.ParsePosition(d.ID)
	if err != nil {
		return status("cannot open " + d.ID + ": " + err.Error())
	}
	return common.Navigate(common.NavigateMsg{Page: common.PageMessages, Topic: p.topic, Filter: p.filter,
		Extra: data.From{ID: pos.MessageID(), HasID: true}})
}

func status(s string) tea.Cmd { return func() tea.Msg { return common.StatusMsg(s) } }

// replay opens the replay screen on the selection: the marked dead letters, else the search
// expression (the engine applies it to the whole DLQ), else every dead letter. A read-only
// session opens it too: its preview is the exact count of what a replay would take; the
// screen refuses the run itself.
func (p *Page) replay() tea.Cmd {
	if refuse := p.notLetters("replay"); refuse != nil {
		return refuse
	}
	req, ok := p.selection()
	if !ok {
		return status("the DLQ has no subscription to replay through (A adds one)")
	}
	return common.Navigate(common.NavigateMsg{Page: common.PageReplay, Topic: p.topic, Sub: p.sub, Extra: req})
}

// selection is what a replay or a discard takes: the marked letters, else the search (the
// engine applies it to the whole DLQ), else every letter. ok is false without a subscription.
func (p *Page) selection() (req data.ReplayRequest, ok bool) {
	if p.sub == "" {
		return req, false
	}
	req = data.ReplayRequest{DLQ: p.topic, Subscription: p.sub, Total: p.backlog().N}
	switch {
	case len(p.marked) > 0:
		for _, d := range p.list.msgs {
			if p.marked[d.ID] {
				req.IDs = append(req.IDs, d.ID)
			}
		}
		for id := range p.marked { // marked on another page
			if !slices.Contains(req.IDs, id) {
				req.IDs = append(req.IDs, id)
			}
		}
	case p.expr != nil:
		req.Filters = []string{p.expr.String()}
	}
	return req, true
}

func (p *Page) setState(m StateMsg) {
	p.detail, p.retention, p.history = m.Detail, m.Retention, m.History
	p.origin, p.originSub = m.Origin, m.OriginSub
	p.redeliver = append(p.redeliver, m.Redeliver)
	if len(p.redeliver) > 2 {
		p.redeliver = p.redeliver[1:]
	}
	found := false
	for _, s := range m.Detail.Subscriptions {
		found = found || s.Name == p.sub
	}
	if !found {
		// The DLQ's main subscription (its only durable one, normally the initial one), else
		// its first.
		p.sub = m.Detail.Stats.Main.Sub
		for _, s := range m.Detail.Subscriptions {
			if p.sub == "" && !s.NonDurable {
				p.sub = s.Name
			}
		}
		p.backlogs = nil // a series of another subscription's backlog says nothing of this one's
	}
	// Growth is judged on the letters of the subscription shown, never on letterbox's own
	// readers (data leaves them out) nor on a sum over subscriptions.
	p.backlogs = append(p.backlogs, p.backlog().N)
	if len(p.backlogs) > 5 {
		p.backlogs = p.backlogs[1:]
	}
}

// current is the dead letter under the cursor.
// unreadableNote is what the screen says when asked to act on a letter it could not read.
const unreadableNote = "the cluster could not hand this letter over (its reason is in the row): nothing to act on"

func (p *Page) current() *data.DeadLetter {
	row := p.tbl.Cursor()
	if row < 0 || row >= len(p.shown) {
		return nil
	}
	return &p.list.msgs[p.shown[row]]
}
