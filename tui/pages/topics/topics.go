// Package topics is the first screen: tenants → namespaces → topics, partitioned topics
// grouped with their partitions, retry and DLQ topics badged, live stats, sorting and a fuzzy
// filter. Enter opens a topic.
package topics

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// LoadedMsg carries one refresh of the screen's data.
type LoadedMsg struct {
	common.Fresh
	NS         string
	Namespaces []string
	Rows       []data.TopicRow
}

// sort keys, in the order "s" cycles through them.
var sortNames = []string{"name", "in", "out", "backlog", "storage", "subs", "producers", "consumers"}

// sortCols maps a sort key to its table column.
var sortCols = []int{0, 2, 3, 4, 5, 6, 7, 8}

// sidebarMin is the width from which the namespace list stays on screen beside the table.
const sidebarMin = 110

// Page is the topics screen.
type Page struct {
	c          *common.Common
	ns         string // "" = every namespace
	namespaces []string
	rows       []data.TopicRow
	rowIndex   // rows.go: the rows indexed, sorted and filtered
	shown      []shownRow
	count      int // topics shown (partitions not counted)
	expanded   map[string]bool
	tbl        table.Model
	filter     input.Model
	filtering  bool
	sortBy     int
	desc       bool
	loading    bool
	loadedAt   time.Time
	nsFocus    bool // the namespace list has focus
	nsCursor   int
	w, h       int
	onScreen   // onscreen.go: details asked for the rows shown
}

// shownRow is a table line: a namespace heading or a topic.
type shownRow struct {
	ns    string // set on a namespace heading
	topic *data.TopicRow
}

// New returns the topics page for namespace ns ("" = all).
func New(c *common.Common, ns string) *Page {
	p := &Page{c: c, ns: ns, expanded: map[string]bool{}}
	p.tbl = table.New(c, []table.Column{
		{Title: "NAME", Flex: true, Min: 18},
		{Title: "TYPE", Width: 5},
		{Title: "IN/s", Width: 7, Right: true},
		{Title: "OUT/s", Width: 7, Right: true},
		{Title: "BACKLOG", Width: 9, Right: true},
		{Title: "STORAGE", Width: 9, Right: true, Droppable: true},
		{Title: "SUBS", Width: 4, Right: true},
		{Title: "PROD", Width: 4, Right: true, Droppable: true},
		{Title: "CONS", Width: 4, Right: true},
	})
	p.filter = input.New(c, "/", "filter topics")
	p.tbl.SortCol = 0
	return p
}

// NS is the namespace shown ("" = all).
func (p *Page) NS() string { return p.ns }

// SetNS switches to namespace ns and reloads.
func (p *Page) SetNS(ns string) tea.Cmd {
	p.ns = ns
	p.tbl.Top()
	return p.load()
}

func (p *Page) Init() tea.Cmd { return p.load() }

func (p *Page) load() tea.Cmd {
	p.loading = true
	ns := p.ns
	return common.Load(p.c, "topics", func(ctx contextT, s data.Source) (LoadedMsg, error) {
		nss, err := s.Namespaces(ctx)
		if err != nil {
			return LoadedMsg{}, err
		}
		rows, err := s.Topics(ctx, ns)
		return LoadedMsg{NS: ns, Namespaces: nss, Rows: rows}, err
	}, func(m LoadedMsg) tea.Msg { return m })
}

func (p *Page) Title() string {
	if p.ns == "" {
		return "Topics"
	}
	return "Topics › " + p.ns
}

func (p *Page) Capturing() bool { return p.filtering }
func (p *Page) Busy() bool      { return p.loading }
func (p *Page) Close()          {}

func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	p.filter.SetWidth(w / 2)
	tw := w
	if w >= sidebarMin {
		tw = w - sidebarWidth - 1
	}
	p.tbl.SetSize(tw, h-1)
}

const sidebarWidth = 22

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	switch msg := msg.(type) {
	case LoadedMsg:
		if msg.NS != p.ns {
			return p, nil // an answer for a namespace we already left
		}
		p.loading = false
		// The old listing's lines and index go before the new listing's are built, so that a
		// large cluster's two listings are not both alive then; the cursor stays on its topic.
		selected := p.Selected()
		p.shown, p.rowIndex = nil, rowIndex{}
		p.rows, p.namespaces = msg.Rows, msg.Namespaces
		p.loadedAt = p.c.Clock.Now()
		p.reindex()
		if selected != "" {
			p.selectTopic(selected)
		}
		cmds := []tea.Cmd{p.askOnScreen(false)}
		if len(p.rows) > data.OnScreenFrom {
			cmds = append(cmds, releaseListing)
		}
		if note := staleNote(msg.Rows); note != "" {
			cmds = append(cmds, func() tea.Msg { return common.StatusMsg(note) })
		}
		return p, tea.Batch(cmds...)
	case DetailsMsg:
		return p, p.merge(msg)
	case common.ErrorMsg:
		p.loading = false
		p.asking = false
	case common.RefreshMsg:
		if !msg.Forced && p.listedRecently() {
			return p, p.askOnScreen(true) // a large listing: the rows shown only (onscreen.go)
		}
		if !p.loading || msg.Forced {
			return p, p.load()
		}
	case common.MouseMsg:
		if msg.Wheel != 0 {
			p.tbl.Move(3 * msg.Wheel)
		} else if msg.Click {
			if i := p.tbl.RowAt(msg.Y - 1); i >= 0 {
				p.tbl.SetCursor(i)
			}
		}
		return p, p.askOnScreen(false)
	case tea.KeyPressMsg:
		if p.filtering {
			switch msg.String() {
			case "esc":
				p.filtering = false
				p.filter.Blur()
				p.filter.SetValue("")
				p.refilter()
				return p, p.askOnScreen(false)
			case "enter", "down", "up":
				p.filtering = false
				p.filter.Blur()
				return p, nil
			}
			var cmd tea.Cmd
			p.filter, cmd = p.filter.Update(msg)
			p.refilter()
			p.firstTopic()
			return p, tea.Batch(cmd, p.askOnScreen(false))
		}
		if p.nsFocus {
			return p, p.updateNamespaces(msg)
		}
		page, cmd := p.updateKeys(msg)
		return page, tea.Batch(cmd, p.askOnScreen(false))
	}
	return p, nil
}

// updateKeys handles a key of the table (not of the filter or the namespace list).
func (p *Page) updateKeys(msg tea.KeyPressMsg) (common.Page, tea.Cmd) {
	k := p.c.Keys
	switch {
	case key.Matches(msg, k.Filter):
		p.filtering = true
		p.filter.Restyle()
		p.filter.Focus()
	case key.Matches(msg, k.Back):
		if p.filter.Value() != "" {
			p.filter.SetValue("")
			p.refilter()
		} else if p.ns != "" {
			return p, p.SetNS("")
		}
	case key.Matches(msg, k.NextPane):
		p.nsFocus = true
		p.tbl.Focus(false)
		p.nsCursor = max(0, slices.Index(p.nsItems(), p.ns))
	case key.Matches(msg, k.Up):
		p.tbl.Move(-1)
	case key.Matches(msg, k.Down):
		p.tbl.Move(1)
	case key.Matches(msg, k.PageUp):
		p.tbl.PageUp()
	case key.Matches(msg, k.PageDown):
		p.tbl.PageDown()
	case key.Matches(msg, k.HalfUp):
		p.tbl.HalfUp()
	case key.Matches(msg, k.HalfDown):
		p.tbl.HalfDown()
	case key.Matches(msg, k.Top):
		p.tbl.Top()
	case key.Matches(msg, k.Bottom):
		p.tbl.Bottom()
	case key.Matches(msg, k.Sort):
		p.sortBy = (p.sortBy + 1) % len(sortNames)
		p.desc = p.sortBy != 0 // numbers: biggest first
		p.resort()
	case key.Matches(msg, k.SortReverse):
		p.desc = !p.desc
		p.resort()
	case key.Matches(msg, k.Expand), key.Matches(msg, k.Right), key.Matches(msg, k.Left):
		if r := p.current(); r != nil && r.topic != nil {
			name := r.topic.Name
			if r.topic.Parent != "" {
				name = r.topic.Parent
			}
			want := !p.expanded[name]
			if key.Matches(msg, k.Right) {
				want = true
			} else if key.Matches(msg, k.Left) {
				want = false
			}
			p.expanded[name] = want
			p.layout()
			p.selectTopic(name)
		}
	case key.Matches(msg, k.Enter):
		if r := p.current(); r != nil {
			if r.ns != "" {
				return p, p.SetNS(r.ns)
			}
			return p, common.Navigate(common.NavigateMsg{Page: common.PageTopic, Topic: r.topic.Name})
		}
	case key.Matches(msg, k.Produce):
		if r := p.current(); r != nil && r.topic != nil {
			return p, common.Navigate(common.NavigateMsg{Page: common.PageProduce, Topic: r.topic.Name})
		}
		// No topic to produce to: name one (a new one is created after asking).
		return p, func() tea.Msg { return common.PaletteMsg{Line: "produce "} }
	case key.Matches(msg, k.Tail):
		if r := p.current(); r != nil && r.topic != nil {
			return p, common.Navigate(common.NavigateMsg{Page: common.PageMessages, Topic: r.topic.Name})
		}
	}
	return p, nil
}

// firstTopic puts the cursor on the first topic (not a namespace heading).
func (p *Page) firstTopic() {
	for i, r := range p.shown {
		if r.topic != nil {
			p.tbl.SetCursor(i)
			return
		}
	}
	p.tbl.Top()
}

func (p *Page) current() *shownRow {
	i := p.tbl.Cursor()
	if i < 0 || i >= len(p.shown) {
		return nil
	}
	return &p.shown[i]
}

// Selected is the full name of the topic under the cursor, or "".
func (p *Page) Selected() string {
	if r := p.current(); r != nil && r.topic != nil {
		return r.topic.Name
	}
	return ""
}

// SelectedKind is what the topic under the cursor is for.
func (p *Page) SelectedKind() data.Kind {
	if r := p.current(); r != nil && r.topic != nil {
		return r.topic.Kind
	}
	return data.KindTopic
}

func (p *Page) selectTopic(name string) {
	for i, r := range p.shown {
		if r.topic != nil && r.topic.Name == name {
			p.tbl.SetCursor(i)
			return
		}
	}
}

// nameCell is a topic's NAME cell: indented under its namespace's heading when every
// namespace is shown, a partitioned topic with its arrow and partition count, a partition by
// its index.
func (p *Page) nameCell(r *data.TopicRow) string {
	indent := ""
	if p.ns == "" {
		indent = "  "
	}
	switch {
	case r.Parent != "":
		idx := naming.PartitionIndex(r.Local)
		return indent + "  └ partition " + itoa(idx)
	case r.Partitions > 0:
		arrow := "▸ "
		if p.expanded[r.Name] {
			arrow = "▾ "
		}
		return indent + arrow + r.Local + " [" + itoa(r.Partitions) + "]"
	}
	return indent + "  " + r.Local
}

func (p *Page) compare(a, b *data.TopicRow) int {
	switch sortNames[p.sortBy] {
	case "in":
		return cmp.Compare(a.RateIn, b.RateIn)
	case "out":
		return cmp.Compare(a.RateOut, b.RateOut)
	case "backlog":
		return cmp.Compare(a.Backlog, b.Backlog)
	case "storage":
		return cmp.Compare(a.Storage, b.Storage)
	case "subs":
		return cmp.Compare(a.Subscriptions, b.Subscriptions)
	case "producers":
		return cmp.Compare(a.Producers, b.Producers)
	case "consumers":
		return cmp.Compare(a.Consumers, b.Consumers)
	}
	return cmp.Compare(a.Local, b.Local)
}

// tableRow builds line i of the table (only lines on screen are built).
func (p *Page) tableRow(i int) table.Row {
	st := p.c.Styles
	s := p.shown[i]
	if s.ns != "" {
		return table.Row{Cells: []string{s.ns + "/"}, Styles: []*lipStyle{&st.Title}}
	}
	r := s.topic
	cells := []string{p.nameCell(r), r.Kind.String()}
	switch {
	case r.StatsKnown:
		cells = append(cells, common.Rate(r.RateIn), common.Rate(r.RateOut), r.Letters().Cell(9),
			common.Bytes(r.Storage), itoa(r.Subscriptions), itoa(r.Producers), itoa(r.Consumers))
	case r.StatsStale:
		cells = append(cells, "?", "?", "?", "?", "?", "?", "?") // its broker never answered
	default:
		cells = append(cells, "…", "…", "…", "…", "…", "…", "…")
	}
	kind := st.Kind(r.Kind)
	styles := []*lipStyle{kind, kind, nil, nil, nil, &st.Subtle}
	if r.StatsStale {
		// The last stats its broker gave, greyed: that broker does not answer (staleNote).
		styles = []*lipStyle{kind, kind, &st.Subtle, &st.Subtle, &st.Subtle, &st.Subtle, &st.Subtle, &st.Subtle, &st.Subtle}
		if r.Kind == data.KindTopic {
			styles[0] = nil
		}
		return table.Row{Cells: cells, Styles: styles}
	}
	if r.Kind == data.KindTopic {
		styles[0] = nil
	}
	if r.Letters().N > 0 && r.Kind == data.KindDLQ {
		styles[4] = &st.DLQ
	} else if r.Backlog > 1000 {
		styles[4] = &st.Warn
	}
	return table.Row{Cells: cells, Styles: styles}
}

// staleNote names, for the status line, the brokers whose topics show their last stats because
// they did not answer ("" when every broker did).
func staleNote(rows []data.TopicRow) string {
	var brokers []string
	stale := 0
	for _, r := range rows {
		if r.StatsStale && r.Parent == "" {
			stale++
			if !slices.Contains(brokers, r.StaleBroker) {
				brokers = append(brokers, r.StaleBroker)
			}
		}
	}
	if stale == 0 {
		return ""
	}
	slices.Sort(brokers)
	what := "1 topic shows its"
	if stale > 1 {
		what = itoa(stale) + " topics show their"
	}
	return "broker " + strings.Join(brokers, ", ") + " did not answer: " + what + " last stats (greyed)"
}
