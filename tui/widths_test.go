package tui

import (
	"strings"
	"testing"
)

// TestNothingCutThatFits (defect 14 of issue 31): a column's header is never cut, its sort
// arrow included (BACKLO… at 160 columns), and the replay controls' hints are whole wherever
// the screen has room for them (at 220 columns they were cut at 40 cells).
func TestNothingCutThatFits(t *testing.T) {
	for _, w := range []int{80, 160, 220} {
		h := newHarness(t, w, 48, "dark")
		h.keys("s", "s", "s") // by backlog
		if got := h.plain(); !strings.Contains(got, "BACKLOG↓") {
			t.Errorf("the topics sorted by backlog at %d columns:\n%s", w, got)
		}
	}
	for _, w := range []int{160, 220} {
		h := newHarness(t, w, 60, "dark")
		h.command("dlq public/demo/orders-billing-DLQ")
		h.keys("R", "O")
		got := h.plain()
		for _, hint := range []string{"each letter's origin (or a topic for all of them)", "3: skip letters replayed this often (-1: no guard)"} {
			if !strings.Contains(got, hint) {
				t.Errorf("the replay controls at %d columns cut %q:\n%s", w, hint, got)
			}
		}
	}
}

// TestWordsAgree (defect 15 of issue 31): one letter is a letter, the selection does not say
// its limit twice, and the history calls a resend edited only when the form changed the letter.
func TestWordsAgree(t *testing.T) {
	h := newHarness(t, 160, 48, "dark")
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("space", "R", "enter")
	if got := strings.Join(strings.Fields(h.plain()), " "); !strings.Contains(got, "Move 1 dead letter back now?") {
		t.Errorf("the question over one marked letter:\n%s", h.plain())
	}
	h.keys("n", "O", "tab", "tab", "text:11", "enter")
	if got := h.plain(); strings.Count(got, "at most 11") != 1 {
		t.Errorf("the limit is said more than once:\n%s", got)
	}

	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"E", "ctrl+s", "y"}, "id 7:0:-1 → public/demo/orders"},
		{[]string{"E", "text: ", "ctrl+s", "y"}, "id 7:0:-1 edited → public/demo/orders"},
	} {
		h := newHarness(t, 160, 48, "dark")
		h.command("dlq public/demo/orders-billing-DLQ")
		h.keys(c.keys...)
		h.src.Lock()
		var got string
		if n := len(h.src.Replays); n > 0 {
			got = h.src.Replays[n-1].Selection
		}
		h.src.Unlock()
		if got != c.want {
			t.Errorf("after %v the history's selection is %q, want %q", c.keys, got, c.want)
		}
	}
}

// TestWordsAgreeAfterOneMoved: a replay of one letter counts it as one, and says so after the
// run, where the counts read "none of the 1 moved letters".
func TestWordsAgreeAfterOneMoved(t *testing.T) {
	h := newHarness(t, 160, 48, "dark")
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("space", "R", "enter", "y")
	got := h.plain()
	if !strings.Contains(got, "the moved letter has not returned to the DLQ") {
		t.Errorf("after one letter moved:\n%s", got)
	}
	if strings.Contains(got, "1 moved letters") || strings.Contains(got, "1 dead letters") {
		t.Errorf("one letter counted as many:\n%s", got)
	}
}
