package tui

import "testing"

// Going back to a screen already open returns to it: the way back does not grow with hops
// between the same screens.
func TestBreadcrumbsCollapseRepeatedHops(t *testing.T) {
	h := newHarness(t, 160, 48, "")
	for _, line := range []string{"topic orders", "flow orders", "dlq orders-billing-DLQ", "topic orders", "flow orders"} {
		h.keys(":", "text:"+line, "enter")
	}
	if n := len(h.app.stack); n != 3 {
		t.Fatalf("%d screens on the stack after returning to the topic and its flow, want 3 (topics, topic, flow):\n%s", n, h.plain())
	}
	h.keys("esc", "esc")
	if n := len(h.app.stack); n != 1 {
		t.Fatalf("two esc left %d screens, want the topics screen alone", n)
	}
}
