package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestReplayQuestionSaysItResumes: a replay of this cluster that was interrupted is resumed by
// the same replay from the TUI, and its question says so before anything moves.
func TestReplayQuestionSaysItResumes(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := pulsartest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	cl := brokertest.NewClient(t, env.ServiceURL())
	const orders, dlq, sub = "persistent://public/default/orders", "persistent://public/default/orders-billing-DLQ", "billing-keep"
	c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: orders, SubscriptionName: "app"})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: sub,
		TopicPurpose: client.TopicPurposeDeadLetter, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := p.Send(ctx, &client.Message{Key: "k", Payload: []byte("x"),
			Properties: map[string]string{client.PropertyRealTopic: orders}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	// A run on this cluster, one letter a second, interrupted once a letter moved.
	const cluster = "test-cluster"
	runCtx, cancel := context.WithCancel(ctx)
	_, err = dlqops.Run(runCtx, cl, dlqops.ReplayOptions{DLQ: dlq, Subscription: sub, Cluster: cluster, Rate: 1},
		func(ev dlqops.Event) {
			if ev.Action == dlqops.Moved {
				cancel()
			}
		})
	cancel()
	if err == nil {
		t.Fatal("the run was not interrupted")
	}

	h, _ := newClusterHarness(t, ctx, data.AdminOptions{AdminURL: env.AdminURL(), ServiceURL: env.ServiceURL(), Cluster: cluster}, 160, 48)
	h.patience, h.streamWait = 30*time.Second, 20*time.Second
	h.command("replay " + dlq + " " + sub)
	h.keys("enter")
	screen := strings.Join(strings.Fields(h.plain()), " ")
	if !strings.Contains(screen, "Resuming run letterbox-replay-") || !strings.Contains(screen, "already moved") {
		t.Fatalf("the question does not say the run is resumed:\n%s", h.plain())
	}
	h.keys("y")
	brokertest.WaitFor(t, 30*time.Second, "an empty DLQ", func() bool {
		st, err := env.Admin().Stats(ctx, dlq)
		return err == nil && st.Subscriptions[sub].MsgBacklog == 0
	})
}
