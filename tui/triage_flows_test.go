package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/pages/dlq"
)

// TestScanOfDeletedDLQ: a DLQ deleted while it is scanned ends the scan with a message; the
// screen stays up and keeps answering keys.
func TestScanOfDeletedDLQ(t *testing.T) {
	h := newHarness(t, 120, 30, "dark")
	h.src.ScanErr = fmt.Errorf("scan: %w", dlqops.ErrTopicGone)
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("c")
	screen := h.plain()
	if !strings.Contains(screen, "✗ scan: the DLQ was deleted while it was scanned") {
		t.Fatalf("no word of the deleted DLQ:\n%s", screen)
	}
	p, ok := h.app.active().(*dlq.Page)
	if !ok || p.Busy() {
		t.Fatalf("the dead letters screen should stay, idle: %T", h.app.active())
	}
	h.src.Lock()
	h.src.ScanErr = nil
	h.src.Unlock()
	h.keys("j", "/", "text:key=order-991", "enter")
	if screen := h.plain(); !strings.Contains(screen, "/key=order-991 · 1 of 4 letters") {
		t.Errorf("the screen stopped answering:\n%s", screen)
	}
}

// TestScanCancel: esc cancels a running scan and says so; the letters stay as they were.
func TestScanCancel(t *testing.T) {
	h := newHarness(t, 120, 30, "dark")
	hold := make(chan struct{})
	h.src.ScanHold = hold
	t.Cleanup(func() { close(hold) })
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("c")
	if !strings.Contains(h.plain(), "scanning") {
		t.Fatalf("no scan running:\n%s", h.plain())
	}
	h.keys("esc")
	screen := h.plain()
	if !strings.Contains(screen, "scan cancelled") || strings.Contains(screen, "scanning") {
		t.Errorf("after esc:\n%s", screen)
	}
	p := h.app.active().(*dlq.Page)
	if p.Busy() || len(p.Loaded()) != 4 {
		t.Errorf("after the cancel: busy %v, %d letters", p.Busy(), len(p.Loaded()))
	}
	h.send(common.RefreshMsg{})
	if _, ok := h.app.active().(*dlq.Page); !ok {
		t.Error("esc on a running scan left the screen")
	}
}
