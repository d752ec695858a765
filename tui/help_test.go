package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/keymap"
	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

// helpScreens are the screens whose help has a golden view: how to reach each (a palette line,
// then keys, with the cluster answering or not) and the key that opens the help there (f1
// where letters type into a field).
var helpScreens = []struct {
	name, line string
	keys       []string
	open       string
	down       bool
}{
	{name: "topics", open: "?"},
	{name: "topic", line: "topic public/demo/orders", open: "?"},
	{name: "peek", line: "peek public/demo/orders billing", open: "?"},
	{name: "tail", line: "tail public/demo/orders", open: "?"},
	{name: "produce", line: "produce public/demo/orders", open: "f1"},
	{name: "flow-index", line: "flow", open: "?"},
	{name: "flow", line: "flow public/demo/orders billing", open: "?"},
	{name: "dlq-index", line: "dlq", open: "?"},
	{name: "dlq", line: "dlq public/demo/orders-billing-DLQ", open: "?"},
	{name: "replay", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"R"}, open: "?"},
	{name: "resend", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"E"}, open: "f1"},
	{name: "waiting", line: "flow orders billing", open: "?", down: true},
}

// TestGoldenHelpScrolled: the help of every screen, scrolled to its end (G), at every size:
// the last keys of the longest list are on screen at 80×24.
func TestGoldenHelpScrolled(t *testing.T) {
	for _, sc := range helpScreens {
		for _, sz := range sizes {
			name := fmt.Sprintf("help-end-%s-%dx%d", sc.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, sz[0], sz[1], "dark")
				if sc.down {
					h.src.Lock()
					h.src.Err = unreachable
					h.src.Unlock()
				}
				if sc.line != "" {
					h.command(sc.line)
				}
				h.keys(sc.keys...)
				h.keys(sc.open, "G")
				got := h.plain()
				checkSize(t, got, sz[0], sz[1])
				tuitest.Golden(t, name, got)
			})
		}
	}
}

// walkState is a screen in a state: how to reach it (a palette line, then keys), and whether
// letters type into a field there.
type walkState struct {
	name, line string
	keys       []string
	typing     bool
	down       bool // the cluster does not answer
}

// open starts a harness on the state.
func (st walkState) open(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, 120, 40, "dark")
	// A tail's stream is abandoned soon: what it delivered does not matter here.
	h.streamWait = 30 * time.Millisecond
	if st.down {
		h.src.Lock()
		h.src.Err = unreachable
		h.src.Unlock()
	}
	if st.line != "" {
		h.command(st.line)
	}
	h.keys(st.keys...)
	return h
}

// walkStates are the screens (and states of them) whose keys TestHelpListsEveryKey walks: how
// to reach each, and whether letters type into a field there.
var walkStates = []walkState{
	{name: "topics"},
	{name: "topics namespaces", keys: []string{"tab"}},
	{name: "topic", line: "topic public/demo/orders"},
	{name: "peek", line: "peek public/demo/orders billing"},
	{name: "tail", line: "tail public/demo/orders"},
	{name: "read", line: "peek public/demo/orders billing", keys: []string{"o", "text:earliest", "enter"}},
	{name: "produce", line: "produce public/demo/orders", typing: true},
	{name: "flow index", line: "flow"},
	{name: "flow", line: "flow public/demo/orders billing"},
	{name: "dlq index", line: "dlq"},
	{name: "dlq", line: "dlq public/demo/orders-billing-DLQ"},
	{name: "dlq counts", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"c"}},
	{name: "replay preview", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"R"}},
	{name: "replay controls", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"R", "O"}, typing: true},
	{name: "replay done", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"R", "enter", "y"}},
	{name: "resend", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"E"}, typing: true},
	{name: "waiting", line: "flow orders billing", down: true},
}

// keyUniverse is every key a user can press that a screen might bind: the printable ASCII
// characters, ctrl and a letter, and the named keys.
func keyUniverse() []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for r := rune('!'); r <= '~'; r++ {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	for r := rune('a'); r <= 'z'; r++ {
		out = append(out, tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl})
	}
	for _, c := range []rune{tea.KeySpace, tea.KeyEnter, tea.KeyEscape, tea.KeyTab, tea.KeyBackspace, tea.KeyDelete,
		tea.KeyUp, tea.KeyDown, tea.KeyLeft, tea.KeyRight, tea.KeyPgUp, tea.KeyPgDown, tea.KeyHome, tea.KeyEnd,
		tea.KeyInsert, tea.KeyF1, tea.KeyF2} {
		out = append(out, tea.KeyPressMsg{Code: c})
	}
	return append(out, tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
}

// TestHelpListsEveryKey walks every key a user can press on every screen, each on a screen
// just opened: a key that does anything there (a command, or a change on screen) must be listed
// in that screen's help. Where letters type into a field, only the keys that are no letter are
// walked.
func TestHelpListsEveryKey(t *testing.T) {
	for _, st := range walkStates {
		t.Run(st.name, func(t *testing.T) {
			h := st.open(t)
			documented := map[string]bool{}
			for _, sec := range h.app.helpSections() {
				for _, b := range sec.Keys {
					for _, k := range b.Keys() {
						documented[k] = true
					}
				}
			}
			for _, k := range keyUniverse() {
				if st.typing && k.Mod == 0 && (k.Text != "" || k.Code == tea.KeySpace || k.Code == tea.KeyBackspace ||
					k.Code == tea.KeyDelete || k.Code == tea.KeyLeft || k.Code == tea.KeyRight || k.Code == tea.KeyHome || k.Code == tea.KeyEnd) {
					continue // it types, or moves the cursor in the field
				}
				before := h.app.Render()
				_, cmd := h.app.Update(k)
				if cmd == nil && h.app.Render() == before {
					continue
				}
				if !documented[k.String()] {
					t.Errorf("%s: %q does something but the help does not list it", st.name, k.String())
				}
				h = st.open(t) // the key may have changed the screen: the next one starts afresh
			}
		})
	}
}

// TestHelpEveryKeyReachable (defect 1 of issue 31): at 80×24, paging through the help of every
// screen shows every key it lists, with what it does, the general keys included.
func TestHelpEveryKeyReachable(t *testing.T) {
	for _, sc := range helpScreens {
		t.Run(sc.name, func(t *testing.T) {
			h := newHarness(t, 80, 24, "dark")
			if sc.line != "" {
				h.command(sc.line)
			}
			h.keys(sc.keys...)
			h.keys(sc.open)
			seen := h.plain()
			for range 20 {
				h.keys("pgdown")
				seen += h.plain()
			}
			for _, sec := range h.app.helpSections() {
				for _, b := range sec.Keys {
					if line := keymap.Names(b) + " "; !strings.Contains(seen, line) || !strings.Contains(seen, b.Help().Desc) {
						t.Errorf("%s: %q (%s) never shows in the help", sc.name, keymap.Names(b), b.Help().Desc)
					}
				}
			}
		})
	}
}

// TestHelpSearch: / in the help keeps only the keys whose name or description holds what is
// typed; esc clears the search, then closes the help.
func TestHelpSearch(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("?", "/", "text:retention", "enter")
	got := h.plain()
	if !strings.Contains(got, "T set the namespace's retention") || strings.Contains(got, "purge") {
		t.Errorf("the help searched for retention:\n%s", got)
	}
	h.keys("esc")
	if got := h.plain(); !strings.Contains(got, "mark all shown") || !strings.Contains(got, "esc or ? closes") {
		t.Errorf("esc did not clear the search:\n%s", got)
	}
	h.keys("esc")
	if got := h.plain(); strings.Contains(got, "esc or ? closes") {
		t.Errorf("esc did not close the help:\n%s", got)
	}
}

// TestKeyBarSaysMore (defect 2 of issue 31): where the screen's keys do not all fit, the key bar
// keeps its own keys first and says "? more"; where they fit, "? help".
func TestKeyBarSaysMore(t *testing.T) {
	bar := func(w int) string {
		h := newHarness(t, w, 24, "dark")
		h.command("dlq public/demo/orders-billing-DLQ")
		lines := splitLines(h.plain())
		return lines[len(lines)-1]
	}
	if got := bar(80); !strings.HasPrefix(got, "space mark · / search") || !strings.HasSuffix(got, "? more") {
		t.Errorf("the key bar at 80 columns: %q", got)
	}
	if got := bar(220); !strings.Contains(got, "E edit & resend…") || !strings.Contains(got, "f flow") || !strings.Contains(got, "? help") {
		t.Errorf("the key bar at 220 columns: %q", got)
	}
}
