// Package flow is the flow screen: for a topic and a subscription, the live graph
// topic → <topic>-<sub>-RETRY → <topic>-<sub>-DLQ with msg/s on each edge and the backlog at
// each node, a histogram of RECONSUMETIMES over the peeked retry and DLQ messages, the
// subscription's redelivery rate, the latest dead letters with their reason, and the
// journey of one message (ORIGIN_MESSAGE_ID) across the three topics. Without a topic it
// lists the flows it finds (every retry or DLQ topic whose name derives from a topic).
package flow

import (
	"context"
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// PeekEvery: the retry and DLQ backlogs are peeked on every PeekEvery-th refresh (and on
// ctrl+r); the stats on every one. A peek costs a request per message on upstream's API.
const PeekEvery = 5

// LoadedMsg carries one reading of a flow.
type LoadedMsg struct {
	common.Fresh
	Topic, Sub string // as asked (the page may have been opened on a DLQ name)
	Flow       *data.Flow
	Err        error // resolving the flow failed (no subscription, not a DLQ name)
}

// IndexMsg carries the flows found in the cluster's topic list.
type IndexMsg struct {
	common.Fresh
	Flows []data.FlowRef
}

// Page is the flow screen.
type Page struct {
	c          *common.Common
	topic, sub string // as asked
	flow       *data.Flow
	problem    string
	loadErr    error // the last reading failed: the cluster does not answer, or the topic is gone
	index      []data.FlowRef
	indexMode  bool
	idx        table.Model
	latest     table.Model
	loading    bool
	ticks      int
	w, h       int
}

// New returns the flow of topic and sub. topic may be a retry or DLQ topic (the flow it
// belongs to is derived from its name); sub may be empty (the topic's first subscription
// with a retry or DLQ topic). An empty topic lists every flow.
func New(c *common.Common, topic, sub string) *Page {
	p := &Page{c: c, topic: topic, sub: sub, indexMode: topic == ""}
	p.idx = table.New(c, []table.Column{
		{Title: "TOPIC", Flex: true, Min: 16},
		{Title: "SUBSCRIPTION", Width: 14},
		{Title: "RETRY", Width: 7, Right: true},
		{Title: "DLQ", Width: 7, Right: true},
		{Title: "DLQ IN/s", Width: 8, Right: true, Droppable: true},
	})
	p.latest = table.New(c, []table.Column{
		{Title: "AGE", Width: 4, Right: true},
		{Title: "KEY", Width: 12, Droppable: true},
		{Title: "ORIGIN ID", Width: 10},
		{Title: "RCN", Width: 3, Right: true},
		{Title: "REASON", Flex: true, Min: 12},
	})
	return p
}

func (p *Page) Init() tea.Cmd { return p.load(true) }

func (p *Page) load(peek bool) tea.Cmd {
	p.loading = true
	if p.indexMode {
		return common.Load(p.c, "flows", func(ctx context.Context, s data.Source) ([]data.FlowRef, error) {
			rows, err := s.Topics(ctx, "")
			if err != nil {
				return nil, err
			}
			return data.Flows(rows), nil
		}, func(f []data.FlowRef) tea.Msg { return IndexMsg{Flows: f} })
	}
	topic, sub, now := p.topic, p.sub, p.c.Clock.Now()
	if p.flow != nil { // resolved at the first reading
		topic, sub = p.flow.Topic, p.flow.Sub
	}
	askT, askS := p.topic, p.sub
	return common.LoadFor(p.c, p, "flow of "+naming.ShortName(topic, ""), func(ctx context.Context, s data.Source) (LoadedMsg, error) {
		t, sb, letters, err := Resolve(ctx, s, topic, sub)
		switch pr := common.ProblemOf(err); {
		case err == nil:
		case pr == common.ProblemUnreachable, pr == common.ProblemNotFound, pr == common.ProblemUnauthorized:
			return LoadedMsg{}, err // the cluster's answer, not the flow's: the screen's error state
		default:
			return LoadedMsg{Topic: askT, Sub: askS, Err: err}, nil
		}
		f, err := data.LoadFlow(ctx, s, t, sb, letters, now, peek)
		return LoadedMsg{Topic: askT, Sub: askS, Flow: f}, err
	}, func(m LoadedMsg) tea.Msg { return m })
}

// Resolve turns what the page was opened on into a topic and a subscription: a retry or DLQ
// topic gives the origin and subscription its verdict names (letters is then that topic); a
// topic without a subscription gets its first subscription that has a retry or DLQ topic, else
// its first.
func Resolve(ctx context.Context, s data.Source, topic, sub string) (origin, subscription, letters string, err error) {
	topic = data.ParseTopic(topic).String()
	v, err := s.Verdict(ctx, topic)
	if err != nil {
		return "", "", "", err
	}
	if v.Kind != data.KindTopic {
		if v.Origin == "" {
			return "", "", "", fmt.Errorf("%s: its letters do not say which topic they died on", naming.ShortName(topic, ""))
		}
		origin, subscription = v.Origin, v.OriginSub
		if subscription == "" {
			if subscription, err = firstSubscription(ctx, s, origin); err != nil {
				return "", "", "", err
			}
		}
		return origin, subscription, topic, nil
	}
	if sub != "" {
		return topic, sub, "", nil
	}
	rows, err := s.Topics(ctx, data.ParseTopic(topic).NamespaceName())
	if err != nil {
		return "", "", "", err
	}
	for _, f := range data.Flows(rows) {
		if f.Topic == topic && f.Sub != "" {
			return topic, f.Sub, "", nil
		}
	}
	sub, err = firstSubscription(ctx, s, topic)
	return topic, sub, "", err
}

// firstSubscription is topic's first subscription, or an error saying it has none.
func firstSubscription(ctx context.Context, s data.Source, topic string) (string, error) {
	d, err := s.TopicDetail(ctx, topic)
	if err != nil {
		return "", err
	}
	if len(d.Subscriptions) == 0 {
		return "", fmt.Errorf("%s has no subscription: a flow is a topic's subscription with its retry and DLQ topics", naming.ShortName(topic, ""))
	}
	return d.Subscriptions[0].Name, nil
}

func (p *Page) Title() string {
	if p.indexMode {
		return "Flows"
	}
	if p.flow != nil {
		return "Flow " + naming.ShortName(p.flow.Topic, "") + " · " + p.flow.Sub
	}
	return "Flow " + naming.ShortName(p.topic, "")
}
func (p *Page) Capturing() bool { return false }
func (p *Page) Busy() bool      { return p.loading }
func (p *Page) Close()          {}

// Flow is the last reading (tests).
func (p *Page) Flow() *data.Flow { return p.flow }

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	k := p.c.Keys
	switch msg := msg.(type) {
	case LoadedMsg:
		if p.indexMode || msg.Topic != p.topic || msg.Sub != p.sub {
			return p, nil
		}
		p.loading, p.loadErr = false, nil
		if msg.Err != nil {
			p.problem = msg.Err.Error()
			return p, nil
		}
		p.problem = ""
		f := msg.Flow
		if !f.Peeked && p.flow != nil {
			f.KeepPeek(p.flow)
		}
		p.flow = f
		p.setLatest()
	case IndexMsg:
		if p.indexMode {
			p.loading = false
			p.index = msg.Flows
			p.setIndex()
		}
	case common.ErrorMsg:
		p.loading = false
		if msg.Owner == p {
			p.loadErr = msg.Err
		}
	case common.RefreshMsg:
		p.ticks++
		if msg.Forced || !p.loading {
			return p, p.load(msg.Forced || p.ticks%PeekEvery == 0 || p.flow == nil)
		}
	case common.MouseMsg:
		if msg.Wheel != 0 {
			p.list().Move(msg.Wheel)
		}
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, k.Back):
			return p, common.Back
		case key.Matches(msg, k.Up):
			p.list().Move(-1)
		case key.Matches(msg, k.Down):
			p.list().Move(1)
		case key.Matches(msg, k.PageUp):
			p.list().PageUp()
		case key.Matches(msg, k.PageDown):
			p.list().PageDown()
		case key.Matches(msg, k.HalfUp):
			p.list().HalfUp()
		case key.Matches(msg, k.HalfDown):
			p.list().HalfDown()
		case key.Matches(msg, k.Top):
			p.list().Top()
		case key.Matches(msg, k.Bottom):
			p.list().Bottom()
		case key.Matches(msg, k.Enter):
			if p.indexMode {
				if i := p.idx.Cursor(); i < len(p.index) {
					return p, common.Navigate(common.NavigateMsg{Page: common.PageFlow, Topic: p.index[i].Topic, Sub: p.index[i].Sub})
				}
				return p, nil
			}
			return p, p.deadLetters()
		case p.indexMode:
			// The list's rows name no DLQ or retry topic: enter opens the flow that does.
		case p.failed():
			// Nothing on screen to act on.
		case key.Matches(msg, keyDLQ):
			return p, p.deadLetters()
		case key.Matches(msg, keyPeekRetry):
			if p.flow != nil && p.flow.Retry.SubKnown {
				return p, common.Navigate(common.NavigateMsg{Page: common.PageMessages, Topic: p.flow.Retry.Topic, Sub: p.flow.Retry.Sub})
			}
		}
	}
	return p, nil
}

var (
	keyDLQ       = key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "dead letters"))
	keyPeekRetry = key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "peek retry"))
)

func (p *Page) deadLetters() tea.Cmd {
	if p.flow == nil || !p.flow.DLQ.Exists {
		return func() tea.Msg { return common.StatusMsg("no DLQ topic yet: nothing has died on this subscription") }
	}
	return common.Navigate(common.NavigateMsg{Page: common.PageDLQ, Topic: p.flow.DLQ.Topic})
}

// failed reports that the screen has nothing to show but why: its first reading failed, or
// the topic (or the subscription) went since.
func (p *Page) failed() bool {
	return p.loadErr != nil && (p.flow == nil || common.ProblemOf(p.loadErr) == common.ProblemNotFound)
}

func (p *Page) list() *table.Model {
	if p.indexMode {
		return &p.idx
	}
	return &p.latest
}

func (p *Page) setIndex() {
	st := p.c.Styles
	flows := p.index
	p.idx.SetRowFunc(len(flows), func(i int) table.Row {
		f := flows[i]
		cell := func(ok bool, n int64) string {
			if !ok {
				return "-"
			}
			return common.Count(n)
		}
		dl := &st.Text
		if f.DLQBacklog > 0 {
			dl = &st.DLQ
		}
		return table.Row{Cells: []string{naming.ShortName(f.Topic, ""), f.Sub, cell(f.Retry, f.RetryBacklog), cell(f.DLQ, f.DLQBacklog), common.Rate(f.DLQRateIn)},
			Styles: []*lipgloss.Style{nil, &st.Subtle, &st.Retry, dl}}
	})
}

func (p *Page) setLatest() {
	st := p.c.Styles
	now := p.c.Clock.Now()
	dl := p.flow.Latest
	p.latest.SetRowFunc(len(dl), func(i int) table.Row {
		d := dl[i]
		if d.Unreadable != "" {
			return table.Row{Cells: []string{"?", "?", "-", "-", "unreadable: " + d.Unreadable},
				Styles: []*lipgloss.Style{&st.Error, &st.Error, &st.Error, &st.Error, &st.Error}}
		}
		reason := d.Reason
		if reason == "" {
			reason = "(no reason property)"
		}
		return table.Row{Cells: []string{common.Age(now, d.PublishTime), d.Key, d.OriginID, rcn(d.Reconsumes), reason},
			Styles: []*lipgloss.Style{&st.Subtle, nil, &st.Subtle, &st.Retry, &st.DLQ}}
	})
}

func rcn(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// selected is the dead letter whose journey is shown.
func (p *Page) selected() *data.DeadLetter {
	if p.flow == nil || len(p.flow.Latest) == 0 {
		return nil
	}
	i := min(p.latest.Cursor(), len(p.flow.Latest)-1)
	return &p.flow.Latest[i]
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.indexMode {
		return []key.Binding{withDesc(k.Enter, "open flow")}
	}
	if p.failed() {
		return []key.Binding{withDesc(k.Refresh, "try again")}
	}
	return []key.Binding{withDesc(k.Down, "journey of"), keyDLQ, keyPeekRetry, k.Refresh}
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	if p.indexMode {
		return []common.HelpSection{{Title: "Flows", Keys: []key.Binding{withDesc(k.Enter, "open the flow"), withDesc(k.Back, "back")}},
			common.NavigationHelp(k)}
	}
	return []common.HelpSection{{Title: "Flow", Keys: []key.Binding{
		withDesc(k.Enter, "the DLQ's dead letters"), withDesc(keyDLQ, "the DLQ's dead letters"),
		withDesc(keyPeekRetry, "peek the retry topic's backlog"), withDesc(k.Back, "back")}},
		common.NavigationHelp(k)}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// since is a compact "how long ago" for the journey.
func since(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return common.Age(now, t) + " ago"
}
