package topics

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
)

type (
	contextT = context.Context
	lipStyle = lipgloss.Style
)

func itoa(i int) string { return strconv.Itoa(i) }

// nsItems are the namespace list's entries: "" (all), then each namespace.
func (p *Page) nsItems() []string { return append([]string{""}, p.namespaces...) }

func (p *Page) updateNamespaces(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	items := p.nsItems()
	switch {
	case key.Matches(msg, k.NextPane), key.Matches(msg, k.Back):
		p.nsFocus = false
		p.tbl.Focus(true)
	case key.Matches(msg, k.Up):
		p.nsCursor = max(0, p.nsCursor-1)
	case key.Matches(msg, k.Down):
		p.nsCursor = min(len(items)-1, p.nsCursor+1)
	case key.Matches(msg, k.Top):
		p.nsCursor = 0
	case key.Matches(msg, k.Bottom):
		p.nsCursor = len(items) - 1
	case key.Matches(msg, k.Enter):
		p.nsFocus = false
		p.tbl.Focus(true)
		return p.SetNS(items[p.nsCursor])
	}
	return nil
}

func (p *Page) View() string {
	st := p.c.Styles
	// Title line: what is shown, how it is sorted, the filter.
	count := p.count
	where := "all namespaces"
	if p.ns != "" {
		where = p.ns
	}
	dir := "↑"
	if p.desc {
		dir = "↓"
	}
	title := st.Title.Render("Topics") + st.Subtle.Render(fmt.Sprintf(" · %s · %s · by %s %s", where, common.Plural(count, "topic"), sortNames[p.sortBy], dir))
	switch {
	case p.filtering:
		title += "  " + p.filter.View()
	case p.filter.Value() != "":
		title += "  " + st.Accent.Render("/"+p.filter.Value())
	}
	if p.loading && p.rows == nil {
		title += st.Subtle.Render("  loading…")
	}
	title = common.Pad(title, p.w, false)

	body := p.tbl.View()
	if !p.loadedAt.IsZero() && len(p.shown) == 0 {
		lines := []string{st.Subtle.Render("  no topics in " + where)}
		if p.filter.Value() != "" {
			lines = []string{st.Subtle.Render("  no topic matches /" + p.filter.Value() + " (esc clears the filter)")}
		} else {
			lines = append(lines, p.gettingStarted()...)
		}
		header, _, _ := strings.Cut(p.tbl.View(), "\n") // the column titles; no rows to show
		body = common.Lines(header+"\n"+strings.Join(lines, "\n"), p.tbl.Width(), p.h-1)
	}
	switch {
	case p.w >= sidebarMin:
		body = lipgloss.JoinHorizontal(lipgloss.Top, p.sidebar(sidebarWidth, p.h-1), " ", body)
	case p.nsFocus:
		body = p.sidebar(p.w, p.h-1)
	}
	return title + "\n" + body // the app fits it to the page area
}

// sidebar is the namespace list: tenants as headings, their namespaces beneath.
func (p *Page) sidebar(w, h int) string {
	st := p.c.Styles
	var lines []string
	head := st.ColHeader
	if p.nsFocus {
		head = st.Title
	}
	lines = append(lines, head.Render(common.Pad("NAMESPACES", w, false)))
	tenant := ""
	for i, ns := range p.nsItems() {
		label := "all"
		if ns != "" {
			t, n, _ := strings.Cut(ns, "/")
			if t != tenant {
				lines = append(lines, st.Subtle.Render(common.Pad(" "+t+"/", w, false)))
				tenant = t
			}
			label = "  " + n
		}
		label = " " + label
		if ns == p.ns {
			label = common.Pad(label, w-2, false) + " ●"
		}
		s := st.Text
		if i == p.nsCursor && p.nsFocus {
			s = st.Selected
		} else if ns == p.ns {
			s = st.Accent
		}
		lines = append(lines, s.Render(common.Pad(label, w, false)))
	}
	return common.Lines(strings.Join(lines, "\n"), w, h)
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.filtering {
		return []key.Binding{withDesc(k.Enter, "keep filter"), withDesc(k.Back, "clear")}
	}
	if p.nsFocus {
		return []key.Binding{withDesc(k.Enter, "show namespace"), withDesc(k.NextPane, "back to topics")}
	}
	return []key.Binding{withDesc(k.Enter, "open"), k.Filter, k.Sort, k.Expand, k.Tail, k.Produce, withDesc(k.NextPane, "namespaces")}
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	return []common.HelpSection{{Title: "Topics", Keys: []key.Binding{
		withDesc(k.Enter, "open the topic, or show the namespace"), withDesc(k.Filter, "filter by name (fuzzy)"),
		withDesc(k.Sort, "sort by the next column"), withDesc(k.SortReverse, "reverse the sort"),
		withDesc(k.Expand, "partitions: unfold or fold"), withDesc(k.Right, "unfold partitions"), withDesc(k.Left, "fold partitions"),
		withDesc(k.NextPane, "namespace list (and back)"), withDesc(k.Tail, "tail the topic"),
		withDesc(k.Produce, "produce to the topic"), withDesc(k.Back, "clear the filter, then all namespaces")}},
		common.NavigationHelp(k)}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// Namespaces are the namespaces last loaded (for the palette's completion).
func (p *Page) Namespaces() []string { return p.namespaces }

// gettingStarted is what an empty cluster's screen says: how to get data in.
func (p *Page) gettingStarted() []string {
	st := p.c.Styles
	w := max(10, p.tbl.Width())
	line := func(s string) string { return common.Trunc(s, w) }
	out := []string{"", st.Paint(&st.Title, line("  Nothing here yet. To get messages in:"))}
	if svc := p.c.Source.Service(); svc != "" {
		out = append(out, st.Paint(&st.Text, line("    · point your applications at "+svc)))
	}
	out = append(out,
		st.Paint(&st.Text, line("    · p produces a test message to a topic you name")),
		st.Paint(&st.Text, line("    · letterbox demo runs a tour: live retries, dead letters and replays")),
		st.Paint(&st.Subtle, line("  Topics appear here as they are created; : opens the command line, ? the keys.")))
	return out
}
