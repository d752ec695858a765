package dlq

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// IndexMsg carries the DLQ topics of the cluster.
type IndexMsg struct {
	common.Fresh
	Rows []data.TopicRow
}

var indexColumns = []table.Column{
	{Title: "DLQ", Flex: true, Min: 20},
	{Title: "ORIGIN", Width: 28, Droppable: true},
	{Title: "LETTERS", Width: 9, Right: true},
	{Title: "IN/s", Width: 6, Right: true},
	{Title: "SUBS", Width: 4, Right: true},
}

// loadIndex lists every topic the rule takes for a DLQ (client/deadletter: its purpose, its
// name or its newest message), whatever its name.
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

func (p *Page) indexKey(msg tea.KeyPressMsg) tea.Cmd {
	km := p.c.Keys
	switch {
	case key.Matches(msg, km.Back):
		return common.Back
	case key.Matches(msg, km.Up):
		p.tbl.Move(-1)
	case key.Matches(msg, km.Down):
		p.tbl.Move(1)
	case key.Matches(msg, km.PageUp):
		p.tbl.PageUp()
	case key.Matches(msg, km.PageDown):
		p.tbl.PageDown()
	case key.Matches(msg, km.HalfUp):
		p.tbl.HalfUp()
	case key.Matches(msg, km.HalfDown):
		p.tbl.HalfDown()
	case key.Matches(msg, km.Top):
		p.tbl.Top()
	case key.Matches(msg, km.Bottom):
		p.tbl.Bottom()
	case key.Matches(msg, km.Enter):
		if i := p.tbl.Cursor(); i < len(p.index) {
			return common.Navigate(common.NavigateMsg{Page: common.PageDLQ, Topic: p.index[i].Name})
		}
	}
	return nil
}

func (p *Page) setIndex() {
	st := p.c.Styles
	rows := p.index
	p.tbl.SetRowFunc(len(rows), func(i int) table.Row {
		r := rows[i]
		bl := &st.Text
		letters := r.Letters()
		if letters.N > 0 {
			bl = &st.DLQ
		}
		subs := fmt.Sprint(r.Subscriptions)
		ss := &st.Text
		if r.Subscriptions == 0 {
			subs, ss = "0 !", &st.Warn
		}
		origin := "?"
		if r.Origin != "" {
			origin = naming.ShortName(r.Origin, r.Namespace)
			if r.OriginSub != "" {
				origin += " / " + r.OriginSub
			}
		}
		return table.Row{Cells: []string{naming.ShortName(r.Name, ""), origin, letters.Cell(9), common.Rate(r.RateIn), subs},
			Styles: []*lipgloss.Style{&st.DLQ, &st.Subtle, bl, nil, ss}}
	})
}
