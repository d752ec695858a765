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
	topics  []topicName
	subs    map[string][]string // by full topic name
	reading map[string]bool     // subscriptions being read
}

// topicName is what the palette keeps of a topic: the listing's rows of a large cluster, held
// for the session, would be a second listing of them.
type topicName struct {
	name      string
	kind      data.Kind
	partition bool
}

// namesMsg carries every topic of the cluster, for completion.
type namesMsg struct{ topics []topicName }

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
		topics := make([]topicName, len(rows))
		for i, r := range rows {
			topics[i] = topicName{name: r.Name, kind: r.Kind, partition: r.Parent != ""}
		}
		return namesMsg{topics: topics}
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
		a.names.topics = msg.topics
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
	for _, t := range a.names.topics {
		if t.name == name || data.ParseTopic(t.name).NamespaceName()+"/"+data.ParseTopic(t.name).Local == name ||
			strings.HasSuffix(t.name, "/"+name) {
			match = append(match, t.name)
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
	topics := a.names.topics
	if len(topics) == 0 && a.root != nil {
		if t := a.root.Selected(); t != "" {
			topics = []topicName{{name: t, kind: a.root.SelectedKind()}}
		}
	}
	short := shortestNames(topics)
	for _, t := range topics {
		if t.partition {
			continue // partitions are reached through their topic
		}
		n := short[t.name]
		out = append(out, "topic "+n, "tail "+n, "produce "+n, "flow "+n, "peek "+n)
		if t.kind == data.KindDLQ {
			out = append(out, "dlq "+n, "replay "+n)
		}
		for _, sub := range a.names.subs[t.name] {
			out = append(out, "peek "+n+" "+sub, "flow "+n+" "+sub)
			if t.kind == data.KindDLQ {
				out = append(out, "dlq "+n+" "+sub, "replay "+n+" "+sub)
			}
		}
	}
	return out
}

// shortestNames is, per topic, the shortest name that resolves to it alone: its local name
// when no other topic shares it, else tenant/namespace/local (non-persistent ones in full).
func shortestNames(topics []topicName) map[string]string {
	locals := map[string]int{}
	for _, t := range topics {
		locals[data.ParseTopic(t.name).Local]++
	}
	out := map[string]string{}
	for _, t := range topics {
		n := data.ParseTopic(t.name)
		switch {
		case !n.Persistent:
			out[t.name] = t.name
		case locals[n.Local] == 1:
			out[t.name] = n.Local
		default:
			out[t.name] = n.NamespaceName() + "/" + n.Local
		}
	}
	return out
}
