package tui

import (
	"fmt"
	"testing"

	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

// deadLetterScreens are the golden views of the flow, dead-letters and replay screens: how to
// reach each from the start (a palette line, then keys).
var deadLetterScreens = []struct {
	name, line string
	keys       []string
	hold       bool // the fake replay stops after 2 messages (a run in progress)
	scanHold   bool // the fake scan stops half way
	setup      func(f *datatest.Fake)
}{
	{name: "flow-index", line: "flow"},
	{name: "flow", line: "flow public/demo/orders billing"},
	{name: "flow-journey", line: "flow public/demo/orders-billing-DLQ", keys: []string{"j", "j"}},
	{name: "dlq-index", line: "dlq"},
	{name: "dlq", line: "dlq public/demo/orders-billing-DLQ"},
	{name: "dlq-by-reason", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"j", "j", "r", "space"}},
	{name: "dlq-losing", line: "dlq acme/billing/invoices-archiver-DLQ"},
	{name: "replay-preview", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"j", "j", "r", "R"}},
	{name: "replay-confirm", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"j", "j", "r", "R", "enter"}},
	{name: "replay-running", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"R", "enter", "y"}, hold: true},
	{name: "replay-done", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"j", "j", "r", "R", "enter", "y"}},
	{name: "dlq-scanning", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"c"}, scanHold: true},
	{name: "dlq-counts", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"c"}},
	{name: "dlq-counts-drill", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"c", "j", "enter"}},
	{name: "dlq-search", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"/", "text:key=order-991", "enter"}},
	{name: "dlq-filter-typing", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"/", "text:reason~currency"}},
	{name: "dlq-search-error", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"/", "text:payload~XTS("}},
	{name: "dlq-open-letter", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"/", "text:key=order-991", "enter", "enter"}},
	{name: "messages-read-earliest", line: "peek public/demo/orders billing", keys: []string{"o", "text:earliest", "enter"}},
	{name: "dlq-browse", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"o", "text:-50m", "enter"}},
	// A cluster that counts entries, not letters: "≈" and entries until the letters are counted.
	{name: "dlq-entries-only", line: "dlq public/demo/orders-billing-DLQ", setup: entriesOnly},
	{name: "dlq-entries-counted", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"c", "c"}, setup: entriesOnly},
	{name: "dlq-acknowledged-shown", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"i"}, setup: someAcked},
}

// entriesOnly makes the fake's DLQ subscription count entries only, as upstream's broker does:
// its 4 letters in 3 entries.
func entriesOnly(f *datatest.Fake) {
	f.Lock()
	defer f.Unlock()
	d := f.Details["persistent://public/demo/orders-billing-DLQ"]
	d.Subscriptions[0].Backlog, d.Subscriptions[0].EntriesOnly, d.Subscriptions[0].Entries = 3, true, 3
}

// someAcked marks two of the DLQ's letters acknowledged by its subscription, still retained.
func someAcked(f *datatest.Fake) {
	f.Lock()
	defer f.Unlock()
	dead := f.Messages["persistent://public/demo/orders-billing-DLQ"]
	dead[0].Acked, dead[2].Acked = true, true
}

func TestGoldenDeadLetterScreens(t *testing.T) {
	for _, sc := range deadLetterScreens {
		for _, sz := range sizes {
			name := fmt.Sprintf("%s-%dx%d", sc.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, sz[0], sz[1], "dark")
				if sc.hold {
					hold := make(chan struct{})
					h.src.ReplayHold, h.src.ReplayHoldAfter = hold, 2
					t.Cleanup(func() { close(hold) })
				}
				if sc.scanHold {
					hold := make(chan struct{})
					h.src.ScanHold = hold
					t.Cleanup(func() { close(hold) })
				}
				if sc.setup != nil {
					sc.setup(h.src)
				}
				h.command(sc.line)
				h.keys(sc.keys...)
				got := h.plain()
				checkSize(t, got, sz[0], sz[1])
				tuitest.Golden(t, name, got)
			})
		}
	}
}

// command runs one palette line.
func (h *harness) command(line string) {
	h.t.Helper()
	h.keys(":")
	h.typeText(line)
	h.keys("enter")
}
