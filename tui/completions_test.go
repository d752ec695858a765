package tui

import (
	"strings"
	"testing"
)

// The palette completes topic names from the cluster, and a command's subscriptions once its
// topic is typed; the line above the prompt lists what tab would complete.
func TestPaletteCompletesNames(t *testing.T) {
	h := newHarness(t, 160, 48, "")
	h.keys(":", "text:topic ord")
	if s := h.plain(); !strings.Contains(s, "tab completes:") || !strings.Contains(s, "orders-billing-DLQ") {
		t.Fatalf("no topic names offered after :topic ord:\n%s", s)
	}
	h.keys("esc", ":", "text:dlq orders-billing-DLQ ")
	if s := h.plain(); !strings.Contains(s, "billing-replay") {
		t.Fatalf("the DLQ's subscription is not offered:\n%s", s)
	}
	h.keys("tab", "enter")
	if s := h.plain(); !strings.Contains(s, "via billing-replay") {
		t.Fatalf("tab did not complete the subscription, or :dlq did not open it:\n%s", s)
	}
}

func TestShortestNames(t *testing.T) {
	got := shortestNames([]topicName{{name: "persistent://public/a/orders"}, {name: "persistent://public/b/orders"},
		{name: "persistent://public/a/payments"}, {name: "non-persistent://public/a/pings"}})
	want := map[string]string{
		"persistent://public/a/orders":    "public/a/orders",
		"persistent://public/b/orders":    "public/b/orders",
		"persistent://public/a/payments":  "payments",
		"non-persistent://public/a/pings": "non-persistent://public/a/pings",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("shortest name of %s = %q, want %q", k, got[k], v)
		}
	}
}

// TestPaletteDidYouMean (defect 12 of issue 31): a command or a topic name two edits or fewer
// from one that exists is suggested, and tab takes it.
func TestPaletteDidYouMean(t *testing.T) {
	h := newHarness(t, 160, 48, "")
	h.command("dql")
	if s := h.plain(); !strings.Contains(s, `✗ unknown command "dql": did you mean :dlq?`) {
		t.Errorf(":dql did not suggest :dlq:\n%s", s)
	}
	h.keys(":", "text:dql")
	if s := h.plain(); !strings.Contains(s, "did you mean dlq") {
		t.Errorf("no suggestion while typing dql:\n%s", s)
	}
	h.keys("tab", "text:orders-billing-DLQ", "enter")
	if s := h.plain(); !strings.Contains(s, "Dead letters public/demo/orders-billing-DLQ") {
		t.Errorf("tab did not take dlq:\n%s", s)
	}

	h.keys(":", "text:tail ordres")
	if s := h.plain(); !strings.Contains(s, "did you mean orders") {
		t.Errorf("no topic suggested for ordres:\n%s", s)
	}
	h.keys("tab", "enter")
	if s := h.plain(); !strings.Contains(s, "Tail public/demo/orders") {
		t.Errorf("tab did not take orders:\n%s", s)
	}
	h.keys("esc")
	h.command("tail ordres")
	if s := h.plain(); !strings.Contains(s, `topic "ordres" not found; did you mean public/demo/orders`) {
		t.Errorf(":tail ordres does not name the topic that comes close:\n%s", s)
	}
}
