package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestReplayCrossTenantConfirmation: a letter whose origin is in another tenant than the DLQ's
// is not sent there by the preview's plan alone: the confirmation names that topic and its
// tenant, and y sends it there too.
func TestReplayCrossTenantConfirmation(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := pulsartest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	if err := env.Admin().CreateTenant(ctx, "acme", adminapi.TenantInfo{AllowedClusters: []string{"standalone"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Admin().CreateNamespace(ctx, "acme/billing"); err != nil {
		t.Fatal(err)
	}
	cl := brokertest.NewClient(t, env.ServiceURL())
	const orders, invoices = "persistent://public/default/orders", "persistent://acme/billing/invoices"
	for _, o := range []string{orders, invoices} {
		c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: o, SubscriptionName: "app"})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	const dlq = "persistent://public/default/orders-billing-DLQ"
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: "billing-keep",
		TopicPurpose: client.TopicPurposeDeadLetter, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, origin := range []string{orders, invoices} {
		if _, err := p.Send(ctx, &client.Message{Key: "k", Payload: []byte("x"),
			Properties: map[string]string{client.PropertyRealTopic: origin}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	h, _ := newClusterHarness(t, ctx, data.AdminOptions{AdminURL: env.AdminURL(), ServiceURL: env.ServiceURL()}, 160, 48)
	h.patience, h.streamWait = 30*time.Second, 20*time.Second
	h.command("replay " + dlq + " billing-keep")
	if screen := h.plain(); !strings.Contains(screen, "would move       1") || !strings.Contains(screen, "another tenant") {
		t.Fatalf("preview:\n%s", screen)
	}
	h.keys("enter")
	want := "Move 2 dead letters back now, 1 of them to another tenant than the DLQ's (public): acme/billing/invoices (tenant acme)?"
	if screen := strings.Join(strings.Fields(h.plain()), " "); !strings.Contains(screen, want) {
		t.Fatalf("the confirmation does not name the other tenant's topic:\n%s", h.plain())
	}
	h.keys("y")
	brokertest.WaitFor(t, 30*time.Second, "the letter in acme/billing/invoices", func() bool {
		st, err := env.Admin().Stats(ctx, invoices)
		return err == nil && st.MsgInCounter == 1
	})
	brokertest.WaitFor(t, 30*time.Second, "an empty DLQ", func() bool {
		st, err := env.Admin().Stats(ctx, dlq)
		return err == nil && st.Subscriptions["billing-keep"].MsgBacklog == 0
	})
}
