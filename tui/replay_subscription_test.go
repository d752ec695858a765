package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestReplayCommandChoosesTheDurableSubscription: :replay DLQ without a subscription reads
// through the DLQ's only durable one, as letterbox replay does, whatever readers are attached
// (a reader's non-durable subscription is none to act through); the TUI counted every
// subscription and refused to choose.
func TestReplayCommandChoosesTheDurableSubscription(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := pulsartest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	cl := brokertest.NewClient(t, env.ServiceURL())
	const dlq = "persistent://public/default/orders-billing-DLQ"
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: "billing-keep",
		TopicPurpose: client.TopicPurposeDeadLetter, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := p.Send(ctx, &client.Message{Key: "k", Payload: []byte("x"),
			Properties: map[string]string{client.PropertyRealTopic: "persistent://public/default/orders"}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	r, err := cl.CreateReader(ctx, client.ReaderOptions{Topic: dlq, StartMessageID: client.EarliestMessageID()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	brokertest.WaitFor(t, 30*time.Second, "the reader's subscription", func() bool {
		st, err := env.Admin().Stats(ctx, dlq)
		return err == nil && len(st.Subscriptions) == 2
	})

	h, _ := newClusterHarness(t, ctx, data.AdminOptions{AdminURL: env.AdminURL(), ServiceURL: env.ServiceURL()}, 160, 48)
	h.patience, h.streamWait = 30*time.Second, 20*time.Second
	h.command("replay " + dlq)
	if screen := h.plain(); !strings.Contains(screen, "via billing-keep") || !strings.Contains(screen, "would move       3") {
		t.Fatalf(":replay without a subscription:\n%s", screen)
	}
}
