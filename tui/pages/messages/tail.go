package messages

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// The live tail: a non-durable reader's messages arriving one at a time, its broker lost and
// back, and the check at each refresh that its topic is still there.

// TailLimit bounds what a tail keeps in memory; older messages are dropped (and the screen
// says so).
const TailLimit = 5000

// TailStartedMsg carries a running tail.
type TailStartedMsg struct {
	common.Fresh
	Topic string
	ch    <-chan data.TailEvent
	stop  func()
}

// TailMsg is one tailed message; ok is false when the tail ended, with Err saying why (nil:
// stopped).
type TailMsg struct {
	Topic string
	Msg   data.Message
	Err   error
	ok    bool
	ch    <-chan data.TailEvent
}

// TailLostMsg says the tail's reader lost its broker (it reconnects by itself).
type TailLostMsg struct {
	Topic string
	ch    <-chan data.TailEvent
}

// TailBackMsg says the tail's reader has its broker again and reads on.
type TailBackMsg struct {
	common.Fresh
	Topic string
	ch    <-chan data.TailEvent
}

// TailAliveMsg answers the check a running tail makes at each refresh: the topic is there
// and the cluster answers, so what the tail shows is current.
type TailAliveMsg struct {
	common.Fresh
	Topic string
}

func (p *Page) startTail() tea.Cmd {
	p.loading = true
	t := p.topic
	return func() tea.Msg {
		// Not common.Load: the tail outlives this command, so it gets the app's context, not a
		// deadline; only creating the reader is bounded.
		ch, stop, err := p.c.Source.Tail(p.c.Ctx, t)
		if err != nil {
			return common.ErrorMsg{What: "tail " + data.ShortName(t, ""), Err: err, Owner: p}
		}
		return TailStartedMsg{Topic: t, ch: ch, stop: stop}
	}
}

func waitTail(topic string, ch <-chan data.TailEvent) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		switch {
		case ok && ev.Link == data.LinkLost:
			return TailLostMsg{Topic: topic, ch: ch}
		case ok && ev.Link == data.LinkBack:
			return TailBackMsg{Topic: topic, ch: ch}
		case ok && ev.Err != nil:
			return TailMsg{Topic: topic, Err: ev.Err, ch: ch}
		}
		return TailMsg{Topic: topic, Msg: ev.Msg, ok: ok, ch: ch}
	}
}

// checkTail asks the cluster about the tailed topic at each refresh: an answer says that what
// the tail shows is current; none (the cluster unreachable, the topic gone) says so.
func (p *Page) checkTail() tea.Cmd {
	t := p.topic
	return common.Load(p.c, "tail "+data.ShortName(t, ""), func(ctx context.Context, s data.Source) (*data.TopicDetail, error) {
		return s.TopicDetail(ctx, t)
	}, func(*data.TopicDetail) tea.Msg { return TailAliveMsg{Topic: t} })
}

// restartTail starts the tail again after it ended (ctrl+r): what it showed stays.
func (p *Page) restartTail() tea.Cmd {
	p.Close()
	p.tailDone, p.tailErr, p.loadErr, p.following, p.tailLost = false, nil, nil, true, false
	return p.startTail()
}

func (p *Page) appendTail(m data.Message) {
	p.msgs = append(p.msgs, m)
	if over := len(p.msgs) - TailLimit; over > 0 {
		p.msgs = p.msgs[over:]
		p.dropped += over
	}
	cur := p.tbl.Cursor()
	p.refreshRows()
	if p.following {
		p.tbl.Bottom()
	} else {
		p.tbl.SetCursor(cur)
	}
}
