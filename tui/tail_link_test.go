package tui

import (
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/tui/data"
)

// A tail whose reader loses its broker says so (on its status line and in the header), and
// says when it reads on again.
func TestTailSaysWhenItsBrokerIsGone(t *testing.T) {
	h := newHarness(t, 160, 48, "")
	h.streamWait = 300e6
	h.src.TailLinks = []data.Link{data.LinkLost}
	h.command("tail orders")
	s := h.plain()
	if !strings.Contains(s, "connection lost: the broker is unreachable") || !strings.Contains(s, "unreachable · retrying") {
		t.Fatalf("a tail that lost its broker does not say so:\n%s", s)
	}
	h.src.TailLinks = []data.Link{data.LinkLost, data.LinkBack}
	h.keys("ctrl+r") // starts it again
	s = h.plain()
	if strings.Contains(s, "connection lost") || !strings.Contains(s, "connected again") || !strings.Contains(s, "● connected") {
		t.Fatalf("a tail back on its broker does not say so:\n%s", s)
	}
}
