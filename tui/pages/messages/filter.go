package messages

import (
	"errors"
	"strings"

	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// The "/" filter over what is loaded, the selection export writes, and the cursor's moves
// between the messages shown.

// selection is what export writes: the marked messages, or those shown when none is marked
// (never one the cluster could not hand over: there is nothing of it to write).
func (p *Page) selection() []data.Message {
	var out []data.Message
	for _, i := range p.shown {
		if m := p.msgs[i]; m.Unreadable == "" && (len(p.marked) == 0 || p.marked[m.ID]) {
			out = append(out, m)
		}
	}
	return out
}

// SetFilter starts the screen filtered by q (see setFilter).
func (p *Page) SetFilter(q string) { p.setFilter(q) }

// setFilter shows the messages that q selects (client/expr's grammar: text, or key=…,
// property.NAME=…, …); a q that does not parse keeps the last filter and says where it is
// wrong.
func (p *Page) setFilter(q string) {
	p.query = strings.TrimSpace(q)
	e, err := expr.Parse(p.query, p.c.Clock.Now())
	p.fltErr = nil
	if err != nil {
		errors.As(err, &p.fltErr)
	} else {
		p.flt = e
	}
	cur := p.current()
	p.refreshRows()
	if cur != nil { // keep the cursor on the message it was on, when it is still shown
		for row, i := range p.shown {
			if p.msgs[i].ID == cur.ID {
				p.tbl.SetCursor(row)
			}
		}
	}
}

// filterShown recomputes which messages pass the filter.
func (p *Page) filterShown() {
	p.shown = p.shown[:0]
	for i := range p.msgs {
		m := &p.msgs[i]
		subject := expr.Message{Key: m.Key, Properties: m.Properties, Payload: m.Payload, PublishTime: m.PublishTime, ProducerName: m.ProducerName}
		if p.flt.Match(&subject) {
			p.shown = append(p.shown, i)
		}
	}
}

// jump moves to the next (dir 1) or previous (dir -1) message shown, wrapping around: with a
// filter, the next match.
func (p *Page) jump(dir int) {
	if len(p.shown) == 0 {
		return
	}
	p.tbl.SetCursor((p.tbl.Cursor() + dir + len(p.shown)) % len(p.shown))
	p.following = false
	p.detailOff = 0
}
