package messages

import (
	"context"
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
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

// CheckedMsg answers the look the screen takes at each refresh: the topic (and the
// subscription a peek reads through) is there and the cluster answers, so what the screen
// shows is current.
type CheckedMsg struct {
	common.Fresh
	Topic, Sub string
}

func (p *Page) startTail() tea.Cmd {
	p.loading = true
	t := p.topic
	return func() tea.Msg {
		// Not common.Load: the tail outlives this command, so it gets the app's context, not a
		// deadline; only creating the reader is bounded.
		ch, stop, err := p.c.Source.Tail(p.c.Ctx, t)
		if err != nil {
			return common.ErrorMsg{What: "tail " + naming.ShortName(t, ""), Err: err, Owner: p}
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

// check asks the cluster, at each refresh, whether what the screen reads is still there: the
// topic, and the subscription a peek reads through. An answer says that what is shown is
// current; a topic or subscription deleted meanwhile turns the screen into the not-found page
// (a tail keeps what it read, and says why it ended).
func (p *Page) check() tea.Cmd {
	t, sub := p.topic, p.sub
	what := "peek " + sub
	switch {
	case p.browsing:
		what = "read " + naming.ShortName(t, "")
	case sub == "":
		what = "tail " + naming.ShortName(t, "")
	}
	return common.LoadFor(p.c, p, what, func(ctx context.Context, s data.Source) (*data.TopicDetail, error) {
		d, err := s.TopicDetail(ctx, t)
		if err != nil || sub == "" {
			return d, err
		}
		for _, sb := range d.Subscriptions {
			if sb.Name == sub {
				return d, nil
			}
		}
		return nil, data.SubscriptionNotFound(t, sub)
	}, func(*data.TopicDetail) tea.Msg { return CheckedMsg{Topic: t, Sub: sub} })
}

// tailEnded takes the end of the tail: it says so, and looks at the topic, so that the end can
// say why (a topic deleted ends its readers with nothing more than "closed").
func (p *Page) tailEnded(err error) tea.Cmd {
	p.tailDone, p.tailErr = true, err
	topic := naming.ShortName(p.topic, "")
	cmds := []tea.Cmd{p.check()}
	if err != nil {
		cmds = append(cmds, func() tea.Msg { return common.ErrorMsg{What: "tail " + topic + " ended", Err: err} })
	}
	return tea.Batch(cmds...)
}

// tailEnd says why the tail ended and what ctrl+r will do about it: from the error it ended
// with, and the look at its topic after (gone: the topic is not there).
func tailEnd(err error, gone bool) (why, then string) {
	var closed *client.BrokerClosedError
	reason := ""
	if errors.As(err, &closed) {
		reason = strings.ToLower(closed.Reason)
	}
	switch {
	case gone || strings.Contains(reason, "delet"):
		return "the topic was deleted", "ctrl+r tails it again once it exists"
	case errors.Is(err, client.ErrTopicTerminated) || strings.Contains(reason, "terminat"):
		return "the topic was terminated: it takes no new messages", "ctrl+r starts a new tail all the same"
	case common.ProblemOf(err) == common.ProblemUnauthorized:
		return "permission: the cluster no longer lets this role read it", "ctrl+r tries again with the same role"
	case closed != nil && closed.Reason != "":
		return "the broker closed it: " + closed.Reason, "ctrl+r starts a new tail from the latest message"
	case closed != nil:
		return "the broker closed it", "ctrl+r starts a new tail from the latest message"
	case common.ProblemOf(err) == common.ProblemUnreachable || errors.Is(err, client.ErrClosed):
		return "the broker is gone", "ctrl+r starts a new tail once it answers"
	case err != nil:
		return "failed: " + err.Error(), "ctrl+r starts a new tail from the latest message"
	}
	return "the reader stopped", "ctrl+r starts a new tail from the latest message"
}

// restartTail starts the tail again after it ended (ctrl+r): what it showed stays.
func (p *Page) restartTail() tea.Cmd {
	p.Close()
	p.ch = nil
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
