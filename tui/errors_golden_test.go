package tui

import (
	"fmt"
	"testing"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/tuitest"
)

// errorScreens are the golden views of what goes wrong: a topic that is not there, a name that
// matches none or several, a tail that ends.
var errorScreens = []struct {
	name string
	run  func(h *harness)
}{
	{"topic-gone", func(h *harness) {
		h.send(common.NavigateMsg{Page: common.PageTopic, Topic: "persistent://public/demo/gone"})
	}},
	{"dlq-gone", func(h *harness) {
		h.send(common.NavigateMsg{Page: common.PageDLQ, Topic: "persistent://public/demo/gone-DLQ"})
	}},
	{"palette-not-found", func(h *harness) { h.command("topic does/not/exist") }},
	{"palette-near", func(h *harness) { h.command("tail ordrs") }},
	{"palette-ambiguous", func(h *harness) {
		h.src.Lock()
		h.src.Rows = append(h.src.Rows, data.TopicRow{Name: "persistent://acme/billing/orders", Namespace: "acme/billing", Local: "orders"})
		h.src.Unlock()
		h.command("topic orders")
	}},
	{"empty-cluster", func(h *harness) { // what a new user sees first: how to get data in
		h.src.Lock()
		h.src.Rows = nil
		h.src.Unlock()
		h.send(common.RefreshMsg{Forced: true})
	}},
	{"tail-ended", func(h *harness) {
		h.src.TailEnd = &client.BrokerClosedError{Topic: "persistent://public/demo/orders",
			Reason: "topic persistent://public/demo/orders was deleted"}
		h.command("tail orders")
	}},
}

func TestGoldenErrors(t *testing.T) {
	for _, sc := range errorScreens {
		for _, sz := range sizes {
			name := fmt.Sprintf("error-%s-%dx%d", sc.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, sz[0], sz[1], "dark")
				sc.run(h)
				got := h.plain()
				checkSize(t, got, sz[0], sz[1])
				tuitest.Golden(t, name, got)
			})
		}
	}
}
