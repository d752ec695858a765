package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Keys typed right after a command do not wait for what the command sets off: ":topics",
// enter and at once ":topic doomed" typed the second command into the screen (p opened the
// produce form) when the first palette's closing arrived as a message after the second ":".
func TestPaletteTypedAheadStaysOpen(t *testing.T) {
	h := newHarness(t, 120, 30, "dark")
	var pending []tea.Cmd
	press := func(k tea.KeyPressMsg) {
		_, cmd := h.app.Update(k) // what the key sets off has not come back yet
		pending = append(pending, cmd)
	}
	press(keyMsg(":"))
	for _, r := range "topics" {
		press(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	press(keyMsg("enter"))
	press(keyMsg(":"))
	for _, r := range "topic orders" {
		press(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	for _, cmd := range pending {
		h.run(cmd)
	}
	if !h.app.paletteOpen {
		t.Fatalf("the second palette closed under the keys typed into it:\n%s", h.plain())
	}
	if got := h.app.palette.Value(); got != "topic orders" {
		t.Fatalf("the second palette holds %q, want %q", got, "topic orders")
	}
	h.keys("enter")
	if s := h.plain(); !strings.Contains(s, "orders") || strings.Contains(s, "✗") {
		t.Fatalf("the typed-ahead command did not run:\n%s", s)
	}
}
