// Package replay is the replay screen, which also discards: a plan previewed, confirmed, run,
// then re-read. It starts with a dry run of the selection (what would move where, what is
// skipped and why), lets the run's controls be set (destination, rate, limit, loop guard, a new
// run or the interrupted one), asks before anything moves — typing the DLQ's name to discard
// more than 100 letters — and runs exactly what the preview showed: the engine stops at the
// DLQ's last letter as the preview saw it and says how many arrived since. A progress bar with
// rate and ETA; cancel at any time (moved messages stay moved, the rest stay in the DLQ); a sum
// of moved / discarded / skipped / failed; the DLQ and the origins read again; the run recorded
// in the history.
package replay

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// PreviewTimeout bounds a dry run; a real run is bounded by the engine's idle timeout and
// by cancel.
const PreviewTimeout = 30 * time.Minute

// Stage is where the plan is.
type Stage int

const (
	Previewing Stage = iota // dry run in progress
	Previewed               // dry run done: enter asks to confirm
	Confirming              // y runs
	Starting                // reading the counts before the run
	Running
	Done
	Failed // the preview or the run could not start
)

// EventsMsg carries the events a run reported since the last one; Open is false once the
// engine closed its channel.
type EventsMsg struct {
	Run    int
	Events []data.ReplayEvent
	Open   bool
	ch     <-chan data.ReplayEvent
}

// DoneMsg ends a run (or a dry run).
type DoneMsg struct {
	Run     int
	Summary data.ReplaySummary
	Err     error
}

// RereadMsg is the DLQ and the origins read again after a run.
type RereadMsg struct {
	common.Fresh
	Run     int
	Backlog data.Backlog     // the DLQ subscription's
	Origins map[string]int64 // messages published, by origin topic
}

// BeforeMsg is the origins' and the DLQ's counts read before a run, to tell what it changed.
type BeforeMsg struct {
	Run     int
	Backlog data.Backlog
	Origins map[string]int64
}

// Page is the replay screen.
type Page struct {
	c       *common.Common
	req     data.ReplayRequest
	opts    options     // the run's controls (options.go)
	typed   input.Model // the DLQ's name, typed to confirm a large discard
	stage   Stage
	run     int // bumps with each dry run or run, so late messages of an old one are ignored
	cancel  context.CancelFunc
	prog    dlqops.ReplayProgress
	dests   map[string]int64   // would move / moved, by destination
	why     map[string]int64   // skipped and failed, by reason
	recent  []data.ReplayEvent // the last events, newest last
	preview data.ReplaySummary
	// previewDests: where the preview would move dead letters (what a run re-reads).
	previewDests                 map[string]int64
	sum                          data.ReplaySummary
	err                          error
	cancelled, quitAsk, recorded bool
	before                       *BeforeMsg
	after                        *RereadMsg
	// The engine's result and the end of its events travel in separate commands; a run is
	// finished only once both are in, so no event is counted after the summary.
	eventsEnded bool
	ended       *DoneMsg
	started     time.Time
	returns     returns // the moved letters that came back to the DLQ (returned.go)
	w, h        int

	// crossTenant counts the letters left for being bound to another tenant's topic, by
	// destination: the confirmation names them, and yes lets the run send them there.
	crossTenant map[string]int64
}

// New returns the screen for req; Init starts the preview.
func New(c *common.Common, req data.ReplayRequest) *Page {
	p := &Page{c: c, req: req}
	p.opts = newOptions(c, req)
	p.typed = input.New(c, "type "+shortName(req.DLQ)+" to confirm: ", "")
	return p
}

// verb is what the run does to the letters it selects.
func (p *Page) verb() string {
	if p.req.Discard {
		return "discard"
	}
	return "replay"
}

// TypeToConfirm is how many letters a discard may take before its confirmation asks for the
// DLQ's name rather than y.
const TypeToConfirm = 100

// mustType reports whether the confirmation asks for the DLQ's name.
func (p *Page) mustType() bool { return p.req.Discard && p.preview.WouldMove > TypeToConfirm }

// shortName is what a user types to confirm: the DLQ's local name.
func shortName(topic string) string { return data.ParseTopic(topic).Local }

func (p *Page) Init() tea.Cmd { return p.start(true) }

// start launches a dry run or a run: the engine in one command, a listener of its events in
// another.
func (p *Page) start(dry bool) tea.Cmd {
	ds, ok := p.c.Source.(data.DeadLetterSource)
	if !ok {
		p.stage, p.err = Failed, fmt.Errorf("this source cannot replay")
		return nil
	}
	if p.req.Subscription == "" {
		p.stage, p.err = Failed, fmt.Errorf("no subscription: a replay reads the DLQ through its subscription (:replay DLQ SUB)")
		return nil
	}
	var otherTenants int64 // letters for other tenants' topics the run was allowed to send
	if !dry {
		if len(p.dests) > 0 || len(p.crossTenant) > 0 {
			p.previewDests = p.plannedDests()
		}
		if p.req.AllowCrossTenant {
			for _, n := range p.crossTenant {
				otherTenants += n
			}
		}
	}
	p.run++
	p.prog, p.dests, p.why, p.recent, p.cancelled, p.err = dlqops.ReplayProgress{}, map[string]int64{}, map[string]int64{}, nil, false, nil
	p.crossTenant = map[string]int64{}
	p.eventsEnded, p.ended, p.returns = false, nil, returns{}
	req := p.req
	req.DryRun = dry
	if dry {
		req.Until = nil // the preview reads up to the DLQ's last letter now, and says which
		// The preview names every letter bound for another tenant, whatever an earlier yes allowed.
		req.AllowCrossTenant = false
	} else {
		req.Selected = p.preview.WouldMove // the ETA is of the letters the preview selected
		if req.AllowCrossTenant {
			req.Selected += otherTenants // and of those the question named
		}
		p.recorded = false // a run again (ctrl+r, enter) is recorded too
	}
	var ctx context.Context
	if dry {
		p.stage = Previewing
		ctx, p.cancel = context.WithTimeout(p.c.Ctx, PreviewTimeout)
	} else {
		p.stage = Running
		ctx, p.cancel = context.WithCancel(p.c.Ctx)
	}
	p.started = p.c.Clock.Now()
	ch := make(chan data.ReplayEvent, 256)
	run := p.run
	exec := func() tea.Msg {
		sum, err := ds.Replay(ctx, req, ch)
		return DoneMsg{Run: run, Summary: sum, Err: err}
	}
	return tea.Batch(exec, listen(run, ch))
}

// listen waits for the next event and takes whatever else is ready, so a fast run costs a
// frame per batch rather than per message.
func listen(run int, ch <-chan data.ReplayEvent) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return EventsMsg{Run: run}
		}
		evs := []data.ReplayEvent{ev}
		for len(evs) < 1000 {
			select {
			case ev, ok := <-ch:
				if !ok {
					return EventsMsg{Run: run, Events: evs}
				}
				evs = append(evs, ev)
			default:
				return EventsMsg{Run: run, Events: evs, Open: true, ch: ch}
			}
		}
		return EventsMsg{Run: run, Events: evs, Open: true, ch: ch}
	}
}

// read reads the DLQ subscription's backlog and the destinations' published counts.
func (p *Page) read(msg func(data.Backlog, map[string]int64) tea.Msg) tea.Cmd {
	dlq, sub := p.req.DLQ, p.req.Subscription
	dests := slices.Sorted(maps.Keys(p.previewDests))
	return common.Load(p.c, "re-read "+naming.ShortName(dlq, ""), func(ctx context.Context, s data.Source) (tea.Msg, error) {
		d, err := s.TopicDetail(ctx, dlq)
		if err != nil {
			return nil, err
		}
		var backlog data.Backlog
		for _, ss := range d.Subscriptions {
			if ss.Name == sub {
				backlog = ss.BacklogOf()
			}
		}
		origins := map[string]int64{}
		for _, t := range dests {
			if od, err := s.TopicDetail(ctx, t); err == nil {
				origins[t] = od.Stats.InCounter
			}
		}
		return msg(backlog, origins), nil
	}, func(m tea.Msg) tea.Msg { return m })
}

func (p *Page) Title() string {
	if p.req.Discard {
		return "Discard " + naming.ShortName(p.req.DLQ, "")
	}
	return "Replay " + naming.ShortName(p.req.DLQ, "")
}
func (p *Page) Capturing() bool {
	return p.stage == Running || p.stage == Starting || p.stage == Confirming || p.quitAsk || p.opts.open
}
func (p *Page) Busy() bool { return p.stage == Previewing || p.stage == Starting || p.stage == Running }

// Streaming: a run reports its events as it goes.
func (p *Page) Streaming() bool { return p.stage == Running }

// Close cancels a run still going (the app is quitting): what moved stays moved, the rest
// stays in the DLQ. The history gets the run with what was counted so far, written here
// because no command runs after the app quits.
func (p *Page) Close() {
	if p.cancel == nil {
		return
	}
	p.cancel()
	if p.stage == Running && !p.recorded {
		if ds, ok := p.c.Source.(data.DeadLetterSource); ok {
			p.recorded = true
			_ = ds.RecordReplay(p.entry(p.prog, "cancelled (letterbox quit)"))
		}
	}
}

// Stage is where the plan is (tests).
func (p *Page) Stage() Stage { return p.stage }

// confirmed starts the run: the DLQ and the destinations are read first, so the summary can
// tell what the run changed; the run starts when they are read.
func (p *Page) confirmed() tea.Cmd {
	p.stage, p.before = Starting, nil
	p.previewDests = p.plannedDests()
	run := p.run
	return p.read(func(b data.Backlog, o map[string]int64) tea.Msg { return BeforeMsg{Run: run, Backlog: b, Origins: o} })
}

// anySelected says whether the preview selected a letter: one it would move, or one bound for
// another tenant's topic, which the question names and yes sends.
func (p *Page) anySelected() bool { return p.preview.WouldMove > 0 || len(p.crossTenant) > 0 }

// plannedDests is where the preview would move letters: with the letters for other tenants'
// topics once the question that named them was answered yes.
func (p *Page) plannedDests() map[string]int64 {
	dests := maps.Clone(p.dests)
	if dests == nil {
		dests = map[string]int64{}
	}
	if p.req.AllowCrossTenant {
		for d, n := range p.crossTenant {
			dests[d] += n
		}
	}
	return dests
}

// typedKey takes the DLQ's name typed to confirm a large discard: enter with the right name
// runs it, anything else keeps asking; esc gives up.
func (p *Page) typedKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		p.typed.Blur()
		p.stage = Previewed
		return nil
	case "enter":
		if strings.TrimSpace(p.typed.Value()) != shortName(p.req.DLQ) {
			p.typed.SetValue("")
			return func() tea.Msg {
				return common.StatusMsg("that is not the DLQ's name: nothing discarded (type " + shortName(p.req.DLQ) + ", or esc)")
			}
		}
		p.typed.Blur()
		return p.confirmed()
	}
	var cmd tea.Cmd
	p.typed, cmd = p.typed.Update(msg)
	return cmd
}

var (
	keyRun     = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run it…"))
	keyYes     = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes, move them"))
	keyNo      = key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "no"))
	keyCancel  = key.NewBinding(key.WithKeys("esc", "c"), key.WithHelp("esc", "cancel the run"))
	keyQuit    = key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit (asks)"))
	keyPreview = key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "preview again"))
	keyOptions = key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "controls…"))
	// The controls' fields are moved through with these (optionsKey); letters type.
	keyNextField = key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab", "next field"))
	keyPrevField = key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab", "previous field"))
)

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	switch msg := msg.(type) {
	case EventsMsg:
		if msg.Run != p.run {
			return p, nil
		}
		for _, ev := range msg.Events {
			p.count(ev)
		}
		if msg.Open {
			return p, listen(msg.Run, msg.ch)
		}
		p.eventsEnded = true
		if p.ended != nil {
			return p, p.done(*p.ended)
		}
	case DoneMsg:
		if msg.Run != p.run {
			return p, nil
		}
		if !p.eventsEnded {
			p.ended = &msg
			return p, nil
		}
		return p, p.done(msg)
	case BeforeMsg:
		if msg.Run == p.run && p.stage == Starting {
			p.before = &msg
			return p, p.start(false)
		}
	case common.ErrorMsg:
		if p.stage == Starting { // the counts before could not be read: run without them
			return p, p.start(false)
		}
	case RereadMsg:
		if msg.Run == p.run {
			p.after = &msg
		}
	case ReturnedMsg:
		if msg.Run == p.run {
			p.returns.reading, p.returns.known, p.returns.ReturnedMsg = false, true, msg
		}
	case returnsFailed:
		if msg.run == p.run {
			p.returns.reading = false
		}
	case common.RefreshMsg:
		if !msg.Forced && p.stage == Done {
			return p, p.readReturns()
		}
		// ctrl+r, where nothing runs: the preview again.
		if msg.Forced && !p.opts.open && (p.stage == Previewed || p.stage == Done || p.stage == Failed) {
			return p, p.start(true)
		}
	case tea.KeyPressMsg:
		return p, p.key(msg)
	}
	return p, nil
}

func (p *Page) count(ev data.ReplayEvent) {
	p.prog = ev.Progress
	switch ev.Action {
	case dlqops.Moved, dlqops.WouldMove:
		p.dests[ev.Destination]++
	case dlqops.Skipped, dlqops.Failed:
		p.why[string(ev.Action)+": "+ev.Reason]++
		if ev.Action == dlqops.Failed && strings.HasPrefix(ev.Reason, dlqops.CrossTenantReason) {
			p.crossTenant[ev.Destination]++
		}
	}
	p.returns.noteMoved(ev)
	p.recent = append(p.recent, ev)
	if len(p.recent) > 50 {
		p.recent = p.recent[len(p.recent)-50:]
	}
}

func (p *Page) done(m DoneMsg) tea.Cmd {
	p.cancel()
	p.prog = m.Summary.Progress
	if m.Summary.DryRun || p.stage == Previewing {
		p.preview = m.Summary
		if m.Err != nil {
			p.stage, p.err = Failed, m.Err
			return nil
		}
		// The run takes what the preview saw, up to the DLQ's last letter then.
		until := m.Summary.Until
		p.req.Until = &until
		p.stage = Previewed
		return nil
	}
	p.sum, p.err, p.stage = m.Summary, m.Err, Done
	run := p.run
	var cmds []tea.Cmd
	if !p.recorded {
		p.recorded = true
		e := p.entry(m.Summary.Progress, dlqops.Result(m.Summary, m.Err))
		e.Run = m.Summary.Run
		if p.cancelled {
			e.Result = "cancelled"
		}
		if ds, ok := p.c.Source.(data.DeadLetterSource); ok {
			verb := p.verb()
			cmds = append(cmds, func() tea.Msg {
				if err := ds.RecordReplay(e); err != nil {
					return common.ErrorMsg{What: verb + " history", Err: err}
				}
				return common.StatusMsg(verb + " recorded in the history")
			})
		}
	}
	cmds = append(cmds, p.read(func(b data.Backlog, o map[string]int64) tea.Msg { return RereadMsg{Run: run, Backlog: b, Origins: o} }),
		p.readReturns())
	if m.Summary.Moved+m.Summary.Discarded > 0 {
		dlq := p.req.DLQ
		cmds = append(cmds, func() tea.Msg { return common.ChangedMsg{Topic: data.ParseTopic(dlq).String()} })
	}
	return tea.Batch(cmds...)
}

func (p *Page) entry(pr dlqops.ReplayProgress, result string) data.HistoryEntry {
	action := dlqops.ActionReplay
	if p.req.Discard {
		action = dlqops.ActionDiscard
	}
	sel := p.req.Describe()
	if p.req.Limit > 0 {
		sel += fmt.Sprintf(" · at most %d", p.req.Limit)
	}
	if p.req.Destination != "" {
		sel += " → " + naming.ShortName(p.req.Destination, "")
	}
	e := dlqops.Entry(action, data.ParseTopic(p.req.DLQ).String(), p.req.Subscription, sel,
		dlqops.Summary{Progress: pr, Arrived: p.sum.Arrived, LeftOut: p.sum.LeftOut}, result)
	e.When, e.By = p.started.UTC(), "tui"
	return e
}

func (p *Page) key(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if p.quitAsk {
		p.quitAsk = false
		if key.Matches(msg, keyYes) {
			p.cancelled = true
			p.Close()
			return func() tea.Msg { return common.QuitMsg{} }
		}
		return nil
	}
	switch p.stage {
	case Previewing:
		if key.Matches(msg, k.Back) {
			p.cancel()
			return common.Back
		}
	case Previewed:
		if p.opts.open {
			return p.optionsKey(msg)
		}
		switch {
		case key.Matches(msg, keyRun):
			if !p.anySelected() {
				return func() tea.Msg {
					return common.StatusMsg("nothing to " + p.verb() + ": the preview selected no dead letter")
				}
			}
			if refuse := p.c.Refuse(p.verb()); refuse != nil {
				return refuse
			}
			p.stage = Confirming
			if p.mustType() {
				p.typed.SetValue("")
				p.typed.Focus()
			}
		case key.Matches(msg, keyOptions):
			p.opts.openForm()
		case key.Matches(msg, keyPreview):
			return p.start(true)
		case key.Matches(msg, k.Back):
			return common.Back
		}
	case Confirming:
		if p.mustType() {
			return p.typedKey(msg)
		}
		switch {
		case key.Matches(msg, keyYes):
			// The question named the other tenants' topics: yes sends their letters there too.
			p.req.AllowCrossTenant = len(p.crossTenant) > 0
			// Read the DLQ and the destinations first, so the summary can tell what the run
			// changed; the run starts when they are read.
			return p.confirmed()
		case key.Matches(msg, keyNo):
			p.stage = Previewed
		}
	case Running:
		switch {
		case key.Matches(msg, keyCancel):
			p.cancelled = true
			p.cancel()
		case key.Matches(msg, keyQuit):
			p.quitAsk = true
		}
	case Done, Failed:
		switch {
		case key.Matches(msg, keyPreview):
			return p.start(true)
		case key.Matches(msg, k.Back):
			return common.Back
		}
	}
	return nil
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	switch {
	case p.quitAsk:
		return []key.Binding{withDesc(keyYes, "quit, cancelling the run"), withDesc(keyNo, "keep running")}
	case p.opts.open:
		return []key.Binding{withDesc(k.Enter, "apply and preview"), withDesc(k.NextField, "next field"), withDesc(k.Back, "cancel")}
	case p.stage == Previewed:
		return []key.Binding{keyRun, keyOptions, keyPreview}
	case p.stage == Confirming && p.mustType():
		return []key.Binding{withDesc(k.Enter, "discard"), withDesc(k.Back, "no")}
	case p.stage == Confirming:
		return []key.Binding{withDesc(keyYes, "yes"), keyNo}
	case p.stage == Running:
		return []key.Binding{keyCancel, keyQuit}
	case p.stage == Done || p.stage == Failed:
		return []key.Binding{keyPreview}
	}
	return []key.Binding{withDesc(k.Back, "stop the preview")}
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	verb := p.verb()
	return []common.HelpSection{
		{Title: "Preview", Keys: []key.Binding{withDesc(keyRun, verb+" what the preview shows (asks first)"),
			withDesc(keyOptions, "controls: destination, rate, limit, loop guard, new run"), keyPreview, withDesc(k.Back, "back, nothing done")}},
		{Title: "Controls", Keys: []key.Binding{keyNextField, keyPrevField,
			withDesc(k.Enter, "apply and preview again"), withDesc(k.Back, "close, unchanged")}},
		{Title: "Asked, running", Keys: []key.Binding{withDesc(keyYes, "yes, "+verb), keyNo, keyCancel, keyQuit}},
		input.EditingHelp(false),
	}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
