package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

// actionScreens are the golden views of the actions on dead letters: each confirmation, and
// what it did.
var actionScreens = []struct {
	name, line string
	keys       []string
	readOnly   bool
	many       bool // the DLQ holds 150 letters more: a discard past 100 asks for its name
}{
	{name: "discard-preview", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"space", "space", "X"}},
	{name: "discard-confirm", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"space", "space", "X", "enter"}},
	{name: "discard-done", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"space", "space", "X", "enter", "y"}},
	{name: "purge-ask", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"P"}},
	{name: "purge-confirm", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"P", "enter"}},
	{name: "purge-skip-confirm", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"P", "text:10", "enter"}},
	{name: "purge-done", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"P", "enter", "text:orders-billing-DLQ", "enter"}},
	{name: "purge-wrong-name", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"P", "enter", "text:orders", "enter"}},
	{name: "resend-form", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"j", "E"}},
	{name: "resend-confirm", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"j", "E", "ctrl+s"}},
	{name: "resend-done", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"j", "E", "ctrl+s", "y"}},
	{name: "replay-controls", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"R", "O"}},
	{name: "subscribe-confirm", line: "dlq acme/billing/invoices-archiver-DLQ", keys: []string{"A", "enter"}},
	{name: "subscribe-done", line: "dlq acme/billing/invoices-archiver-DLQ", keys: []string{"A", "enter", "y"}},
	{name: "read-only", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"space", "X", "enter"}, readOnly: true},
	{name: "retention-confirm", line: "dlq acme/billing/invoices-archiver-DLQ", keys: []string{"T", "enter"}},
	{name: "retention-done", line: "dlq acme/billing/invoices-archiver-DLQ", keys: []string{"T", "enter", "y"}},
	{name: "discard-many-confirm", line: "dlq public/demo/orders-billing-DLQ", many: true,
		keys: []string{"/", "text:reason=\"currency not supported\"", "enter", "X", "enter"}},
	{name: "discard-many-done", line: "dlq public/demo/orders-billing-DLQ", many: true,
		keys: []string{"/", "text:reason=\"currency not supported\"", "enter", "X", "enter", "text:orders-billing-DLQ", "enter"}},
}

func TestGoldenActions(t *testing.T) {
	for _, sc := range actionScreens {
		for _, sz := range sizes {
			name := fmt.Sprintf("act-%s-%dx%d", sc.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				h := newHarnessWith(t, sz[0], sz[1], func(o *Options) {
					if sc.readOnly {
						o.ReadOnly = "read-only (context prod)"
					}
				})
				if sc.many {
					manyLetters(h.src, 150)
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

// newHarnessWith is newHarness with options changed first.
func newHarnessWith(t *testing.T, w, h int, mod func(*Options)) *harness {
	t.Helper()
	src := datatest.NewFake()
	opts := Options{Source: src, Theme: "dark", ThemesDir: t.TempDir(), Clock: common.FixedClock{T: datatest.FakeEpoch},
		Getenv: func(string) string { return "" }, ExportDir: t.TempDir()}
	mod(&opts)
	app, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{t: t, app: app, src: src}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(app.Init())
	return hs
}

// manyLetters adds n letters to the fake DLQ, all of one reason.
func manyLetters(f *datatest.Fake, n int) {
	f.Lock()
	defer f.Unlock()
	dlq := "persistent://public/demo/orders-billing-DLQ"
	for i := range n {
		f.Messages[dlq] = append(f.Messages[dlq], data.Message{ID: fmt.Sprintf("8:%d:-1", i), Topic: dlq, Key: fmt.Sprintf("order-%d", 2000+i),
			Properties:  map[string]string{"REAL_TOPIC": "persistent://public/demo/orders", "reason": "currency not supported"},
			PublishTime: datatest.FakeEpoch.Add(-time.Minute), Payload: []byte(`{"currency":"XTS"}`)})
	}
}
