// Package tui is letterbox's terminal UI: the app model (a stack of pages under a header, a
// status line and a key footer, with a ":" palette and a "?" help overlay) and Run, its entry
// point. Screens live in pages/, shared pieces in components/, data access in data/.
package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/footer"
	"github.com/letterbox-dev/letterbox/tui/components/help"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/components/palette"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/pages/topics"
	"github.com/letterbox-dev/letterbox/tui/pages/waiting"
)

// connState is what the header says about the cluster.
type connState int

const (
	connUnknown connState = iota
	connUp
	connDown
)

// refreshTickMsg drives live refresh: the active page reloads on each one.
type refreshTickMsg struct{}

// spinTickMsg turns the header spinner while a page is busy.
type spinTickMsg struct{}

// App is the root model.
type App struct {
	c           *common.Common
	stack       []common.Page
	root        *topics.Page
	palette     palette.Model
	paletteOpen bool
	help        help.Model
	helpOpen    bool
	status      statusLine // status.go
	// freshAt is when each page last received data from the cluster, and askedAt when it was
	// first asked to refresh since (zero: nothing asked unanswered): the header says how old
	// what is on screen is only once a refresh has gone unanswered for a whole period, the
	// broker not answering (or failing), never while it answers, however long a page shows
	// what it read.
	freshAt map[common.Page]time.Time
	askedAt map[common.Page]time.Time
	// opened is what each screen on the stack was opened on (navKey), to return to it.
	opened   map[common.Page]string
	conn     connState
	refresh  time.Duration
	spin     int
	spinning bool
	quitting bool
	ctxs     contextState // contexts.go
	// readOnlyFlag is the session's own read-only reason (--readonly), which a context switch
	// keeps; a context's readonly setting holds only while on it.
	readOnlyFlag string
	// question is a yes-or-no the app asks on the status line (quit, produce to a new topic).
	question *question
	// others says who else uses the embedded broker (nil: letterbox runs no broker of its own).
	others func() Others
	// serviceInHeader: the header shows the service URL beside the admin URL (header.go).
	serviceInHeader bool
	// names are the topics and subscriptions the palette completes (completions.go).
	names names
	// typed is the palette line being run; pending what each waiting screen opens once the
	// cluster answers (commands.go).
	typed   string
	pending map[*waiting.Page]pendingOpen
}

// question is asked on the status line: y does yes, n or esc nothing.
type question struct {
	text string
	yes  func() tea.Cmd
}

// ask puts a yes-or-no question on the status line.
func (a *App) ask(text string, yes func() tea.Cmd) { a.question = &question{text: text, yes: yes} }

// askQuit quits, asking first when quitting would stop a broker that others use.
func (a *App) askQuit() tea.Cmd {
	if a.others != nil {
		if o := a.others(); o.Any() {
			a.ask(fmt.Sprintf("The embedded broker serves others besides letterbox, %s: quitting stops it. Quit? y yes · n no", o), a.quit)
			return nil
		}
	}
	return a.quit()
}

// NewApp builds the app on c, starting on the topics screen of namespace ns ("" = all).
func NewApp(c *common.Common, ns string, refresh time.Duration) *App {
	a := &App{c: c, refresh: refresh, freshAt: map[common.Page]time.Time{}, askedAt: map[common.Page]time.Time{},
		opened: map[common.Page]string{}, pending: map[*waiting.Page]pendingOpen{}}
	a.root = topics.New(c, ns)
	a.stack = []common.Page{a.root}
	a.palette = palette.New(c, commands)
	a.help = help.New(c)
	if c.Width == 0 {
		c.Width, c.Height = 80, 24
	}
	a.resize()
	return a
}

func (a *App) active() common.Page { return a.stack[len(a.stack)-1] }

func (a *App) Init() tea.Cmd {
	return tea.Batch(owned(a.root, a.root.Init()), a.tick(), a.spinTick())
}

func (a *App) tick() tea.Cmd {
	if a.refresh <= 0 {
		return nil
	}
	return a.c.Clock.Tick(a.refresh, func(time.Time) tea.Msg { return refreshTickMsg{} })
}

// spinTick keeps the spinner turning only while something loads, so an idle TUI schedules
// nothing but the refresh tick.
func (a *App) spinTick() tea.Cmd {
	if a.spinning || !a.active().Busy() {
		return nil
	}
	a.spinning = true
	return a.c.Clock.Tick(120*time.Millisecond, func(time.Time) tea.Msg { return spinTickMsg{} })
}

// pageHeight is the page area: the screen minus the header, the status line and the footer.
func (a *App) pageHeight() int { return max(1, a.c.Height-3) }

func (a *App) resize() {
	for _, p := range a.stack {
		p.SetSize(a.c.Width, a.pageHeight())
	}
	a.palette.SetWidth(a.c.Width)
	a.help.SetSize(a.c.Width, a.pageHeight())
}

func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	msg, current := a.ctxs.untag(msg)
	if !current { // an answer from the cluster before a :context switch
		return a, nil
	}
	cmd := a.update(msg)
	return a, a.ctxs.tag(tea.Batch(cmd, a.spinTick()))
}

func (a *App) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.c.Width, a.c.Height = msg.Width, msg.Height
		a.resize()
		return nil
	case refreshTickMsg:
		a.expire()
		return tea.Batch(a.refreshActive(common.RefreshMsg{}), a.tick())
	case statusExpiredMsg:
		if msg.seq == a.status.seq {
			a.expire()
		}
		return nil
	case spinTickMsg:
		a.spinning = false
		a.spin++
		return nil
	case tea.KeyPressMsg:
		return a.keyed(msg)
	case tea.MouseWheelMsg:
		m := msg.Mouse()
		d := 1
		if m.Button == tea.MouseWheelUp {
			d = -1
		}
		if a.helpOpen {
			a.help.Wheel(d)
			return nil
		}
		return a.toActive(common.MouseMsg{X: m.X, Y: m.Y - 1, Wheel: d})
	case tea.MouseClickMsg:
		m := msg.Mouse()
		if a.helpOpen || a.paletteOpen {
			return nil
		}
		return a.toActive(common.MouseMsg{X: m.X, Y: m.Y - 1, Click: true})
	case common.NavigateMsg:
		return a.push(msg)
	case common.BackMsg:
		a.pop()
		a.clearStatus()
		// The screen returned to shows what it read when it was left: read it again now.
		return a.toActive(common.RefreshMsg{})
	case common.QuitMsg:
		return a.quit()
	case resolvedMsg:
		return msg.then(msg.topic)
	case waitMsg:
		return a.waitFor(msg)
	case waiting.ResolvedMsg:
		return tea.Batch(a.fresh(), a.waited(msg))
	case common.PaletteMsg:
		cmd := a.openPalette()
		a.palette.SetValue(msg.Line)
		return cmd
	case namesMsg, subsMsg:
		a.namesRead(msg)
		return nil
	case common.StatusMsg, common.ErrorMsg:
		return a.reported(nil, msg)
	case ownedMsg:
		return a.reported(msg.page, msg.msg)
	case common.RefreshMsg:
		return a.refreshActive(msg)
	case contextOpenedMsg:
		return a.contextOpened(msg)
	}
	if _, ok := msg.(common.FreshMsg); ok {
		return tea.Batch(a.fresh(), a.toAll(msg))
	}
	return a.toAll(msg)
}

// fresh takes data that just arrived from the cluster as proof that it answers.
func (a *App) fresh() tea.Cmd {
	var cmd tea.Cmd
	if a.conn == connDown && a.status.err {
		cmd = a.say("reconnected", false) // the condition cleared
	}
	a.conn = connUp
	// Only the screen on top reloads, so what just arrived is its.
	a.freshAt[a.active()] = a.c.Clock.Now()
	delete(a.askedAt, a.active())
	return cmd
}

func (a *App) key(msg tea.KeyPressMsg) tea.Cmd {
	k := a.c.Keys
	if key.Matches(msg, k.ForceQuit) {
		return a.quit()
	}
	if a.paletteOpen {
		var cmd tea.Cmd
		a.palette, cmd = a.palette.Update(msg)
		switch outcome, line := a.palette.Outcome(); outcome {
		case palette.Dismissed:
			a.paletteOpen = false
			return cmd
		case palette.Entered:
			a.paletteOpen = false
			return tea.Batch(cmd, a.run(line))
		}
		return tea.Batch(cmd, a.paletteTyped())
	}
	if q := a.question; q != nil {
		switch msg.String() {
		case "y", "Y":
			a.question = nil
			return q.yes()
		case "n", "N", "esc":
			a.question = nil
		}
		return nil
	}
	if a.helpOpen {
		var closed bool
		a.help, closed = a.help.Update(msg)
		a.helpOpen = !closed
		return nil
	}
	if a.active().Capturing() {
		if msg.String() == helpWhileTyping {
			a.openHelp()
			return nil
		}
		return a.toActive(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		return a.askQuit()
	case key.Matches(msg, k.Help):
		a.openHelp()
		return nil
	case key.Matches(msg, k.Palette):
		return a.openPalette()
	case key.Matches(msg, k.Refresh):
		return a.toActive(common.RefreshMsg{Forced: true})
	}
	return a.toActive(msg)
}

func (a *App) quit() tea.Cmd {
	a.quitting = true
	for _, p := range a.stack {
		p.Close()
	}
	return tea.Quit
}

// refreshActive asks the screen on top to read again. Only a screen that asks the cluster
// something (a command) waits for an answer: one with nothing to read again (a finished
// discard) shows what it shows, and is never said to be old.
func (a *App) refreshActive(msg common.RefreshMsg) tea.Cmd {
	cmd := a.toActive(msg)
	if cmd != nil {
		a.asked()
	}
	return cmd
}

// asked notes that the screen on top is asked to refresh, unless an earlier ask is still
// unanswered.
func (a *App) asked() {
	if _, unanswered := a.askedAt[a.active()]; !unanswered {
		a.askedAt[a.active()] = a.c.Clock.Now()
	}
}

// staleSince is when what the screen on top shows was read, when a refresh has gone
// unanswered for a whole period since; ok is false while the broker answers.
func (a *App) staleSince() (at time.Time, ok bool) {
	at, fresh := a.freshAt[a.active()]
	asked, unanswered := a.askedAt[a.active()]
	if !fresh || !unanswered || a.refresh <= 0 {
		return time.Time{}, false
	}
	return at, a.c.Clock.Now().Sub(asked) >= a.refresh
}

func (a *App) toActive(msg tea.Msg) tea.Cmd {
	i := len(a.stack) - 1
	p, cmd := a.stack[i].Update(msg)
	a.stack[i] = p
	return owned(p, cmd)
}

// toAll hands a data message to every page on the stack: an answer may arrive after its page
// was covered by another, and each page ignores what is not its own.
func (a *App) toAll(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for i := range a.stack {
		p, cmd := a.stack[i].Update(msg)
		a.stack[i] = p
		cmds = append(cmds, owned(p, cmd))
	}
	return tea.Batch(cmds...)
}

func (a *App) push(m common.NavigateMsg) tea.Cmd {
	// Screens that change data do not open when the TUI is read-only, however they are asked
	// for (a key, the palette); the replay screen does, for its preview (the exact count of
	// what a replay or discard would take), and refuses the act.
	switch m.Page {
	case common.PageProduce:
		if refuse := a.c.Refuse("producing"); refuse != nil {
			return refuse
		}
	case common.PageResend:
		if refuse := a.c.Refuse("resend"); refuse != nil {
			return refuse
		}
	}
	// A screen already on the stack is returned to rather than opened again, so that the
	// way back does not grow with every hop between the same screens.
	key := navKey(m)
	for i, q := range a.stack {
		if key != "" && a.opened[q] == key {
			for len(a.stack) > i+1 {
				a.pop()
			}
			a.clearStatus()
			return a.toActive(common.RefreshMsg{Forced: true})
		}
	}
	p := newPage(a.c, m)
	if p == nil {
		return nil
	}
	return a.pushPage(p, key)
}

// pushPage puts p on top of the stack, opened on key (navKey), and starts it.
func (a *App) pushPage(p common.Page, key string) tea.Cmd {
	a.opened[p] = key
	p.SetSize(a.c.Width, a.pageHeight())
	a.stack = append(a.stack, p)
	a.clearStatus()
	return owned(p, p.Init())
}

// navKey names the screen m opens, for the screens returned to rather than opened twice:
// those that show a topic (or a DLQ, a flow, a subscription's backlog or a tail). A screen
// opened on a position or a selection, and those that act, are always new. "" for those.
func navKey(m common.NavigateMsg) string {
	switch m.Page {
	case common.PageTopic, common.PageDLQ, common.PageFlow, common.PageMessages:
	default:
		return ""
	}
	if m.Extra != nil || m.Filter != "" {
		return ""
	}
	t := m.Topic
	if t != "" {
		t = data.ParseTopic(t).String()
	}
	return string(m.Page) + " " + t + " " + m.Sub
}

func (a *App) pop() {
	if len(a.stack) == 1 {
		return
	}
	a.active().Close()
	delete(a.freshAt, a.active())
	delete(a.askedAt, a.active())
	delete(a.opened, a.active())
	if w, ok := a.active().(*waiting.Page); ok {
		delete(a.pending, w)
	}
	a.stack = a.stack[:len(a.stack)-1]
}

// popToRoot closes every page above the topics screen.
func (a *App) popToRoot() {
	for len(a.stack) > 1 {
		a.pop()
	}
}

// Render is the whole screen as a string: the view's content, used by golden tests.
func (a *App) Render() string { return a.render(true) }

// render draws the screen; without status, the status line is left out (to tell whether a
// key changed anything else).
func (a *App) render(status bool) string {
	w, h := a.c.Width, a.c.Height
	var b strings.Builder
	b.WriteString(a.header())
	b.WriteByte('\n')
	body := a.active().View()
	if a.helpOpen {
		body = a.help.View()
	}
	var sl []string
	if status {
		// What the status line says may quote the cluster or a letter (a name, an error): its
		// control characters are written escaped (statusView).
		sl = a.statusView(w)
	}
	b.WriteString(common.Lines(body, w, max(1, a.pageHeight()-max(0, len(sl)-1))))
	b.WriteByte('\n')
	if status {
		b.WriteString(strings.Join(sl, "\n"))
		b.WriteByte('\n')
	}
	if a.paletteOpen {
		b.WriteString(a.palette.View())
	} else {
		page, global := a.footerKeys()
		helpKey := "?"
		if a.active().Capturing() {
			helpKey = helpWhileTyping
		}
		b.WriteString(footer.View(a.c, page, global, helpKey, w))
	}
	out := b.String()
	if h < 4 {
		return common.Lines(out, w, h)
	}
	return out
}

func (a *App) View() tea.View {
	// The theme's background and text colours go to the terminal as the view's default colours
	// rather than through a style over the whole frame, which would cost a re-layout of every
	// line on each frame.
	v := tea.NewView(a.Render())
	if p := a.c.Styles.Theme.Palette; p.Background != "" {
		v.BackgroundColor = themes.Color(p.Background)
	}
	if p := a.c.Styles.Theme.Palette; p.Text != "" {
		v.ForegroundColor = themes.Color(p.Text)
	}
	if a.quitting {
		v = tea.NewView("")
	}
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "letterbox · " + a.active().Title()
	return v
}

// helpWhileTyping is the key that opens the help while letters type into a field (? types a ?).
const helpWhileTyping = "f1"

// openHelp opens the help overlay on the active screen's keys.
func (a *App) openHelp() {
	a.helpOpen = true
	a.help.Open("Help · "+a.active().Title(), a.helpSections())
}

// footerKeys are the page's keys and the global ones for the footer.
func (a *App) footerKeys() (page, global []key.Binding) {
	k := a.c.Keys
	if a.helpOpen {
		if a.help.Typing() {
			return []key.Binding{withDesc(k.Enter, "keep the search"), withDesc(k.Back, "clear it")}, nil
		}
		return []key.Binding{key.NewBinding(key.WithKeys("j", "k"), key.WithHelp("j/k", "scroll")), withDesc(k.Filter, "search"),
			withDesc(k.Back, "close help")}, nil
	}
	if a.question != nil {
		return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes")), key.NewBinding(key.WithKeys("n"), key.WithHelp("n/esc", "no"))}, nil
	}
	page = a.active().ShortHelp()
	if a.active().Capturing() {
		return page, []key.Binding{key.NewBinding(key.WithKeys(helpWhileTyping), key.WithHelp(helpWhileTyping, "help"))}
	}
	if len(a.stack) > 1 {
		global = append(global, k.Back)
	}
	return page, append(global, k.Palette, k.Help, k.Quit)
}

// helpSections are the active screen's keys, then those that work on every screen: while
// letters type into a field, only the keys that are no letter.
func (a *App) helpSections() []common.HelpSection {
	k := a.c.Keys
	secs := a.active().FullHelp()
	if a.active().Capturing() {
		if !slices.ContainsFunc(secs, func(s common.HelpSection) bool { return s.Title == input.EditingHelp(false).Title }) {
			secs = append(secs, input.EditingHelp(false))
		}
		return append(secs, common.HelpSection{Title: "General", Keys: []key.Binding{
			key.NewBinding(key.WithKeys(helpWhileTyping), key.WithHelp(helpWhileTyping, "this help")), withDesc(k.ForceQuit, "quit at once")}})
	}
	return append(secs, common.HelpSection{Title: "General", Keys: []key.Binding{
		k.Palette, withDesc(k.Help, "this help"), withDesc(k.Refresh, "reload now"),
		withDesc(k.Quit, "quit (asks while others use the broker)"), withDesc(k.ForceQuit, "quit at once")}})
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
