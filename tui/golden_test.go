package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

var sizes = [][2]int{{80, 24}, {160, 48}, {220, 60}}

// screens are the golden views: how to reach each from the start.
var screens = []struct {
	name string
	keys []string
}{
	{"topics", nil},
	{"topics-filtered", []string{"/", "o", "r", "d", "enter"}},
	{"topics-sorted-backlog", []string{"s", "s", "s"}},
	{"topics-expanded", []string{"G", "x"}},
	{"topic", []string{":", "t", "o", "p", "i", "c", " ", "p", "u", "b", "l", "i", "c", "/", "d", "e", "m", "o", "/", "o", "r", "d", "e", "r", "s", "enter"}},
	{"topic-upstream", []string{":", "t", "o", "p", "i", "c", " ", "p", "u", "b", "l", "i", "c", "/", "d", "e", "m", "o", "/", "p", "a", "y", "m", "e", "n", "t", "s", "enter"}},
	{"messages-peek", []string{":", "p", "e", "e", "k", " ", "p", "u", "b", "l", "i", "c", "/", "d", "e", "m", "o", "/", "o", "r", "d", "e", "r", "s", " ", "b", "i", "l", "l", "i", "n", "g", "enter"}},
	{"messages-peek-hex", []string{":", "p", "e", "e", "k", " ", "p", "u", "b", "l", "i", "c", "/", "d", "e", "m", "o", "/", "o", "r", "d", "e", "r", "s", " ", "b", "i", "l", "l", "i", "n", "g", "enter", "j", "j", "j", "j"}},
	{"messages-dlq", []string{":", "p", "e", "e", "k", " ", "p", "u", "b", "l", "i", "c", "/", "d", "e", "m", "o", "/", "o", "r", "d", "e", "r", "s", "-", "b", "i", "l", "l", "i", "n", "g", "-", "D", "L", "Q", " ", "b", "i", "l", "l", "i", "n", "g", "-", "r", "e", "p", "l", "a", "y", "enter"}},
	{"messages-tail", []string{":", "t", "a", "i", "l", " ", "p", "u", "b", "l", "i", "c", "/", "d", "e", "m", "o", "/", "o", "r", "d", "e", "r", "s", "enter"}},
	{"produce", []string{":", "p", "r", "o", "d", "u", "c", "e", " ", "p", "u", "b", "l", "i", "c", "/", "d", "e", "m", "o", "/", "o", "r", "d", "e", "r", "s", "enter"}},
	{"help", []string{"?"}},
	{"palette", []string{":", "t", "h"}},
}

func TestGoldenScreens(t *testing.T) {
	for _, sc := range screens {
		for _, sz := range sizes {
			name := fmt.Sprintf("%s-%dx%d", sc.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, sz[0], sz[1], "dark")
				h.keys(sc.keys...)
				got := h.plain()
				checkSize(t, got, sz[0], sz[1])
				tuitest.Golden(t, name, got)
			})
		}
	}
}

// TestGoldenColours pins the colours themselves, per theme, as a 256-colour terminal gets them.
func TestGoldenColours(t *testing.T) {
	for _, theme := range []string{"dark", "light", "high-contrast", "colour-blind", "no-color"} {
		t.Run(theme, func(t *testing.T) {
			h := newHarness(t, 80, 24, theme)
			tuitest.Golden(t, "colours-topics-"+theme, tuitest.Profile(h.app.Render(), colorprofile.ANSI256))
		})
	}
}

// checkSize asserts the view fills exactly w×h cells: nothing wraps, nothing scrolls.
func checkSize(t *testing.T, plain string, w, h int) {
	t.Helper()
	lines := splitLines(plain)
	if len(lines) != h {
		t.Errorf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := cells(l); n > w {
			t.Errorf("line %d is %d cells wide, want ≤ %d: %q", i+1, n, w, l)
		}
	}
}

// TestGoldenColoursProduce pins the produce form's colours: the payload's placeholder is
// dimmed and slanted, so that it never reads as content (defect 11 of issue 31).
func TestGoldenColoursProduce(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	h.command("produce public/demo/orders")
	h.keys("tab", "tab", "tab")
	tuitest.Golden(t, "colours-produce-dark", tuitest.Profile(h.app.Render(), colorprofile.ANSI256))
}
