package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/pages/dlq"
	"github.com/letterbox-dev/letterbox/tui/pages/flow"
)

// TestCustomNamedDLQ: dead letters the official Go client routed into a DLQ named by hand
// (orders-dlq) make it a DLQ on every screen — badged, listed by :dlq with its origin, with a
// flow — while a topic named x-DLQ that holds plain messages is not one. A whole-DLQ search
// then finds its letter, and nothing on the way consumed anything.
func TestCustomNamedDLQ(t *testing.T) {
	env := pulsartest.Start(t)
	const ns = "persistent://public/default/"
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: env.ServiceURL(), OperationTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: ns + "orders", SubscriptionName: "billing", Type: pulsar.Shared,
		NackRedeliveryDelay: 20 * time.Millisecond,
		DLQ:                 &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: ns + "orders-dlq", InitialSubscriptionName: "billing-keep"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	ctx := brokertest.Ctx(t, 60*time.Second)
	for _, topic := range []string{ns + "orders", ns + "x-DLQ"} {
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte(`{"id":7}`), Key: "customer-7",
			Properties: map[string]string{"reason": "card expired"}}); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	m, err := cons.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cons.Nack(m)
	brokertest.WaitFor(t, 20*time.Second, "the dead letter in orders-dlq", func() bool {
		st, err := env.Admin().Stats(ctx, ns+"orders-dlq")
		return err == nil && st.MsgInCounter == 1
	})

	h, _ := newClusterHarness(t, ctx, data.AdminOptions{AdminURL: env.AdminURL(), ServiceURL: env.ServiceURL()}, 160, 48)
	h.patience, h.streamWait = 30*time.Second, 20*time.Second

	screen := h.plain()
	if !badged(screen, "orders-dlq", "DLQ") {
		t.Errorf("orders-dlq is not badged DLQ on the topics screen:\n%s", screen)
	}
	if badged(screen, "x-DLQ", "DLQ") || !strings.Contains(screen, "x-DLQ") {
		t.Errorf("x-DLQ should be listed and not badged:\n%s", screen)
	}

	h.command("dlq")
	screen = h.plain()
	if !strings.Contains(screen, "orders-dlq") || !strings.Contains(screen, "orders / billing") || strings.Contains(screen, "x-DLQ") {
		t.Errorf(":dlq should list orders-dlq from orders / billing, and not x-DLQ:\n%s", screen)
	}

	h.app.popToRoot()
	h.command("flow public/default/orders-dlq")
	fp, ok := h.app.active().(*flow.Page)
	if !ok || fp.Flow() == nil {
		t.Fatalf("the flow of orders-dlq did not open:\n%s", h.plain())
	}
	if f := fp.Flow(); f.Topic != ns+"orders" || f.Sub != "billing" || f.DLQ.Topic != ns+"orders-dlq" || !f.DLQ.Exists {
		t.Errorf("flow %s/%s with DLQ %s (exists %v), want orders/billing with orders-dlq", f.Topic, f.Sub, f.DLQ.Topic, f.DLQ.Exists)
	}

	h.app.popToRoot()
	h.command("dlq public/default/orders-dlq")
	h.keys("/", "text:key=customer-7", "enter")
	waitScreen(t, h, "the search's letter", func() bool {
		p, ok := h.app.active().(*dlq.Page)
		return ok && len(p.Loaded()) == 1 && p.Loaded()[0].Key == "customer-7"
	})
	st, err := env.Admin().Stats(context.Background(), ns+"orders-dlq")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Subscriptions) != 1 || st.Subscriptions["billing-keep"].MsgBacklog != 1 {
		t.Errorf("after the screens: subscriptions %+v, want billing-keep alone with its letter", st.Subscriptions)
	}
}

// badged reports whether the line of screen naming topic carries badge.
func badged(screen, topic, badge string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, " "+topic+" ") {
			return strings.Contains(l, " "+badge+" ")
		}
	}
	return false
}

// waitScreen delivers what the app's commands produce until cond holds (a scan's messages
// come from its own goroutine).
func waitScreen(t *testing.T, h *harness, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s on screen:\n%s", what, h.plain())
		}
		h.send(common.RefreshMsg{})
	}
}
