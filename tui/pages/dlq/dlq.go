// Package dlq is the dead-letters screen: a DLQ read through its (initial) subscription,
// a page at a time without moving the cursor, each dead letter with its origin topic
// (REAL_TOPIC), original id (ORIGIN_MESSAGE_ID), reconsume count, reason properties and age;
// selection by marks or by filter for a replay; a health line (no subscription and no
// retention, climbing redeliveries, a growing DLQ); and the replay history of the DLQ.
// Without a topic it lists the cluster's DLQ topics.
package dlq

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// PageSize is how many dead letters one page peeks.
const PageSize = 50

// HistoryRows is how many past replays the screen lists.
const HistoryRows = 5

// StateMsg carries the DLQ's stats and what its health is judged from.
type StateMsg struct {
	common.Fresh
	Topic     string
	Detail    *data.TopicDetail
	Retention *data.Retention // nil when the source cannot tell
	Origin    string          // the topic and subscription the DLQ derives from ("" unknown)
	OriginSub string
	Redeliver float64 // the origin subscription's redelivery rate
	History   []data.HistoryEntry
}

// PageMsg carries one page of dead letters.
type PageMsg struct {
	common.Fresh
	Topic, Sub string
	From       int
	Msgs       []data.Message
}

// IndexMsg carries the DLQ topics of the cluster.
type IndexMsg struct {
	common.Fresh
	Rows []data.TopicRow
}

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
	msgs      []data.DeadLetter
	shown     []int // indexes into msgs that pass the filter
	from      int
	more      bool
	marked    map[string]bool
	filter    string // the text typed after /
	expr      *replay.Filter
	prompt    bool
	in        input.Model
	tbl       table.Model
	indexMode bool
	index     []data.TopicRow
	loading   bool
	w, h      int
}

// New returns the screen of the DLQ topic read through sub ("" picks its first
// subscription); an empty topic lists every DLQ.
func New(c *common.Common, topic, sub string) *Page {
	p := &Page{c: c, topic: topic, sub: sub, from: 1, marked: map[string]bool{}, indexMode: topic == ""}
	p.in = input.New(c, "/", "property.reason=…, key=…, payload~regex, or any text")
	p.tbl = table.New(c, nil)
	if p.indexMode {
		p.tbl.SetColumns([]table.Column{
			{Title: "DLQ", Flex: true, Min: 20},
			{Title: "BACKLOG", Width: 7, Right: true},
			{Title: "IN/s", Width: 6, Right: true},
			{Title: "SUBS", Width: 4, Right: true},
		})
	} else {
		p.tbl.SetColumns([]table.Column{
			{Title: " ", Width: 1},
			{Title: "AGE", Width: 4, Right: true},
			{Title: "KEY", Width: 12, Droppable: true},
			{Title: "ORIGIN", Width: 14},
			{Title: "ORIGINAL ID", Width: 11, Droppable: true},
			{Title: "RCN", Width: 3, Right: true},
			{Title: "REASON", Flex: true, Min: 14},
		})
	}
	return p
}

func (p *Page) Init() tea.Cmd {
	if p.indexMode {
		return p.loadIndex()
	}
	return p.loadState()
}

func (p *Page) loadIndex() tea.Cmd {
	p.loading = true
	return common.Load(p.c, "DLQ topics", func(ctx context.Context, s data.Source) ([]data.TopicRow, error) {
		rows, err := s.Topics(ctx, "")
		var out []data.TopicRow
		for _, r := range rows {
			if r.Kind == data.KindDLQ && r.Parent == "" {
				out = append(out, r)
			}
		}
		return out, err
	}, func(r []data.TopicRow) tea.Msg { return IndexMsg{Rows: r} })
}

func (p *Page) loadState() tea.Cmd {
	p.loading = true
	t := p.topic
	return common.Load(p.c, "DLQ "+data.ShortName(t, ""), func(ctx context.Context, s data.Source) (StateMsg, error) {
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
	if rows, err := s.Topics(ctx, data.ParseTopic(t).NS()); err == nil {
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		if o, sub, ok := data.Derive(t, names); ok {
			m.Origin, m.OriginSub = o, sub
			if od, err := s.TopicDetail(ctx, o); err == nil {
				for _, os := range od.Subscriptions {
					if os.Name == sub {
						m.Redeliver = os.RateRedeliver
					}
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

func (p *Page) loadPage(from int) tea.Cmd {
	if p.sub == "" {
		return nil
	}
	p.loading = true
	t, sub := p.topic, p.sub
	return common.Load(p.c, "peek "+data.ShortName(t, ""), func(ctx context.Context, s data.Source) ([]data.Message, error) {
		return s.Peek(ctx, t, sub, from, PageSize)
	}, func(msgs []data.Message) tea.Msg { return PageMsg{Topic: t, Sub: sub, From: from, Msgs: msgs} })
}

func (p *Page) Title() string {
	if p.indexMode {
		return "Dead letters"
	}
	return "Dead letters " + data.ShortName(p.topic, "")
}
func (p *Page) Capturing() bool { return p.prompt }
func (p *Page) Busy() bool      { return p.loading }
func (p *Page) Close()          {}

// Loaded is the dead letters of the current page (tests).
func (p *Page) Loaded() []data.DeadLetter { return p.msgs }

var (
	keyMark     = key.NewBinding(key.WithKeys("space", "v"), key.WithHelp("space", "mark"))
	keyMarkAll  = key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "mark all shown"))
	keyReason   = key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "filter by its reason"))
	keyReplay   = key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "replay…"))
	keyFlow     = key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "flow"))
	keySub      = key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "next subscription"))
	keyNextPage = key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next page"))
	keyFirst    = key.NewBinding(key.WithKeys("["), key.WithHelp("[", "first page"))
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
		p.loading = false
		first := p.detail == nil
		p.setState(msg)
		if first || msg.Detail.Stats.Backlog != p.backlogBefore() {
			return p, p.loadPage(p.from)
		}
	case PageMsg:
		if msg.Topic == p.topic && msg.Sub == p.sub {
			p.loading = false
			p.from = msg.From
			p.more = len(msg.Msgs) == PageSize
			p.msgs = p.msgs[:0]
			for _, m := range msg.Msgs {
				p.msgs = append(p.msgs, data.NewDeadLetter(m))
			}
			p.applyFilter()
		}
	case common.ErrorMsg:
		p.loading = false
	case common.RefreshMsg:
		if p.indexMode {
			return p, p.loadIndex()
		}
		if msg.Forced {
			return p, tea.Batch(p.loadState(), p.loadPage(p.from))
		}
		if !p.loading {
			return p, p.loadState()
		}
	case common.MouseMsg:
		if msg.Wheel != 0 {
			p.tbl.Move(msg.Wheel)
		} else if msg.Click {
			if i := p.tbl.RowAt(msg.Y - 3); i >= 0 {
				p.tbl.SetCursor(i)
			}
		}
	case tea.KeyPressMsg:
		if p.prompt {
			return p, p.promptKey(msg)
		}
		return p, p.key(msg)
	}
	return p, nil
}

func (p *Page) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		p.prompt = false
		p.in.Blur()
		p.setFilter(p.in.Value())
		return nil
	case "esc":
		p.prompt = false
		p.in.Blur()
		p.in.SetValue(p.filter)
		return nil
	}
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd
}

func (p *Page) key(msg tea.KeyPressMsg) tea.Cmd {
	km := p.c.Keys
	switch {
	case key.Matches(msg, km.Back):
		if !p.indexMode && (p.filter != "" || len(p.marked) > 0) {
			p.marked = map[string]bool{}
			p.setFilter("")
			return nil
		}
		return common.Back
	case key.Matches(msg, km.Up):
		p.tbl.Move(-1)
	case key.Matches(msg, km.Down):
		p.tbl.Move(1)
	case key.Matches(msg, km.PageUp):
		p.tbl.PageUp()
	case key.Matches(msg, km.PageDown):
		p.tbl.PageDown()
	case key.Matches(msg, km.Top):
		p.tbl.Top()
	case key.Matches(msg, km.Bottom):
		p.tbl.Bottom()
	case p.indexMode && key.Matches(msg, km.Enter):
		if i := p.tbl.Cursor(); i < len(p.index) {
			return common.Navigate(common.NavigateMsg{Page: common.PageDLQ, Topic: p.index[i].Name})
		}
	case p.indexMode:
		return nil
	case key.Matches(msg, km.Filter):
		p.prompt = true
		p.in.SetValue(p.filter)
		p.in.Focus()
	case key.Matches(msg, keyMark):
		if d := p.current(); d != nil {
			if p.marked[d.ID] {
				delete(p.marked, d.ID)
			} else {
				p.marked[d.ID] = true
			}
			p.tbl.Move(1)
			p.setRows()
		}
	case key.Matches(msg, keyMarkAll):
		for _, i := range p.shown {
			p.marked[p.msgs[i].ID] = true
		}
		p.setRows()
	case key.Matches(msg, keyReason):
		if d := p.current(); d != nil && d.ReasonKey != "" {
			p.setFilter("property." + d.ReasonKey + "=" + d.Reason)
			p.in.SetValue(p.filter)
		}
	case key.Matches(msg, keyReplay):
		return p.replay()
	case key.Matches(msg, keyFlow):
		if p.origin != "" {
			return common.Navigate(common.NavigateMsg{Page: common.PageFlow, Topic: p.origin, Sub: p.originSub})
		}
		return status("the DLQ's name derives from no topic here: no flow to show")
	case key.Matches(msg, km.Enter):
		if p.sub != "" {
			return common.Navigate(common.NavigateMsg{Page: common.PageMessages, Topic: p.topic, Sub: p.sub})
		}
	case key.Matches(msg, keyNextPage):
		if p.more {
			return p.loadPage(p.from + PageSize)
		}
	case key.Matches(msg, keyFirst):
		return p.loadPage(1)
	case key.Matches(msg, keySub):
		if p.detail != nil && len(p.detail.Subscriptions) > 1 {
			subs := p.detail.Subscriptions
			for i, s := range subs {
				if s.Name == p.sub {
					p.sub = subs[(i+1)%len(subs)].Name
					break
				}
			}
			p.marked = map[string]bool{}
			return p.loadPage(1)
		}
	}
	return nil
}

func status(s string) tea.Cmd { return func() tea.Msg { return common.StatusMsg(s) } }

// replay opens the replay screen on the selection: the marked dead letters, else the
// filter (an engine expression as is; a text search as the ids it matches on this page),
// else every dead letter.
func (p *Page) replay() tea.Cmd {
	if p.sub == "" {
		return status("the DLQ has no subscription to replay through")
	}
	req := data.ReplayRequest{DLQ: p.topic, Subscription: p.sub}
	if p.detail != nil {
		for _, s := range p.detail.Subscriptions {
			if s.Name == p.sub {
				req.Total = s.Backlog
			}
		}
	}
	switch {
	case len(p.marked) > 0:
		for _, d := range p.msgs {
			if p.marked[d.ID] {
				req.IDs = append(req.IDs, d.ID)
			}
		}
		for id := range p.marked { // marked on another page
			if !containsID(req.IDs, id) {
				req.IDs = append(req.IDs, id)
			}
		}
	case p.expr != nil:
		req.Filters = []string{p.filter}
	case p.filter != "":
		for _, i := range p.shown {
			req.IDs = append(req.IDs, p.msgs[i].ID)
		}
		if len(req.IDs) == 0 {
			return status("nothing on this page matches " + p.filter)
		}
	}
	return common.Navigate(common.NavigateMsg{Page: common.PageReplay, Topic: p.topic, Sub: p.sub, Extra: req})
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func (p *Page) backlogBefore() int64 {
	if n := len(p.backlogs); n >= 2 {
		return p.backlogs[n-2]
	}
	return -1
}

func (p *Page) setState(m StateMsg) {
	p.detail, p.retention, p.history = m.Detail, m.Retention, m.History
	p.origin, p.originSub = m.Origin, m.OriginSub
	p.backlogs = append(p.backlogs, m.Detail.Stats.Backlog)
	if len(p.backlogs) > 5 {
		p.backlogs = p.backlogs[1:]
	}
	p.redeliver = append(p.redeliver, m.Redeliver)
	if len(p.redeliver) > 2 {
		p.redeliver = p.redeliver[1:]
	}
	found := false
	for _, s := range m.Detail.Subscriptions {
		found = found || s.Name == p.sub
	}
	if !found {
		p.sub = ""
		if len(m.Detail.Subscriptions) > 0 {
			p.sub = m.Detail.Subscriptions[0].Name
		}
	}
}

// setFilter applies what was typed after /: an engine filter expression when it parses as
// one (what a replay then uses as is), else a text search over id, key, origin, reasons.
func (p *Page) setFilter(s string) {
	p.filter = strings.TrimSpace(s)
	p.expr = nil
	if p.filter != "" && looksLikeExpr(p.filter) {
		if f, err := replay.ParseFilter(p.filter); err == nil {
			p.expr = &f
		}
	}
	p.applyFilter()
}

func looksLikeExpr(s string) bool {
	for _, pre := range []string{"key=", "property.", "payload~", "json.", "published>=", "published<"} {
		if strings.HasPrefix(s, pre) {
			return true
		}
	}
	return false
}

func (p *Page) applyFilter() {
	p.shown = p.shown[:0]
	q := strings.ToLower(p.filter)
	for i, d := range p.msgs {
		switch {
		case p.expr != nil:
			id, _ := client.ParseMessageID(d.ID)
			cm := &client.Message{Key: d.Key, Properties: d.Properties, Payload: d.Payload, PublishTime: d.PublishTime, ID: id}
			if !p.expr.Match(cm) {
				continue
			}
		case q != "":
			hay := strings.ToLower(d.ID + " " + d.Key + " " + d.Origin + " " + d.OriginID + " " + reasons(d))
			if !strings.Contains(hay, q) {
				continue
			}
		}
		p.shown = append(p.shown, i)
	}
	p.setRows()
}

func reasons(d data.DeadLetter) string {
	var parts []string
	for _, r := range data.Reasons(d.Properties) {
		parts = append(parts, r[0]+"="+r[1])
	}
	return strings.Join(parts, " ")
}

func (p *Page) setRows() {
	st := p.c.Styles
	now := p.c.Clock.Now()
	shown, msgs := p.shown, p.msgs
	p.tbl.SetRowFunc(len(shown), func(i int) table.Row {
		d := msgs[shown[i]]
		mark := ""
		if p.marked[d.ID] {
			mark = "●"
		}
		reason := d.Reason
		if reason == "" {
			reason = "-"
		}
		origin := "-"
		if d.Origin != "" {
			origin = data.ShortName(d.Origin, data.ParseTopic(p.topic).NS())
		}
		oid := d.OriginID
		if oid == "" {
			oid = "-"
		}
		return table.Row{Cells: []string{mark, common.Age(now, d.PublishTime), d.Key, origin, oid, rcn(d.Reconsumes), reason},
			Styles: []*lipgloss.Style{&st.Marked, &st.Subtle, nil, nil, &st.Subtle, &st.Retry, &st.DLQ}}
	})
}

func rcn(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func (p *Page) setIndex() {
	st := p.c.Styles
	rows := p.index
	p.tbl.SetRowFunc(len(rows), func(i int) table.Row {
		r := rows[i]
		bl := &st.Text
		if r.Backlog > 0 {
			bl = &st.DLQ
		}
		subs := fmt.Sprint(r.Subscriptions)
		ss := &st.Text
		if r.Subscriptions == 0 {
			subs, ss = "0 !", &st.Warn
		}
		return table.Row{Cells: []string{data.ShortName(r.Name, ""), common.Count(r.Backlog), common.Rate(r.RateIn), subs},
			Styles: []*lipgloss.Style{&st.DLQ, bl, nil, ss}}
	})
}

// current is the dead letter under the cursor.
func (p *Page) current() *data.DeadLetter {
	i := p.tbl.Cursor()
	if i < 0 || i >= len(p.shown) {
		return nil
	}
	return &p.msgs[p.shown[i]]
}
