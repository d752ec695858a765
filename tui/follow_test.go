package tui

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/tui/common"
)

// Screens follow the cluster: a command typed while it does not answer opens when it does, a
// topic or subscription deleted under its screen turns that screen into the not-found page,
// errors name what is missing, and a tail says why it ended.

// unreachable is the error a cluster that does not answer gives.
var unreachable = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}

// TestCommandWaitsForTheCluster (defect 6 of issue 31): :flow orders billing typed while the
// cluster does not answer opens a screen that says it waits, and the flow once it answers.
func TestCommandWaitsForTheCluster(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	h.src.Lock()
	h.src.Err = unreachable
	h.src.Unlock()
	h.command("flow orders billing")
	if got := h.plain(); !strings.Contains(got, ":flow orders billing") || !strings.Contains(got, "Waiting for the cluster") ||
		!strings.Contains(got, "unreachable") {
		t.Fatalf("the command typed while the cluster does not answer:\n%s", got)
	}
	h.send(common.RefreshMsg{}) // still down: it keeps waiting
	if got := h.plain(); !strings.Contains(got, "Waiting for the cluster") {
		t.Fatalf("a refresh while the cluster is down:\n%s", got)
	}
	h.src.Lock()
	h.src.Err = nil
	h.src.Unlock()
	h.send(common.RefreshMsg{}) // the next refresh: the cluster answers
	got := h.plain()
	if !strings.Contains(got, "Flow public/demo/orders · subscription billing") || strings.Contains(got, "Waiting for the cluster") {
		t.Fatalf("the flow did not open once the cluster answered:\n%s", got)
	}
	h.keys("esc") // the waiting screen is gone: esc goes back to where the command was typed
	if got := h.plain(); !strings.HasPrefix(got, "letterbox Topics ") || strings.Contains(strings.SplitN(got, "\n", 2)[0], "›") {
		t.Errorf("esc from the flow:\n%s", got)
	}
}

// TestDeletedUnderItsScreen (defect 7 of issue 31): a topic, a DLQ or a peeked subscription
// deleted while its screen is open turns the screen into the not-found page at the next
// refresh, with the keys that act on it off.
func TestDeletedUnderItsScreen(t *testing.T) {
	for _, c := range []struct {
		name, line, topic, sub, want string
	}{
		{"topic", "topic public/demo/orders", "persistent://public/demo/orders", "", "✗ public/demo/orders: not found"},
		{"dlq", "dlq public/demo/orders-billing-DLQ", "persistent://public/demo/orders-billing-DLQ", "", "✗ public/demo/orders-billing-DLQ: not found"},
		{"peek", "peek public/demo/orders billing", "persistent://public/demo/orders", "billing", "✗ subscription billing of public/demo/orders: not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 80, 24, "dark")
			h.command(c.line)
			before := h.plain()
			h.src.Lock()
			if c.sub == "" {
				delete(h.src.Details, c.topic)
			} else {
				d := *h.src.Details[c.topic]
				d.Subscriptions = nil
				h.src.Details[c.topic] = &d
			}
			h.src.Unlock()
			h.send(common.RefreshMsg{})
			got := h.plain()
			if !strings.Contains(got, c.want) || !strings.HasSuffix(strings.TrimSpace(got), "q quit") || !strings.Contains(got, "ctrl+r try again") {
				t.Fatalf("after the deletion and a refresh:\n%s\n(before:\n%s)", got, before)
			}
			h.keys("t", "p", "enter")
			if got := h.plain(); !strings.Contains(got, c.want) {
				t.Errorf("a key acted on what is gone:\n%s", got)
			}
		})
	}
}

// TestMissingIsNamed (defect 8 of issue 31): a peek of a subscription that does not exist
// names the subscription, not the topic.
func TestMissingIsNamed(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	h.command("peek orders nosub")
	got := h.plain()
	if !strings.Contains(got, "✗ subscription nosub of public/demo/orders: not found") ||
		!strings.Contains(got, "The topic is there, without this subscription") {
		t.Errorf("a peek of a missing subscription:\n%s", got)
	}
}

// TestTailEndSaysWhy (defect 9 of issue 31): a tail ended by its topic's deletion says so, and
// what ctrl+r will do.
func TestTailEndSaysWhy(t *testing.T) {
	h := newHarness(t, 160, 48, "dark")
	h.src.TailEnd = &client.BrokerClosedError{Topic: "persistent://public/demo/orders", Reason: "topic persistent://public/demo/orders was deleted"}
	h.command("tail orders")
	if got := h.plain(); !strings.Contains(got, "tail ended: the topic was deleted · ctrl+r tails it again once it exists") {
		t.Errorf("the tail's end:\n%s", got)
	}
}
