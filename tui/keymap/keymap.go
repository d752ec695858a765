// Package keymap is every key binding of the TUI, by name, so help, the footer and the screens
// agree. Plain letters are only ever matched when no input field has focus (the app checks
// Page.Capturing before it looks at a key); ctrl-keys work everywhere. A key means one thing on
// every screen (f is the flow, d the dead letters, D decodes, F follows); upper-case letters
// act on data (R replay, X discard, P purge, E resend, A add a subscription, T retention) and
// always ask first; nothing destructive is bound to a ctrl-key.
package keymap

import (
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap holds the global and per-screen bindings.
type KeyMap struct {
	// Global
	Quit, ForceQuit, Help, Palette, Filter, Back, NextPane, Refresh key.Binding
	// Navigation
	Up, Down, PageUp, PageDown, HalfUp, HalfDown, Top, Bottom, Left, Right, Enter key.Binding
	// Topics
	Sort, SortReverse, Expand, Produce key.Binding
	// Topic
	Messages, Tail, Flow, DeadLetters key.Binding
	// Messages
	Decode, Export, Copy, NextMatch, PrevMatch, Follow, Mark, NextPage, PrevPage, OpenAt key.Binding
	// Produce
	Send, NextField, PrevField key.Binding
}

// Default returns the standard bindings; help texts spell out "ctrl+" as users read it.
func Default() *KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return &KeyMap{
		Quit:      b("q", "quit", "q"),
		ForceQuit: b("ctrl+c", "quit", "ctrl+c"),
		Help:      b("?", "help", "?", "f1"),
		Palette:   b(":", "command", ":", "ctrl+p"),
		Filter:    b("/", "filter", "/", "ctrl+f"),
		Back:      b("esc", "back", "esc"),
		NextPane:  b("tab", "next pane", "tab"),
		Refresh:   b("ctrl+r", "reload", "ctrl+r"),

		Up:       b("↑/k", "up", "up", "k"),
		Down:     b("↓/j", "down", "down", "j"),
		PageUp:   b("pgup", "page up", "pgup"),
		PageDown: b("pgdn", "page down", "pgdown"),
		HalfUp:   b("ctrl+u", "half a page up", "ctrl+u"),
		HalfDown: b("ctrl+d", "half a page down", "ctrl+d"),
		Top:      b("g", "top", "g", "home"),
		Bottom:   b("G", "bottom", "G", "end"),
		Left:     b("←/h", "collapse", "left", "h"),
		Right:    b("→/l", "expand", "right", "l"),
		Enter:    b("enter", "open", "enter"),

		Sort:        b("s", "sort", "s"),
		SortReverse: b("S", "reverse sort", "S"),
		Expand:      b("x", "partitions", "x"),
		Produce:     b("p", "produce", "p"),

		Messages:    b("m", "peek", "m"),
		Tail:        b("t", "tail", "t"),
		Flow:        b("f", "flow", "f"),
		DeadLetters: b("d", "dead letters", "d"),

		Decode:    b("D", "decode as", "D"),
		Export:    b("e", "export", "e", "ctrl+e"),
		Copy:      b("y", "copy", "y"),
		NextMatch: b("n", "next match", "n"),
		PrevMatch: b("N", "previous match", "N"),
		Follow:    b("F", "follow", "F"),
		Mark:      b("space", "mark", "space", "v"),
		NextPage:  b("]", "next page", "]"),
		PrevPage:  b("[", "previous page", "["),
		OpenAt:    b("o", "open at…", "o"),

		Send:      b("ctrl+s", "send", "ctrl+s"),
		NextField: b("tab", "next field", "tab"),
		PrevField: b("shift+tab", "prev field", "shift+tab"),
	}
}

// keyNames are how keys read in the help, where they differ from their names in a binding.
var keyNames = map[string]string{"up": "↑", "down": "↓", "left": "←", "right": "→", "pgdown": "pgdn",
	"alt+left": "alt+←", "alt+right": "alt+→"}

// Names is every key of b as the help lists them ("↑ k", "/ ctrl+f"), so that an alias is never
// a key nobody is told about; a binding without keys gives its help text's key.
func Names(b key.Binding) string {
	if len(b.Keys()) == 0 {
		return b.Help().Key
	}
	names := make([]string, 0, len(b.Keys()))
	for _, k := range b.Keys() {
		if n, ok := keyNames[k]; ok {
			k = n
		}
		names = append(names, k)
	}
	return strings.Join(names, " ")
}
