package tui

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/pages/replay"
	"github.com/letterbox-dev/letterbox/tui/pages/topics"
)

// Context is a named cluster, as the configuration file's contexts: what the header shows and
// what ":context NAME" switches to. The TUI never sees its URLs or credentials; Contexts.Open
// turns a name into a data source.
type Context struct {
	Name string
	// Colour is the header's colour for the context, a theme palette value ("#rrggbb" or an
	// ANSI index such as "1" for the terminal's red); "" takes the theme's primary colour.
	Colour string
	// Theme is the theme to use on this context ("" keeps the one letterbox started with).
	// It is ignored when --theme or NO_COLOR chose the theme.
	Theme string
	// ReadOnly turns every action off while the TUI is on this context.
	ReadOnly bool
}

// Contexts configure the header's context badge and ":context".
type Contexts struct {
	// Current is the context the TUI starts on; zero when letterbox started without one (the
	// header then shows no badge).
	Current Context
	// List is every context the user may switch to, in the configuration file's order.
	List []Context
	// Open creates the data source of the context called name ("" is the cluster the TUI
	// started on, for ":context -"). It runs inside a tea.Cmd, so it may read files; it need
	// not connect: the TUI checks that the new cluster answers before it leaves the old one.
	// nil turns ":context" off.
	Open func(ctx context.Context, name string) (data.Source, error)
	// Problem says why there are no contexts to list when the configuration file could not be
	// read ("" when it could).
	Problem string
}

// contextState is the app's part for contexts.
type contextState struct {
	opts  Contexts
	cur   Context
	start Context
	// gen counts switches. While contexts can be switched, every page message is tagged with
	// the gen its command was made in, and a message of an earlier gen is dropped: an answer
	// of the old cluster must never show under the new one's name.
	gen int
	// seq numbers switch requests; only the latest one's answer is taken.
	seq int
	// base is the theme of the start; themeFree is false when --theme or NO_COLOR chose it,
	// so contexts leave it alone.
	base      themes.Theme
	themeFree bool
}

// contextOpenedMsg is a switch's answer: the new source, checked, or why not.
type contextOpenedMsg struct {
	seq int
	ctx Context
	src data.Source
	err error
}

// genMsg is a page message tagged with the gen of the command that made it.
type genMsg struct {
	gen int
	msg tea.Msg
}

// setContexts installs opts; themeFree says the start theme was not chosen by the user, so
// the contexts' own themes apply.
func (a *App) setContexts(opts Contexts, themeFree bool) error {
	s := &a.ctxs
	s.opts, s.cur, s.start, s.themeFree = opts, opts.Current, opts.Current, themeFree
	s.base = a.c.Styles.Theme
	if t := opts.Current.Theme; t != "" && themeFree {
		th, ok := themes.Find(t, a.c.UserThemes)
		if !ok {
			return fmt.Errorf("context %s: unknown theme %q (themes: %s)", opts.Current.Name, t, strings.Join(themes.Names(a.c.UserThemes), ", "))
		}
		a.c.SetTheme(th)
	}
	return nil
}

var (
	commonPkg = reflect.TypeFor[common.ErrorMsg]().PkgPath()
	pagesPkg  = strings.TrimSuffix(commonPkg, "common") + "pages/"
)

// fromPage reports whether msg is a page's (or a data answer's) message, which belongs to the
// cluster its command was made for.
func fromPage(msg tea.Msg) bool {
	t := reflect.TypeOf(msg)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return false
	}
	p := t.PkgPath()
	return p == commonPkg || strings.HasPrefix(p, pagesPkg)
}

// tag makes cmd's page messages carry the current gen (only when contexts can switch: without
// them nothing changes).
func (s *contextState) tag(cmd tea.Cmd) tea.Cmd {
	if cmd == nil || s.opts.Open == nil {
		return cmd
	}
	return tagged(s.gen, cmd)
}

func tagged(gen int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		switch m := cmd().(type) {
		case nil:
			return nil
		case tea.BatchMsg:
			out := make(tea.BatchMsg, len(m))
			for i, c := range m {
				out[i] = tagged(gen, c)
			}
			return out
		default:
			if _, ok := m.(ownedMsg); ok || fromPage(m) {
				return genMsg{gen: gen, msg: m}
			}
			return m
		}
	}
}

// untag unwraps a tagged message; ok is false for one made before the last switch.
func (s *contextState) untag(msg tea.Msg) (tea.Msg, bool) {
	g, isTagged := msg.(genMsg)
	if !isTagged {
		return msg, true
	}
	return g.msg, g.gen == s.gen
}

// contextCommand runs ":context [NAME]": no name lists the contexts, "-" goes back to the
// cluster the TUI started on, a name switches to it.
func (a *App) contextCommand(args []string) tea.Cmd {
	s := &a.ctxs
	status := a.say
	if s.opts.Open == nil || (len(s.opts.List) == 0 && (len(args) == 0 || args[0] != "-")) {
		if s.opts.Problem != "" {
			return status("contexts: "+s.opts.Problem, true)
		}
		return status("no contexts: add [[context]] tables to $XDG_CONFIG_HOME/letterbox/config.toml", len(args) > 0)
	}
	if len(args) == 0 {
		var names []string
		for _, c := range s.opts.List {
			n := c.Name
			if n == s.cur.Name {
				n += " (current)"
			}
			names = append(names, n)
		}
		return status("contexts: "+strings.Join(names, ", ")+" · :context NAME switches", false)
	}
	var target Context
	if args[0] == "-" {
		target = s.start
	} else {
		found := false
		for _, c := range s.opts.List {
			if c.Name == args[0] {
				target, found = c, true
				break
			}
		}
		if !found {
			return status(fmt.Sprintf("no context %q (contexts: %s)", args[0], strings.Join(contextNames(s.opts.List), ", ")), true)
		}
	}
	for _, p := range a.stack {
		if r, ok := p.(*replay.Page); ok && r.Busy() {
			return status("a replay is running: let it finish or cancel it before switching context", true)
		}
	}
	s.seq++
	seq, open, ctx, timeout := s.seq, s.opts.Open, a.c.Ctx, a.c.Timeout
	a.say("switching to "+contextLabel(target)+"…", false)
	return func() tea.Msg {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		src, err := open(cctx, target.Name)
		if err == nil {
			// Leave the old cluster only for one that answers.
			if _, err = src.Namespaces(cctx); err != nil {
				closeSource(src)
				src = nil
			}
		}
		return contextOpenedMsg{seq: seq, ctx: target, src: src, err: err}
	}
}

// contextOpened takes a switch's answer: on success the new source replaces the old one (which
// is closed), every screen is dropped for a fresh topics screen, and the header turns to the
// new context.
func (a *App) contextOpened(msg contextOpenedMsg) tea.Cmd {
	s := &a.ctxs
	if msg.seq != s.seq { // a later :context superseded this one
		return closeCmd(msg.src)
	}
	if msg.err != nil {
		return a.say(fmt.Sprintf("context %s: %v (still on %s)", contextLabel(msg.ctx), msg.err, contextLabel(s.cur)), true)
	}
	old := a.c.Source
	a.c.Source = msg.src
	s.cur = msg.ctx
	s.gen++
	a.c.ReadOnly = a.readOnlyFlag // --readonly holds for the whole session
	if a.c.ReadOnly == "" && msg.ctx.ReadOnly {
		a.c.ReadOnly = "read-only (context " + msg.ctx.Name + ")"
	}
	if s.themeFree {
		th := s.base
		if msg.ctx.Theme != "" {
			if t, ok := themes.Find(msg.ctx.Theme, a.c.UserThemes); ok {
				th = t
			}
		}
		a.c.SetTheme(th)
	}
	for _, p := range a.stack {
		p.Close()
	}
	a.root = topics.New(a.c, "")
	a.stack = []common.Page{a.root}
	clear(a.pending)
	a.helpOpen = false
	a.conn = connUnknown
	a.resize()
	a.say("context "+contextLabel(msg.ctx)+" · "+msg.src.Endpoint(), false)
	return tea.Batch(closeCmd(old), owned(a.root, a.root.Init()))
}

// closeSources closes the source in use when the TUI ends, if the TUI opened it (the caller
// closes the one it gave).
func (a *App) closeSources(initial data.Source) {
	if a.c.Source != initial {
		closeSource(a.c.Source)
	}
}

// contextCompletions are the palette's completions for ":context".
func (a *App) contextCompletions() []string {
	s := &a.ctxs
	if s.opts.Open == nil {
		return nil
	}
	var out []string
	for _, c := range s.opts.List {
		out = append(out, "context "+c.Name)
	}
	if s.cur != s.start {
		out = append(out, "context -")
	}
	return out
}

// contextBadge is the header's " NAME " in the context's colour, reversed (ktea's per-cluster
// colour: prod in red stands out), or "" without a named context.
func (a *App) contextBadge() string {
	name := a.ctxs.cur.Name
	if name == "" {
		return ""
	}
	st := lipgloss.NewStyle().Bold(true).Reverse(true)
	if p := a.c.Styles.Theme.Palette; p != (themes.Palette{}) { // no-color: reverse video alone
		colour := a.ctxs.cur.Colour
		if colour == "" {
			colour = p.Primary
		}
		st = st.Foreground(themes.Color(colour))
	}
	return st.Render(" " + name + " ")
}

func contextNames(cs []Context) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func contextLabel(c Context) string {
	if c.Name == "" {
		return "the start cluster"
	}
	return c.Name
}

// closeSource closes src when it holds something (data.Admin's binary connection).
func closeSource(src data.Source) {
	switch c := src.(type) {
	case interface{ Close() }:
		c.Close()
	case io.Closer:
		c.Close()
	}
}

func closeCmd(src data.Source) tea.Cmd {
	if src == nil {
		return nil
	}
	return func() tea.Msg { closeSource(src); return nil }
}
