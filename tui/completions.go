package tui

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// names are the cluster's topics and subscriptions the palette completes, read when it opens
// (topics) and as a command's topic is typed (its subscriptions).
type names struct {
	topics  []data.TopicRow
	subs    map[string][]string // by full topic name
	reading map[string]bool     // subscriptions being read
}

// namesMsg carries every topic of the cluster, for completion.
type namesMsg struct{ rows []data.TopicRow }

// subsMsg carries a topic's subscriptions, for completion.
type subsMsg struct {
	topic string
	subs  []string
}

// openPalette opens the ":" line with what is known, and reads the cluster's topic names.
func (a *App) openPalette() tea.Cmd {
	a.paletteOpen = true
	a.palette.Open(a.completions())
	ctx, src, timeout := a.c.Ctx, a.c.Source, a.c.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		rows, err := src.Topics(ctx, "")
		if err != nil {
			return nil // completion is a convenience: a command typed in full still runs
		}
		return namesMsg{rows: rows}
	}
}

// paletteTyped reads the subscriptions of the topic a command names once its name is typed
// (":peek orders "), so that they complete.
func (a *App) paletteTyped() tea.Cmd {
	v := a.palette.Value()
	f := strings.Fields(v)
	if len(f) < 2 || (len(f) == 2 && !strings.HasSuffix(v, " ")) {
		return nil
	}
	switch cmd, _ := commandNamed(f[0]); cmd {
	case "peek", "dlq", "replay", "flow":
	default:
		return nil
	}
	t := a.topicNamed(f[1])
	if t == "" || a.names.reading[t] || a.names.subs[t] != nil {
		return nil
	}
	if a.names.reading == nil {
		a.names.reading = map[string]bool{}
	}
	a.names.reading[t] = true
	ctx, src, timeout := a.c.Ctx, a.c.Source, a.c.Timeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		d, err := src.TopicDetail(ctx, t)
		if err != nil {
			return subsMsg{topic: t}
		}
		var subs []string
		for _, s := range d.Subscriptions {
			subs = append(subs, s.Name)
		}
		return subsMsg{topic: t, subs: subs}
	}
}

// namesRead keeps what was read and completes with it, if the palette is still open.
func (a *App) namesRead(msg tea.Msg) {
	switch msg := msg.(type) {
	case namesMsg:
		a.names.topics = msg.rows
	case subsMsg:
		delete(a.names.reading, msg.topic)
		if a.names.subs == nil {
			a.names.subs = map[string][]string{}
		}
		a.names.subs[msg.topic] = append([]string{}, msg.subs...) // non-nil: read
	}
	if a.paletteOpen {
		a.palette.SetCompletions(a.completions())
	}
}

// topicNamed is the topic a typed name means among those read (a full name, or the one
// topic ending with it), "" when none or several.
func (a *App) topicNamed(name string) string {
	var match []string
	for _, r := range a.names.topics {
		if r.Name == name || data.ParseTopic(r.Name).NamespaceName()+"/"+data.ParseTopic(r.Name).Local == name ||
			strings.HasSuffix(r.Name, "/"+name) {
			match = append(match, r.Name)
		}
	}
	if len(match) != 1 {
		return ""
	}
	return match[0]
}

// completions are whole lines the palette completes with tab: commands, themes, contexts,
// namespaces, and every topic (the shortest name that says which) for the commands that take
// one, with the subscriptions read so far.
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
	}
	rows := a.names.topics
	if len(rows) == 0 && a.root != nil {
		if t := a.root.Selected(); t != "" {
			rows = []data.TopicRow{{Name: t, Verdict: data.Verdict{Kind: a.root.SelectedKind()}}}
		}
	}
	short := shortestNames(rows)
	for _, r := range rows {
		if r.Parent != "" {
			continue // partitions are reached through their topic
		}
		n := short[r.Name]
		out = append(out, "topic "+n, "tail "+n, "produce "+n, "flow "+n, "peek "+n)
		if r.Kind == data.KindDLQ {
			out = append(out, "dlq "+n, "replay "+n)
		}
		for _, sub := range a.names.subs[r.Name] {
			out = append(out, "peek "+n+" "+sub, "flow "+n+" "+sub)
			if r.Kind == data.KindDLQ {
				out = append(out, "dlq "+n+" "+sub, "replay "+n+" "+sub)
			}
		}
	}
	return out
}

// shortestNames is, per topic, the shortest name that resolves to it alone: its local name
// when no other topic shares it, else tenant/namespace/local (non-persistent ones in full).
func shortestNames(rows []data.TopicRow) map[string]string {
	locals := map[string]int{}
	for _, r := range rows {
		locals[data.ParseTopic(r.Name).Local]++
	}
	out := map[string]string{}
	for _, r := range rows {
		n := data.ParseTopic(r.Name)
		switch {
		case !n.Persistent:
			out[r.Name] = r.Name
		case locals[n.Local] == 1:
			out[r.Name] = n.Local
		default:
			out[r.Name] = n.NamespaceName() + "/" + n.Local
		}
	}
	return out
}
