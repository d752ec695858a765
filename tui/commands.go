package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/palette"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/pages/dlq"
	"github.com/letterbox-dev/letterbox/tui/pages/flow"
	"github.com/letterbox-dev/letterbox/tui/pages/messages"
	"github.com/letterbox-dev/letterbox/tui/pages/produce"
	"github.com/letterbox-dev/letterbox/tui/pages/replay"
	"github.com/letterbox-dev/letterbox/tui/pages/resend"
	"github.com/letterbox-dev/letterbox/tui/pages/topic"
	"github.com/letterbox-dev/letterbox/tui/pages/waiting"
)

// commands are the ":" palette's commands (k9s style).
var commands = []palette.Command{
	{Name: "topics", Desc: "the topics screen"},
	{Name: "ns", Args: "[TENANT/NS]", Desc: "show one namespace (none: all)"},
	{Name: "topic", Args: "NAME", Desc: "open a topic"},
	{Name: "peek", Args: "TOPIC SUB", Desc: "peek a subscription's backlog"},
	{Name: "tail", Args: "TOPIC", Desc: "follow a topic live"},
	{Name: "produce", Args: "TOPIC", Desc: "send a test message"},
	{Name: "theme", Args: "NAME", Desc: "switch colours"},
	{Name: "flow", Args: "[TOPIC [SUB]]", Desc: "retry → DLQ flow (none: every flow)"},
	{Name: "dlq", Args: "[DLQ [SUB]]", Desc: "dead letters (none: every DLQ)"},
	{Name: "replay", Args: "DLQ [SUB] [FILTER…]", Desc: "replay dead letters: preview, confirm, run"},
	{Name: "context", Args: "[NAME|-]", Desc: "switch cluster (none: list contexts; -: the start one)"},
	{Name: "help", Desc: "keys of this screen"},
	{Name: "q", Desc: "quit"},
}

// run executes one palette line. A command may be shortened to any prefix that names only it
// (:d is :dlq); topic names may be short (orders), resolved among the topics that exist.
func (a *App) run(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	status := a.say
	a.typed = line
	name, err := commandNamed(f[0])
	if err != nil {
		return status(err.Error(), true)
	}
	switch name {
	case "q":
		return a.askQuit()
	case "topics":
		a.popToRoot()
		return nil
	case "ns":
		a.popToRoot()
		ns := arg(1)
		if ns == "all" || ns == "-" {
			ns = ""
		}
		return a.root.SetNS(ns)
	case "topic":
		if arg(1) == "" {
			return status("usage: :topic NAME", true)
		}
		return a.resolve(arg(1), func(t string) tea.Cmd { return a.push(common.NavigateMsg{Page: common.PageTopic, Topic: t}) })
	case "peek":
		if arg(2) == "" {
			return status("usage: :peek TOPIC SUBSCRIPTION", true)
		}
		return a.resolve(arg(1), func(t string) tea.Cmd {
			return a.push(common.NavigateMsg{Page: common.PageMessages, Topic: t, Sub: arg(2)})
		})
	case "tail":
		if arg(1) == "" {
			return status("usage: :tail TOPIC", true)
		}
		return a.resolve(arg(1), func(t string) tea.Cmd { return a.push(common.NavigateMsg{Page: common.PageMessages, Topic: t}) })
	case "produce":
		if arg(1) == "" {
			return status("usage: :produce TOPIC", true)
		}
		if refuse := a.c.Refuse("producing"); refuse != nil {
			return refuse
		}
		return a.resolveOr(arg(1), func(t string) tea.Cmd { return a.push(common.NavigateMsg{Page: common.PageProduce, Topic: t}) },
			func(missing string) tea.Cmd {
				// Producing creates a topic that does not exist (auto-creation): only when asked.
				full := data.ParseTopic(missing).String()
				a.ask("There is no topic "+naming.ShortName(full, "")+": produce to it, creating it? y yes · n no", func() tea.Cmd {
					return a.push(common.NavigateMsg{Page: common.PageProduce, Topic: full})
				})
				return nil
			})
	case "theme":
		if arg(1) == "" {
			return status("themes: "+strings.Join(themes.Names(a.c.UserThemes), ", "), false)
		}
		t, ok := themes.Find(arg(1), a.c.UserThemes)
		if !ok {
			return status(fmt.Sprintf("no theme %q; themes: %s", arg(1), strings.Join(themes.Names(a.c.UserThemes), ", ")), true)
		}
		a.c.SetTheme(t)
		return status("theme "+t.Name, false)
	case "flow", "dlq":
		page := common.PageID(name)
		if arg(1) == "" {
			return a.push(common.NavigateMsg{Page: page})
		}
		return a.resolve(arg(1), func(t string) tea.Cmd { return a.push(common.NavigateMsg{Page: page, Topic: t, Sub: arg(2)}) })
	case "replay":
		if arg(1) == "" {
			return status("usage: :replay DLQ [SUBSCRIPTION] [FILTER…] (or R on the dead letters screen)", true)
		}
		return a.replayCommand(f[1:]) // a read-only session previews; the screen refuses the run
	case "context":
		return a.contextCommand(f[1:])
	case "help":
		a.openHelp()
		return nil
	}
	return status(fmt.Sprintf("unknown command %q (:help lists the commands)", f[0]), true)
}

// aliases are other names of commands.
var aliases = map[string]string{"t": "topics", "namespace": "ns", "open": "topic", "ctx": "context", "?": "help",
	"q!": "q", "quit": "q", "exit": "q"}

// commandNamed is the command a typed word names: itself, an alias, or the one command it
// is a prefix of.
func commandNamed(word string) (string, error) {
	w := strings.ToLower(word)
	if a, ok := aliases[w]; ok {
		return a, nil
	}
	var match []string
	for _, c := range commands {
		if c.Name == w {
			return w, nil
		}
		if strings.HasPrefix(c.Name, w) {
			match = append(match, c.Name)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		var names []string
		for _, c := range commands {
			names = append(names, c.Name)
		}
		if near := palette.Nearest(w, names); len(near) > 0 {
			return "", fmt.Errorf("unknown command %q: did you mean :%s? (:help lists the commands)", word, strings.Join(near, ", :"))
		}
		return "", fmt.Errorf("unknown command %q (:help lists the commands)", word)
	}
	return "", fmt.Errorf("%q could be :%s", word, strings.Join(match, ", :"))
}

// resolvedMsg carries a topic name resolved for a palette command, and what to do with it.
type resolvedMsg struct {
	topic string
	then  func(string) tea.Cmd
}

// waitMsg says a palette command's topic could not be resolved because the cluster does not
// answer: the command's waiting screen opens, and opens the command's own once it does.
type waitMsg struct {
	line, name string
	err        error
	open       pendingOpen
}

// pendingOpen is what a waiting screen's command does once its name is resolved: then with the
// topic, or missing (when set) with a name that matches no topic.
type pendingOpen struct {
	then, missing func(string) tea.Cmd
}

// resolve finds the topic name means among the existing ones, then does then with it; a name
// that matches none or several says so, with the candidates, and opens nothing.
func (a *App) resolve(name string, then func(string) tea.Cmd) tea.Cmd {
	return a.resolveOr(name, then, nil)
}

// resolveOr is resolve with missing, when set, called for a name that matches no topic.
// A cluster that does not answer opens the command's waiting screen (pages/waiting), which
// resolves the name when it does.
func (a *App) resolveOr(name string, then func(string) tea.Cmd, missing func(string) tea.Cmd) tea.Cmd {
	line := a.typed
	return common.Load(a.c, "topic "+name, func(ctx context.Context, s data.Source) (tea.Msg, error) {
		t, err := data.Resolve(ctx, s, name)
		var ne *naming.NameError
		switch {
		case errors.As(err, &ne) && !ne.Ambiguous && missing != nil:
			return resolvedMsg{topic: name, then: missing}, nil
		case err != nil && common.ProblemOf(err) == common.ProblemUnreachable:
			return waitMsg{line: line, name: name, err: err, open: pendingOpen{then: then, missing: missing}}, nil
		case err != nil:
			return nil, err
		}
		return resolvedMsg{topic: t, then: then}, nil
	}, func(m tea.Msg) tea.Msg { return m })
}

// waitFor opens the waiting screen of a command whose name the cluster could not resolve.
func (a *App) waitFor(m waitMsg) tea.Cmd {
	a.conn = connDown
	p := waiting.New(a.c, m.line, m.name, m.err)
	a.pending[p] = m.open
	cmd := a.pushPage(p, "")
	return tea.Batch(cmd, a.say("the cluster does not answer: :"+m.line+" opens once it does", false))
}

// waited opens, in place of its waiting screen, the screen of the command it waited for.
func (a *App) waited(m waiting.ResolvedMsg) tea.Cmd {
	open, ok := a.pending[m.Page]
	if !ok || m.Page != a.active() {
		return nil
	}
	var ne *naming.NameError
	switch {
	case errors.As(m.Err, &ne) && !ne.Ambiguous && open.missing != nil:
		a.pop()
		return open.missing(m.Page.Name())
	case m.Err != nil:
		return a.toActive(m) // the screen says so
	}
	a.pop()
	return open.then(m.Topic)
}

// replayCommand is :replay DLQ [SUBSCRIPTION] [FILTER…]: without a subscription (the second
// word is an expression, or missing), the DLQ's only subscription.
func (a *App) replayCommand(args []string) tea.Cmd {
	dlq, sub, filter := args[0], "", ""
	rest := args[1:]
	if len(rest) > 0 && !strings.ContainsAny(rest[0], "=~<>") {
		sub, rest = rest[0], rest[1:]
	}
	filter = strings.Join(rest, " ")
	return a.resolve(dlq, func(t string) tea.Cmd {
		return common.Load(a.c, "what "+naming.ShortName(t, "")+" is", func(ctx context.Context, s data.Source) (tea.Msg, error) {
			// As on the command line, a replay reads a dead-letter or retry topic only.
			if v, err := s.Verdict(ctx, t); err == nil && v.Kind == data.KindTopic {
				return nil, fmt.Errorf("replay: %s is not a dead-letter or retry topic by the DLQ rule (letterbox replay --not-a-dlq reads it from a shell)",
					naming.ShortName(t, ""))
			}
			return resolvedMsg{topic: t, then: func(t string) tea.Cmd { return a.replayOn(t, sub, filter) }}, nil
		}, func(m tea.Msg) tea.Msg { return m })
	})
}

// replayOn opens the replay screen on DLQ t through sub (none given: its only subscription).
func (a *App) replayOn(t, sub, filter string) tea.Cmd {
	open := func(sub string) tea.Cmd {
		req := data.ReplayRequest{DLQ: t, Subscription: sub}
		if filter != "" {
			req.Filters = []string{filter}
		}
		return a.push(common.NavigateMsg{Page: common.PageReplay, Topic: t, Sub: sub, Extra: req})
	}
	if sub != "" {
		return open(sub)
	}
	return common.Load(a.c, "subscriptions of "+naming.ShortName(t, ""), func(ctx context.Context, s data.Source) (tea.Msg, error) {
		d, err := s.TopicDetail(ctx, t)
		if err != nil {
			return nil, err
		}
		// The subscription a replay reads through is chosen as on the command line: the only
		// durable one (a reader's non-durable subscription is none to act through).
		var durable []string
		for _, s := range d.Subscriptions {
			if !s.NonDurable {
				durable = append(durable, s.Name)
			}
		}
		sub, err := dlqops.ChooseSubscription(t, durable, "")
		switch {
		case err == nil:
			return resolvedMsg{topic: sub, then: open}, nil
		case len(durable) == 0:
			return nil, fmt.Errorf("%s has no subscription to replay through (A on its dead letters adds one)", naming.ShortName(t, ""))
		}
		return nil, fmt.Errorf("%s has %d subscriptions: :replay %s SUBSCRIPTION (%s)", naming.ShortName(t, ""), len(durable),
			naming.ShortName(t, ""), strings.Join(durable, ", "))
	}, func(m tea.Msg) tea.Msg { return m })
}

// newPage builds the page a NavigateMsg asks for.
func newPage(c *common.Common, m common.NavigateMsg) common.Page {
	switch m.Page {
	case common.PageTopic:
		return topic.New(c, m.Topic)
	case common.PageMessages:
		if from, ok := m.Extra.(data.From); ok {
			p := messages.NewAt(c, m.Topic, from)
			p.SetFilter(m.Filter)
			return p
		}
		return messages.New(c, m.Topic, m.Sub)
	case common.PageProduce:
		return produce.New(c, m.Topic)
	case common.PageFlow:
		return flow.New(c, m.Topic, m.Sub)
	case common.PageDLQ:
		return dlq.New(c, m.Topic, m.Sub)
	case common.PageResend:
		d, _ := m.Extra.(data.DeadLetter)
		return resend.New(c, m.Topic, m.Sub, d)
	case common.PageReplay:
		req, _ := m.Extra.(data.ReplayRequest)
		if req.DLQ == "" {
			req.DLQ, req.Subscription = m.Topic, m.Sub
		}
		return replay.New(c, req)
	}
	return nil
}
