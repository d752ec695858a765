package tui

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
)

// guideTables are the key tables of docs/guide.md, each after a "<!-- keys: NAME -->" line,
// and the screens (walkStates) whose help they must match: the sections of those screens' own
// keys, or one of the sections every screen shares.
var guideTables = map[string][]string{
	"topics":   {"topics", "topics namespaces"},
	"topic":    {"topic"},
	"messages": {"peek", "tail", "read"},
	"produce":  {"produce"},
	"flow":     {"flow index", "flow"},
	"dlq":      {"dlq index", "dlq", "dlq counts"},
	"replay":   {"replay preview", "replay controls", "replay done"},
	"resend":   {"resend"},
	"waiting":  {"waiting"},
}

// shared are the help sections not of one screen, each with a table of its own in the guide.
var shared = map[string]string{"General": "general", "Navigation": "navigation", input.EditingHelp(true).Title: "editing"}

// TestGuideKeyTables holds docs/guide.md's key tables and the help together: every key a table
// lists is bound on its screen (the help lists exactly the bound keys, TestHelpListsEveryKey),
// and every key the help lists is in the table.
func TestGuideKeyTables(t *testing.T) {
	guide, err := os.ReadFile("../docs/guide.md")
	if err != nil {
		t.Fatal(err)
	}
	tables := guideKeys(t, string(guide))
	bound := map[string]map[string]bool{}
	add := func(table string, sec common.HelpSection) {
		if bound[table] == nil {
			bound[table] = map[string]bool{}
		}
		for _, b := range sec.Keys {
			for _, k := range b.Keys() {
				bound[table][k] = true
			}
		}
	}
	for table, states := range guideTables {
		for _, name := range states {
			i := slices.IndexFunc(walkStates, func(s walkState) bool { return s.name == name })
			h := walkStates[i].open(t)
			for _, sec := range h.app.helpSections() {
				if name, ok := shared[sec.Title]; ok {
					if sec.Title != "General" || !h.app.active().Capturing() {
						add(name, sec)
					}
					continue
				}
				add(table, sec)
			}
		}
	}
	for table, keys := range bound {
		doc, ok := tables[table]
		if !ok {
			t.Errorf("docs/guide.md has no key table <!-- keys: %s -->", table)
			continue
		}
		for k := range keys {
			if !doc[k] {
				t.Errorf("docs/guide.md, keys of %s: %q is bound but not listed", table, k)
			}
		}
		for k := range doc {
			if !keys[k] {
				t.Errorf("docs/guide.md, keys of %s: %q is listed but not bound", table, k)
			}
		}
	}
	for table := range tables {
		if bound[table] == nil {
			t.Errorf("docs/guide.md: a key table <!-- keys: %s --> that no screen has", table)
		}
	}
}

// guideNames are the keys as the guide writes them, where that differs from their names.
var guideNames = map[string]string{"↑": "up", "↓": "down", "←": "left", "→": "right", "pgdn": "pgdown",
	"alt+←": "alt+left", "alt+→": "alt+right"}

var tableMarker = regexp.MustCompile(`^<!-- keys: ([a-z]+) -->$`)

// guideKeys reads the key tables of the guide: for each, the keys its first column names in
// backquotes.
func guideKeys(t *testing.T, guide string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	lines := strings.Split(guide, "\n")
	for i := 0; i < len(lines); i++ {
		m := tableMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		keys := map[string]bool{}
		j := i + 1
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "|"); j++ {
		}
		for j += 2; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ { // past the header and its rule
			cells := strings.Split(lines[j], "|")
			for _, k := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
				name := k[1]
				if n, ok := guideNames[name]; ok {
					name = n
				}
				keys[name] = true
			}
		}
		if len(keys) == 0 {
			t.Errorf("docs/guide.md: the key table %s lists no key", m[1])
		}
		out[m[1]] = keys
	}
	return out
}

// TestGuideRunbookKeys: every key the guide's runbook names (a backquoted single character or a
// named key) is bound on the screens it walks through: the dead letters, the flow, the replay,
// or everywhere.
func TestGuideRunbookKeys(t *testing.T) {
	guide, err := os.ReadFile("../docs/guide.md")
	if err != nil {
		t.Fatal(err)
	}
	_, runbook, ok := strings.Cut(string(guide), "## The 3 a.m. runbook")
	if !ok {
		t.Fatal("docs/guide.md has no runbook")
	}
	runbook, _, _ = strings.Cut(runbook, "\n## ")
	bound := map[string]bool{}
	for _, name := range []string{"dlq index", "dlq", "dlq counts", "flow", "replay preview", "replay done"} {
		i := slices.IndexFunc(walkStates, func(s walkState) bool { return s.name == name })
		for _, sec := range walkStates[i].open(t).app.helpSections() {
			for _, b := range sec.Keys {
				for _, k := range b.Keys() {
					bound[k] = true
				}
			}
		}
	}
	named := map[string]bool{"enter": true, "esc": true, "tab": true, "space": true}
	n := 0
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(runbook, -1) {
		k := m[1]
		if len([]rune(k)) != 1 && !named[k] && !strings.HasPrefix(k, "ctrl+") {
			continue // a command line, an expression
		}
		n++
		if !bound[k] {
			t.Errorf("the runbook names %q, which the dead letters, flow and replay screens do not bind", k)
		}
	}
	if n == 0 {
		t.Error("the runbook names no key")
	}
}
