package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

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

// completions are whole lines the palette completes with tab.
func (a *App) completions() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.Name)
	}
	for _, t := range themes.Names(a.c.UserThemes) {
		out = append(out, "theme "+t)
	}
	out = append(out, a.contextCompletions()...)
	if a.root != nil {
		for _, ns := range a.root.Namespaces() {
			out = append(out, "ns "+ns)
		}
		if t := a.root.Selected(); t != "" {
			short := data.ShortName(t, "")
			out = append(out, "topic "+short, "tail "+short, "produce "+short, "flow "+short)
			if a.root.SelectedKind() == data.KindDLQ {
				out = append(out, "dlq "+short, "replay "+short)
			}
		}
	}
	return out
}

// run executes one palette line.
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
	status := func(s string, err bool) tea.Cmd { a.status, a.statusErr = s, err; return nil }
	switch strings.ToLower(f[0]) {
	case "q", "q!", "quit", "exit":
		return a.quit()
	case "topics", "t":
		a.popToRoot()
		return nil
	case "ns", "namespace":
		a.popToRoot()
		ns := arg(1)
		if ns == "all" || ns == "-" {
			ns = ""
		}
		return a.root.SetNS(ns)
	case "topic", "open":
		if arg(1) == "" {
			return status("usage: :topic NAME", true)
		}
		return a.push(common.NavigateMsg{Page: common.PageTopic, Topic: data.ParseTopic(arg(1)).String()})
	case "peek":
		if arg(2) == "" {
			return status("usage: :peek TOPIC SUBSCRIPTION", true)
		}
		return a.push(common.NavigateMsg{Page: common.PageMessages, Topic: data.ParseTopic(arg(1)).String(), Sub: arg(2)})
	case "tail":
		if arg(1) == "" {
			return status("usage: :tail TOPIC", true)
		}
		return a.push(common.NavigateMsg{Page: common.PageMessages, Topic: data.ParseTopic(arg(1)).String()})
	case "produce":
		if arg(1) == "" {
			return status("usage: :produce TOPIC", true)
		}
		return a.push(common.NavigateMsg{Page: common.PageProduce, Topic: data.ParseTopic(arg(1)).String()})
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
		t := arg(1)
		if t != "" {
			t = data.ParseTopic(t).String()
		}
		return a.push(common.NavigateMsg{Page: common.PageID(strings.ToLower(f[0])), Topic: t, Sub: arg(2)})
	case "replay":
		if arg(1) == "" {
			return status("usage: :replay DLQ [SUBSCRIPTION] [FILTER…] (or R on the dead letters screen)", true)
		}
		req := data.ReplayRequest{DLQ: data.ParseTopic(arg(1)).String(), Subscription: arg(2)}
		if len(f) > 3 {
			req.Filters = f[3:]
		}
		return a.push(common.NavigateMsg{Page: common.PageReplay, Topic: req.DLQ, Sub: req.Subscription, Extra: req})
	case "context", "ctx":
		return a.contextCommand(f[1:])
	case "help", "?":
		a.helpOpen = true
		return nil
	}
	return status(fmt.Sprintf("unknown command %q (try :help)", f[0]), true)
}

// newPage builds the page a NavigateMsg asks for.
func newPage(c *common.Common, m common.NavigateMsg) common.Page {
	switch m.Page {
	case common.PageTopic:
		return topic.New(c, m.Topic)
	case common.PageMessages:
		if from, ok := m.Extra.(data.From); ok {
			return messages.NewAt(c, m.Topic, from)
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
