// Package palette is the ":" command line (k9s's command mode): a prompt with completion over
// the known commands. It only collects the line; the app runs it.
package palette

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
)

// Outcome is what the last key did to the palette. The app reads it as soon as Update returns:
// a message carrying it instead would arrive after keys typed meanwhile, so that ":topics",
// enter and a quick ":" opened a palette the late message then closed, and what was typed next
// went to the screen as keys.
type Outcome int

const (
	Typing    Outcome = iota // still open
	Dismissed                // esc
	Entered                  // enter: Line is the command
)

// Command is one palette command, for completion and help.
type Command struct {
	Name string // "theme"
	Args string // "NAME"
	Desc string
}

// Model is the palette.
type Model struct {
	c           *common.Common
	in          input.Model
	cmds        []Command
	completions []string
	width       int
	outcome     Outcome
}

// Outcome is what the last key did, and on Entered the line entered (without the colon).
func (m Model) Outcome() (Outcome, string) {
	return m.outcome, strings.TrimSpace(m.in.Value())
}

// New returns a closed palette knowing cmds; extra are completions beyond the command names
// ("theme dark", "ns public/default").
func New(c *common.Common, cmds []Command) Model {
	return Model{c: c, in: input.New(c, ":", "command (tab completes, esc closes)"), cmds: cmds}
}

// Open focuses the palette with an empty line and the given completions.
func (m *Model) Open(completions []string) {
	m.outcome = Typing
	m.in.Restyle()
	m.in.SetValue("")
	m.SetCompletions(completions)
	m.in.Focus()
}

// SetCompletions replaces the whole lines tab completes, keeping what is typed.
func (m *Model) SetCompletions(completions []string) {
	m.completions = completions
	m.in.SetSuggestions(completions)
}

// SetValue types v, the cursor at its end.
func (m *Model) SetValue(v string) { m.in.SetValue(v) }

// Value is the line typed so far.
func (m Model) Value() string { return m.in.Value() }

func (m *Model) SetWidth(w int) { m.width = w; m.in.SetWidth(w - 2) }

// Update handles keys while the palette is open.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "tab":
			// Nothing completes what is typed, but a word comes close: tab takes it.
			if done, words := m.near(); len(words) > 0 {
				v := done + words[0]
				if done == "" {
					v += " " // a command: its arguments follow
				}
				m.in.SetValue(v)
				return m, nil
			}
		case "esc":
			m.in.Blur()
			m.outcome = Dismissed
			return m, nil
		case "enter":
			m.in.Blur()
			m.outcome = Entered
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.in, cmd = m.in.Update(msg)
	return m, cmd
}

// Hints are the commands matching what is typed so far, for the line above the prompt; once
// a command is typed, the names that complete its arguments.
func (m Model) Hints() string {
	v := m.in.Value()
	typed := strings.Fields(v)
	if args := m.argHints(v); args != "" {
		return args
	}
	if _, words := m.near(); len(words) > 0 {
		var parts []string
		for _, w := range words {
			parts = append(parts, m.c.Styles.Key.Render(w))
		}
		return common.Trunc(m.c.Styles.Subtle.Render("did you mean ")+strings.Join(parts, "  ")+
			m.c.Styles.Subtle.Render(" · tab takes the first"), m.width)
	}
	var parts []string
	for _, c := range m.cmds {
		if len(typed) > 0 && !strings.HasPrefix(c.Name, typed[0]) {
			continue
		}
		s := m.c.Styles.Key.Render(c.Name)
		if c.Args != "" {
			s += " " + m.c.Styles.Subtle.Render(c.Args)
		}
		parts = append(parts, s)
	}
	if len(parts) == 1 {
		for _, c := range m.cmds {
			if strings.HasPrefix(c.Name, typed[0]) {
				parts[0] += m.c.Styles.Subtle.Render(" · " + c.Desc)
			}
		}
	}
	return common.Trunc(strings.Join(parts, "  "), m.width)
}

func (m Model) View() string { return common.Pad(m.in.View(), m.width, false) }

// near is, when nothing completes the word being typed, the words within two edits of it that
// could stand at its place (a command, a topic, a subscription…), nearest first; done is what
// precedes the word.
func (m Model) near() (done string, words []string) {
	v := m.in.Value()
	if strings.TrimSpace(v) == "" || strings.HasSuffix(v, " ") {
		return "", nil
	}
	cur := v
	var candidates []string
	if i := strings.LastIndexByte(v, ' '); i >= 0 {
		done, cur = v[:i+1], v[i+1:]
		for _, c := range m.completions {
			if w, ok := strings.CutPrefix(c, done); ok && w != "" {
				w, _, _ = strings.Cut(w, " ")
				candidates = append(candidates, w)
			}
		}
	} else {
		for _, c := range m.cmds {
			candidates = append(candidates, c.Name)
		}
	}
	for _, c := range candidates {
		if strings.HasPrefix(c, cur) {
			return "", nil // it completes: tab does the usual
		}
	}
	return done, Nearest(cur, candidates)
}

// Nearest are the candidates nearest to typed, if within two edits (naming.Distance, ignoring
// case): those that tie, by name; none when typed is empty. ":dql" means :dlq, not :q.
func Nearest(typed string, candidates []string) []string {
	if typed == "" {
		return nil
	}
	best := 3
	var out []string
	for _, c := range candidates {
		d := naming.Distance(strings.ToLower(typed), strings.ToLower(c))
		switch {
		case d < best:
			best, out = d, []string{c}
		case d == best && !slices.Contains(out, c):
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// argHints lists the completions of what is typed past the command (the word being typed), or
// "" when none: "orders  orders-DLQ  orders-RETRY" after ":topic ord".
func (m Model) argHints(v string) string {
	i := strings.IndexByte(v, ' ')
	if i < 0 {
		return ""
	}
	// The words typed in full stay; the hint is the word being typed, completed.
	done := v[:strings.LastIndexByte(v, ' ')+1]
	var words []string
	seen := map[string]bool{}
	for _, c := range m.completions {
		if len(c) <= len(v) || !strings.HasPrefix(c, v) {
			continue
		}
		w, _, _ := strings.Cut(c[len(done):], " ")
		if w != "" && !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return ""
	}
	var parts []string
	for _, w := range words {
		parts = append(parts, m.c.Styles.Key.Render(w))
	}
	return common.Trunc(m.c.Styles.Subtle.Render("tab completes: ")+strings.Join(parts, "  "), m.width)
}
