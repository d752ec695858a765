// Package topic is the topic screen: stats, subscriptions, consumers with the schema type each
// subscribed with (refreshed live; "not reported by broker" when the broker does not record
// it, as upstream Pulsar does not), and the topic's schema pretty-printed.
package topic

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// DetailMsg carries a refresh of the topic's stats.
type DetailMsg struct {
	common.Fresh
	Topic  string
	Detail *data.TopicDetail
}

// SchemaMsg carries the topic's schema (nil: none).
type SchemaMsg struct {
	common.Fresh
	Topic  string
	Schema *data.SchemaInfo
}

// NotReported is what the schema column says when the broker does not record schema types.
const NotReported = "not reported by broker"

const (
	paneSubs = iota
	paneConsumers
	paneSchema
	panes
)

// Page is the topic screen.
type Page struct {
	c            *common.Common
	topic        string
	detail       *data.TopicDetail
	schema       *data.SchemaInfo
	schemaLoaded bool
	schemaLines  []string
	schemaOff    int
	prevTypes    map[string]string // consumer → schema type at the previous refresh
	changed      map[string]bool   // consumers whose schema type just changed
	subs         table.Model
	cons         table.Model
	consSub      []string // subscription of each consumers row
	focus        int
	loading      bool
	loadErr      error // the last reading of the topic failed
	w, h         int
}

// New returns the screen of topic (a full name).
func New(c *common.Common, topic string) *Page {
	p := &Page{c: c, topic: topic, prevTypes: map[string]string{}, changed: map[string]bool{}}
	p.subs = table.New(c, []table.Column{
		{Title: "SUBSCRIPTION", Flex: true, Min: 14},
		{Title: "TYPE", Width: 10},
		{Title: "BACKLOG", Width: 9, Right: true},
		{Title: "OUT/s", Width: 7, Right: true},
		{Title: "REDLV/s", Width: 7, Right: true, Droppable: true},
		{Title: "UNACKED", Width: 7, Right: true},
		{Title: "CONS", Width: 4, Right: true},
	})
	p.cons = table.New(c, nil)
	p.cons.Focus(false)
	return p
}

func (p *Page) Init() tea.Cmd { return tea.Batch(p.loadDetail(), p.loadSchema()) }

func (p *Page) loadDetail() tea.Cmd {
	p.loading = true
	t := p.topic
	return common.LoadFor(p.c, p, "topic "+naming.ShortName(t, ""), func(ctx context.Context, s data.Source) (*data.TopicDetail, error) {
		return s.TopicDetail(ctx, t)
	}, func(d *data.TopicDetail) tea.Msg { return DetailMsg{Topic: t, Detail: d} })
}

func (p *Page) loadSchema() tea.Cmd {
	t := p.topic
	return common.Load(p.c, "schema of "+naming.ShortName(t, ""), func(ctx context.Context, s data.Source) (*data.SchemaInfo, error) {
		return s.Schema(ctx, t)
	}, func(si *data.SchemaInfo) tea.Msg { return SchemaMsg{Topic: t, Schema: si} })
}

func (p *Page) Title() string   { return naming.ShortName(p.topic, "") }
func (p *Page) Capturing() bool { return false }
func (p *Page) Busy() bool      { return p.loading }
func (p *Page) Close()          {}

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	k := p.c.Keys
	switch msg := msg.(type) {
	case DetailMsg:
		if msg.Topic == p.topic {
			p.loading, p.loadErr = false, nil
			p.setDetail(msg.Detail)
		}
	case SchemaMsg:
		if msg.Topic == p.topic {
			p.schema, p.schemaLoaded = msg.Schema, true
			p.schemaLines = schemaLines(msg.Schema)
		}
	case common.ErrorMsg:
		p.loading = false
		if msg.Owner == p {
			p.loadErr = msg.Err
		}
	case common.RefreshMsg:
		if msg.Forced {
			return p, tea.Batch(p.loadDetail(), p.loadSchema())
		}
		if !p.loading {
			return p, p.loadDetail()
		}
	case common.MouseMsg:
		if msg.Wheel != 0 {
			p.scroll(msg.Wheel * 3)
		}
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, k.Back):
			return p, common.Back
		case key.Matches(msg, k.NextPane):
			p.setFocus((p.focus + 1) % panes)
		case key.Matches(msg, k.PrevField):
			p.setFocus((p.focus + panes - 1) % panes)
		case key.Matches(msg, k.Up):
			p.scroll(-1)
		case key.Matches(msg, k.Down):
			p.scroll(1)
		case key.Matches(msg, k.PageUp):
			p.scroll(-10)
		case key.Matches(msg, k.PageDown):
			p.scroll(10)
		case key.Matches(msg, k.HalfUp):
			p.scroll(-5)
		case key.Matches(msg, k.HalfDown):
			p.scroll(5)
		case key.Matches(msg, k.Top):
			p.scroll(-1 << 20)
		case key.Matches(msg, k.Bottom):
			p.scroll(1 << 20)
		case p.detail == nil || p.gone():
			// Nothing was read, or the topic went: the keys that act on it have nothing to act on.
			if p.loadErr != nil {
				err := p.loadErr
				return p, func() tea.Msg {
					return common.StatusMsg(common.Subject{Topic: p.topic}.Missing(err) + ": " + common.ProblemOf(err).Words())
				}
			}
		case key.Matches(msg, k.Enter), key.Matches(msg, k.Messages):
			if sub := p.selectedSub(); sub != "" {
				return p, common.Navigate(common.NavigateMsg{Page: common.PageMessages, Topic: p.topic, Sub: sub})
			}
			return p, func() tea.Msg { return common.StatusMsg("no subscription to peek: tail (t) follows the topic live") }
		case key.Matches(msg, k.Tail):
			return p, common.Navigate(common.NavigateMsg{Page: common.PageMessages, Topic: p.topic})
		case key.Matches(msg, k.Produce):
			return p, common.Navigate(common.NavigateMsg{Page: common.PageProduce, Topic: p.topic})
		case key.Matches(msg, k.Flow):
			// On a retry or DLQ topic, the flow its name derives from; else the selected
			// subscription's.
			sub := ""
			if p.kind() == data.KindTopic {
				sub = p.selectedSub()
			}
			return p, common.Navigate(common.NavigateMsg{Page: common.PageFlow, Topic: p.topic, Sub: sub})
		case key.Matches(msg, k.DeadLetters):
			if p.kind() == data.KindDLQ {
				return p, common.Navigate(common.NavigateMsg{Page: common.PageDLQ, Topic: p.topic, Sub: p.selectedSub()})
			}
			if sub := p.selectedSub(); sub != "" {
				t := p.topic
				return p, common.Load(p.c, "DLQ of "+sub, func(ctx context.Context, s data.Source) (string, error) {
					return data.FindDLQ(ctx, s, t, sub)
				}, func(dlq string) tea.Msg {
					return common.NavigateMsg{Page: common.PageDLQ, Topic: dlq}
				})
			}
		}
	}
	return p, nil
}

func (p *Page) setFocus(f int) {
	p.focus = f
	p.subs.Focus(f == paneSubs)
	p.cons.Focus(f == paneConsumers)
}

func (p *Page) scroll(d int) {
	switch p.focus {
	case paneSubs:
		p.subs.Move(d)
	case paneConsumers:
		p.cons.Move(d)
	case paneSchema:
		p.schemaOff = max(0, min(p.schemaOff+d, len(p.schemaLines)-1))
	}
}

// gone reports that the topic was not found at the last reading, whatever was read before: the
// screen turns into the not-found page until it is there again.
func (p *Page) gone() bool {
	return p.loadErr != nil && common.ProblemOf(p.loadErr) == common.ProblemNotFound
}

// kind is what the topic is for, once its detail has arrived.
func (p *Page) kind() data.Kind {
	if p.detail == nil {
		return data.KindTopic
	}
	return p.detail.Verdict.Kind
}

// selectedSub is the subscription to peek: the one under the cursor of the focused table.
func (p *Page) selectedSub() string {
	if p.detail == nil {
		return ""
	}
	if p.focus == paneConsumers && p.cons.Cursor() < len(p.consSub) {
		return p.consSub[p.cons.Cursor()]
	}
	if i := p.subs.Cursor(); i < len(p.detail.Subscriptions) {
		return p.detail.Subscriptions[i].Name
	}
	return ""
}

func (p *Page) setDetail(d *data.TopicDetail) {
	st := p.c.Styles
	p.detail = d
	var rows []table.Row
	for _, s := range d.Subscriptions {
		bl := &st.Text
		if s.Backlog > 0 && p.kind() == data.KindDLQ {
			bl = &st.DLQ
		}
		rd := &st.Text
		if s.RateRedeliver > 0 {
			rd = &st.Warn
		}
		rows = append(rows, table.Row{
			Cells: []string{s.Name, s.Type, s.BacklogOf().Cell(9), common.Rate(s.RateOut), common.Rate(s.RateRedeliver),
				common.Count(s.Unacked), fmt.Sprint(len(s.Consumers))},
			Styles: []*lipgloss.Style{nil, &st.Subtle, bl, nil, rd},
		})
	}
	p.subs.SetRows(rows)

	// Consumers of every subscription, each with the schema type it subscribed with; on a
	// partitioned topic a consumer is one per partition it reads, each on a row of its own.
	parted := d.Partitions > 0
	schemaW := 6
	var crows []table.Row
	p.consSub = p.consSub[:0]
	changed := map[string]bool{}
	for _, s := range d.Subscriptions {
		cs := s.Consumers
		if parted { // a consumer's partitions together
			cs = slices.Clone(cs)
			slices.SortStableFunc(cs, func(a, b data.Consumer) int {
				return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Partition, b.Partition))
			})
		}
		for _, c := range cs {
			typ := c.SchemaType
			style := &st.Accent
			if typ == "" {
				typ, style = NotReported, &st.Subtle
			}
			id := s.Name + "/" + c.Name + "/" + fmt.Sprint(c.Partition)
			if prev, ok := p.prevTypes[id]; ok && prev != c.SchemaType {
				changed[id] = true
			}
			p.prevTypes[id] = c.SchemaType
			if changed[id] {
				typ, style = typ+" (changed)", &st.Warn
			}
			schemaW = max(schemaW, len(typ))
			row := table.Row{
				Cells:  []string{c.Name, s.Name, strings.TrimPrefix(c.Address, "/"), fmt.Sprint(c.Permits), fmt.Sprint(c.Unacked), common.Rate(c.RateOut), typ},
				Styles: []*lipgloss.Style{nil, &st.Subtle, &st.Subtle, nil, nil, nil, style},
			}
			if parted {
				part := "?"
				if c.Partition >= 0 {
					part = fmt.Sprint(c.Partition)
				}
				row.Cells = slices.Insert(row.Cells, 2, part)
				row.Styles = slices.Insert(row.Styles, 2, &st.Subtle)
			}
			crows = append(crows, row)
			p.consSub = append(p.consSub, s.Name)
		}
	}
	p.changed = changed
	cols := []table.Column{
		{Title: "CONSUMER", Flex: true, Min: 10},
		{Title: "SUBSCRIPTION", Width: 12, Droppable: true},
		{Title: "ADDRESS", Width: 16, Droppable: true},
		{Title: "PERMITS", Width: 7, Right: true, Droppable: true},
		{Title: "UNACKED", Width: 7, Right: true},
		{Title: "OUT/s", Width: 6, Right: true},
		{Title: "SCHEMA", Width: min(schemaW, 34)},
	}
	if parted {
		cols = slices.Insert(cols, 2, table.Column{Title: "PARTITION", Width: 9, Right: true})
	}
	p.cons.SetColumns(cols)
	p.cons.SetRows(crows)
	p.SetSize(p.w, p.h)
}

// schemaLines pretty-prints a schema: JSON definitions (AVRO, JSON, PROTOBUF_NATIVE) indented.
func schemaLines(s *data.SchemaInfo) []string {
	if s == nil {
		return []string{"no schema: payloads are raw bytes"}
	}
	def := s.Definition
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(def), "", "  ") == nil {
		def = buf.String()
	}
	if strings.TrimSpace(def) == "" {
		def = "(no definition)"
	}
	return strings.Split(def, "\n")
}
