// Package messages is the messages screen: a subscription's backlog peeked page by page (the
// cursor does not move), the topic read from any position (earliest, latest, a time, a message
// id) a page at a time with a non-durable reader, or the topic tailed live with a non-durable
// reader that follows new messages until you scroll back. Payloads are decoded by schema
// (Avro → JSON, JSON pretty, string, hex dump); "/" searches what is loaded; marked messages
// export as JSON lines; "y" copies a payload through the terminal (OSC 52).
//
// New opens it on a subscription's backlog and NewAt on the topic from a position.
package messages

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// PageSize is how many messages one peek page holds.
const PageSize = 20

// PeekedMsg carries one page of a peek.
type PeekedMsg struct {
	common.Fresh
	Topic, Sub string
	From       int
	Msgs       []data.Message
}

// SchemaMsg carries the topic's schema, for decoding.
type SchemaMsg struct {
	Topic  string
	Schema *data.SchemaInfo
}

const (
	focusList = iota
	focusDetail
)

const (
	promptNone = iota
	promptFilter
	promptExport
	promptFrom
)

// BrowsedMsg carries one page of the topic read from a position.
type BrowsedMsg struct {
	common.Fresh
	Topic string
	At    data.From
	Page  *data.BrowsePage
}

// Page is the messages screen.
type Page struct {
	c         *common.Common
	topic     string
	sub       string // "" tails
	msgs      []data.Message
	marked    map[string]bool
	dropped   int // tail: messages dropped past TailLimit
	from      int // peek: position of the first message of the page
	more      bool
	following bool
	// browse: the page read from at, and its neighbours
	browsing         bool
	at               data.From
	next, prev       data.From
	hasNext, hasPrev bool
	stop             func()
	ch               <-chan data.TailEvent // the running tail's: news of an earlier one is old
	tailDone         bool
	tailErr          error // why the tail ended
	tailLost         bool  // the tail's reader lost its broker and is reconnecting
	loadErr          error // the screen's own reading failed (nothing to show)
	dec              decoder
	mode             int
	tbl              table.Model
	detailOff        int
	focus            int
	prompt           int
	in               input.Model
	query            string            // the filter typed after /
	flt              *expr.Expr        // …parsed: what the list shows
	fltErr           *expr.SyntaxError // the filter being typed does not parse
	shown            []int             // indexes into msgs that pass the filter
	loading          bool
	w, h             int
}

// New returns the screen for topic: a peek of sub, or a live tail when sub is "".
func New(c *common.Common, topic, sub string) *Page {
	p := &Page{c: c, topic: topic, sub: sub, from: 1, marked: map[string]bool{}, following: sub == ""}
	p.tbl = table.New(c, []table.Column{
		{Title: " ", Width: 1},
		{Title: "#", Width: 4, Right: true},
		{Title: "TIME", Width: 8},
		{Title: "KEY", Width: 12, Droppable: true},
		{Title: "SIZE", Width: 6, Right: true},
		{Title: "REDLV", Width: 5, Right: true, Droppable: true},
		{Title: "RECONS", Width: 6, Right: true},
		{Title: "PAYLOAD", Flex: true, Min: 12},
	})
	p.in = input.New(c, "/", "")
	return p
}

// NewAt returns the screen reading topic from from, a page at a time.
func NewAt(c *common.Common, topic string, from data.From) *Page {
	p := New(c, topic, "")
	p.following, p.browsing, p.at = false, true, from
	return p
}

func (p *Page) Init() tea.Cmd {
	t := p.topic
	schema := common.Load(p.c, "schema", func(ctx context.Context, s data.Source) (*data.SchemaInfo, error) {
		return s.Schema(ctx, t)
	}, func(si *data.SchemaInfo) tea.Msg { return SchemaMsg{Topic: t, Schema: si} })
	switch {
	case p.browsing:
		return tea.Batch(schema, p.browse(p.at))
	case p.sub == "":
		return tea.Batch(schema, p.startTail())
	}
	return tea.Batch(schema, p.peek(1))
}

// browse reads the page of the topic that starts at from.
func (p *Page) browse(from data.From) tea.Cmd {
	ts, ok := p.c.Source.(data.TriageSource)
	if !ok {
		return status("this cluster connection cannot read a topic from a position")
	}
	p.loading = true
	t := p.topic
	return common.LoadFor(p.c, p, "read "+naming.ShortName(t, ""), func(ctx context.Context, _ data.Source) (*data.BrowsePage, error) {
		return ts.Browse(ctx, t, data.View{}, from, PageSize)
	}, func(bp *data.BrowsePage) tea.Msg { return BrowsedMsg{Topic: t, At: from, Page: bp} })
}

// openAt leaves the peek or the tail for reading the topic from from.
func (p *Page) openAt(from data.From) tea.Cmd {
	p.Close() // a tail stops
	p.sub, p.browsing, p.following, p.tailDone = "", true, false, false
	p.msgs, p.marked, p.query, p.flt, p.shown = nil, map[string]bool{}, "", nil, nil
	p.tbl.Top()
	return p.browse(from)
}

func (p *Page) peek(from int) tea.Cmd {
	p.loading = true
	t, sub := p.topic, p.sub
	return common.LoadFor(p.c, p, "peek "+sub, func(ctx context.Context, s data.Source) ([]data.Message, error) {
		return s.Peek(ctx, t, sub, from, PageSize)
	}, func(ms []data.Message) tea.Msg { return PeekedMsg{Topic: t, Sub: sub, From: from, Msgs: ms} })
}

func (p *Page) Title() string {
	switch {
	case p.browsing:
		return "read " + data.ParseTopic(p.topic).Local
	case p.sub == "":
		return "tail " + data.ParseTopic(p.topic).Local
	}
	return "peek " + p.sub
}

func (p *Page) Capturing() bool { return p.prompt != promptNone }

// Streaming: a tail waits for messages as long as it runs.
func (p *Page) Streaming() bool { return p.stop != nil && !p.tailDone }
func (p *Page) Busy() bool      { return p.loading }

func (p *Page) Close() {
	if p.stop != nil {
		p.stop()
		p.stop = nil
	}
}

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	switch msg := msg.(type) {
	case SchemaMsg:
		if msg.Topic == p.topic {
			p.dec = newDecoder(msg.Schema)
			p.refreshRows()
		}
	case PeekedMsg:
		if msg.Topic == p.topic && msg.Sub == p.sub {
			p.loading, p.loadErr = false, nil
			p.from, p.msgs = msg.From, msg.Msgs
			p.more = len(msg.Msgs) >= PageSize
			p.marked = map[string]bool{}
			p.refreshRows()
			p.tbl.Top()
		}
	case BrowsedMsg:
		if msg.Topic == p.topic && p.browsing {
			p.loading, p.loadErr = false, nil
			p.at = msg.At
			p.next, p.hasNext, p.prev, p.hasPrev = msg.Page.Next, msg.Page.More, msg.Page.Prev, msg.Page.HasPrev
			p.msgs = msg.Page.Msgs
			p.marked = map[string]bool{}
			p.refreshRows()
			p.tbl.Top()
		}
	case TailStartedMsg:
		if msg.Topic != p.topic || p.stop != nil || p.browsing {
			if msg.stop != nil {
				msg.stop()
			}
			return p, nil
		}
		p.loading, p.loadErr = false, nil
		p.stop, p.ch = msg.stop, msg.ch
		return p, waitTail(p.topic, msg.ch)
	case TailMsg:
		if msg.Topic != p.topic || p.stop == nil || msg.ch != p.ch {
			return p, nil
		}
		if !msg.ok {
			return p, p.tailEnded(msg.Err)
		}
		p.appendTail(msg.Msg)
		return p, waitTail(p.topic, msg.ch)
	case TailLostMsg:
		if msg.Topic != p.topic || p.stop == nil || msg.ch != p.ch {
			return p, nil
		}
		p.tailLost = true
		topic := naming.ShortName(msg.Topic, "")
		// The news first: the next event (back again) comes a while later.
		return p, tea.Batch(func() tea.Msg {
			return common.ErrorMsg{What: "tail " + topic, Err: data.ErrLinkLost}
		}, waitTail(p.topic, msg.ch))
	case TailBackMsg:
		if msg.Topic != p.topic || p.stop == nil || msg.ch != p.ch {
			return p, nil
		}
		p.tailLost = false
		return p, tea.Batch(waitTail(p.topic, msg.ch), status("the tail of "+naming.ShortName(msg.Topic, "")+" is connected again and reads on"))
	case ExportedMsg:
		return p, func() tea.Msg {
			return common.StatusMsg("exported " + common.Plural(msg.N, "message") + " to " + msg.Path)
		}
	case CheckedMsg:
		if msg.Topic == p.topic && msg.Sub == p.sub {
			wasGone := p.gone()
			p.loadErr = nil
			if wasGone && !p.tailing() { // it is there again: read it again
				return p, p.reload()
			}
		}
	case common.ErrorMsg:
		p.loading = false
		if msg.Owner == p {
			p.loadErr = msg.Err
		}
	case common.RefreshMsg:
		switch {
		case msg.Forced && p.tailing() && (p.tailDone || p.stop == nil || p.tailLost):
			return p, p.restartTail()
		case msg.Forced:
			return p, p.reload()
		case p.loading:
		case p.loadErr != nil && len(p.msgs) == 0 && !p.tailDone:
			return p, p.reload() // the first reading failed: again, until the cluster answers
		case p.tailing() && (p.stop == nil || p.tailDone):
			// An ended tail waits for ctrl+r.
		default:
			return p, p.check()
		}
	case common.MouseMsg:
		if msg.Wheel != 0 {
			p.move(3 * msg.Wheel)
		} else if msg.Click {
			if i := p.tbl.RowAt(msg.Y - 1); i >= 0 {
				p.tbl.SetCursor(i)
				p.detailOff = 0
				p.following = false
			}
		}
	case tea.KeyPressMsg:
		if p.prompt != promptNone {
			return p, p.updatePrompt(msg)
		}
		return p, p.key(msg)
	}
	return p, nil
}

// tailing reports whether the screen is a tail (not a peek, not a reading from a position).
func (p *Page) tailing() bool { return !p.browsing && p.sub == "" }

// reload reads again what the screen shows: the page of the peek or of the reading, or a tail
// started anew.
func (p *Page) reload() tea.Cmd {
	switch {
	case p.browsing:
		return p.browse(p.at)
	case p.sub != "":
		return p.peek(p.from)
	case p.stop == nil:
		return p.startTail()
	}
	return nil
}

// failed reports that the screen has nothing to show but why: its reading failed before it
// read anything, or what a peek or a reading from a position showed is gone. A tail keeps what
// it read, and its state line says why it ended.
func (p *Page) failed() bool {
	return p.loadErr != nil && (len(p.msgs) == 0 || (p.gone() && !p.tailing()))
}

// gone reports that what the screen reads (its topic, or the subscription a peek reads
// through) was not found at the last look.
func (p *Page) gone() bool {
	return p.loadErr != nil && common.ProblemOf(p.loadErr) == common.ProblemNotFound
}

func (p *Page) move(d int) {
	if p.focus == focusDetail {
		p.detailOff = max(0, p.detailOff+d)
		return
	}
	p.tbl.Move(d)
	p.detailOff = 0
	// Scrolling back stops following; reaching the end again resumes it.
	if p.sub == "" && !p.browsing {
		p.following = p.tbl.Cursor() >= len(p.shown)-1
	}
}

func (p *Page) key(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if p.failed() && !key.Matches(msg, k.Back) {
		return nil // nothing on screen to act on
	}
	switch {
	case key.Matches(msg, k.Back):
		if p.query != "" {
			p.setFilter("")
			return nil
		}
		return common.Back
	case key.Matches(msg, k.NextPane):
		p.focus = 1 - p.focus
		p.tbl.Focus(p.focus == focusList)
	case key.Matches(msg, k.Up):
		p.move(-1)
	case key.Matches(msg, k.Down):
		p.move(1)
	case key.Matches(msg, k.PageUp):
		p.move(-10)
	case key.Matches(msg, k.PageDown):
		p.move(10)
	case key.Matches(msg, k.HalfUp):
		p.move(-5)
	case key.Matches(msg, k.HalfDown):
		p.move(5)
	case key.Matches(msg, k.Top):
		p.move(-1 << 30)
	case key.Matches(msg, k.Bottom), key.Matches(msg, k.Follow):
		if p.focus == focusDetail {
			p.detailOff = 1 << 20
			return nil
		}
		p.tbl.Bottom()
		p.following = p.sub == ""
	case key.Matches(msg, k.Decode):
		p.mode = (p.mode + 1) % decodeModes
		p.detailOff = 0
	case key.Matches(msg, k.Mark):
		if m := p.current(); m != nil {
			if m.Unreadable != "" {
				return status(unreadableNote)
			}
			p.marked[m.ID] = !p.marked[m.ID]
			if !p.marked[m.ID] {
				delete(p.marked, m.ID)
			}
			p.refreshRows()
			p.tbl.Move(1)
		}
	case key.Matches(msg, k.Filter):
		p.prompt = promptFilter
		p.in = input.New(p.c, "/", "text, or key=…, property.NAME=…, payload~REGEX, json.PATH=…, published>=-1h")
		p.in.SetWidth(p.w - 2)
		p.in.SetValue(p.query)
		p.in.Focus()
	case key.Matches(msg, k.Export):
		if len(p.msgs) == 0 {
			return status("nothing to export")
		}
		p.prompt = promptExport
		p.in = input.New(p.c, "export to: ", "")
		if d := p.c.ExportDir; d != "" {
			p.in.SetPrompt("export to ("+d+"): ", "")
		}
		p.in.SetWidth(p.w - 2)
		p.in.SetValue(defaultExportName(p.topic, p.c.Clock.Now()))
		p.in.Focus()
	case key.Matches(msg, k.NextMatch):
		p.jump(1)
	case key.Matches(msg, k.PrevMatch):
		p.jump(-1)
	case key.Matches(msg, k.Copy):
		if m := p.current(); m != nil {
			if m.Unreadable != "" {
				return status(unreadableNote)
			}
			text, _ := p.dec.decode(m.Payload, p.mode)
			return tea.Batch(tea.SetClipboard(text), status("copied the payload of "+m.ID+" (OSC 52)"))
		}
	case key.Matches(msg, k.OpenAt):
		p.prompt = promptFrom
		p.in = input.New(p.c, "open at: ", "earliest, latest, 2026-11-30 08:00, -2h, or a message id 12:34")
		p.in.SetWidth(p.w - 2)
		p.in.Focus()
	case key.Matches(msg, k.NextPage):
		switch {
		case p.browsing && p.hasNext:
			return p.browse(p.next)
		case p.sub != "" && p.more:
			return p.peek(p.from + p.span())
		}
		return status("this is the last page")
	case key.Matches(msg, k.PrevPage):
		switch {
		case p.browsing && p.hasPrev:
			return p.browse(p.prev)
		case !p.browsing && p.sub != "" && p.from > 1:
			return p.peek(max(1, p.from-PageSize))
		}
		return status("this is the first page")
	}
	return nil
}

// span is how many positions the loaded page covers (a batch entry holds several messages at
// one position).
func (p *Page) span() int {
	if len(p.msgs) == 0 {
		return PageSize
	}
	last := p.msgs[len(p.msgs)-1].Position
	if last < p.from {
		return len(p.msgs)
	}
	return last - p.from + 1
}

func (p *Page) current() *data.Message {
	i := p.tbl.Cursor()
	if i < 0 || i >= len(p.shown) || p.shown[i] >= len(p.msgs) {
		return nil
	}
	return &p.msgs[p.shown[i]]
}

func status(s string) tea.Cmd { return func() tea.Msg { return common.StatusMsg(s) } }
