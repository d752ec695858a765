package tui

import (
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/tui/common"
)

// On an empty cluster p asks for the topic to produce to, on the palette.
func TestEmptyClusterProduceAsksForATopic(t *testing.T) {
	h := newHarness(t, 100, 30, "")
	h.src.Lock()
	h.src.Rows = nil
	h.src.Unlock()
	h.send(common.RefreshMsg{Forced: true})
	if s := h.plain(); !strings.Contains(s, "point your applications at pulsar://127.0.0.1:6650") {
		t.Fatalf("the empty cluster says nothing of how to get data in:\n%s", s)
	}
	h.keys("p")
	if !h.app.paletteOpen || h.app.palette.Value() != "produce " {
		t.Fatalf("p on an empty cluster: palette open %v with %q, want \"produce \"", h.app.paletteOpen, h.app.palette.Value())
	}
}
