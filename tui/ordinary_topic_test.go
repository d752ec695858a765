package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestOrdinaryTopicActionsRefused: on a topic the DLQ rule does not call a dead-letter or retry
// topic (an application's own), the dead letters screen's actions and :replay are refused, as
// on the command line, and its subscription keeps its backlog.
func TestOrdinaryTopicActionsRefused(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := pulsartest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	cl := brokertest.NewClient(t, env.ServiceURL())
	const topic, sub = "persistent://public/default/scratch", "worker"
	c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: sub})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: topic, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := p.Send(ctx, &client.Message{Key: "k", Payload: []byte(`{"job":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	h, _ := newClusterHarness(t, ctx, data.AdminOptions{AdminURL: env.AdminURL(), ServiceURL: env.ServiceURL()}, 160, 48)
	h.patience, h.streamWait = 30*time.Second, 20*time.Second
	const refused = "scratch is not a dead-letter or retry topic by the DLQ rule"
	h.command("dlq " + topic + " " + sub)
	h.keys("space") // a letter marked: discard would have a selection
	for _, k := range []string{"X", "R", "P", "E", "A"} {
		h.keys(k)
		if screen := h.plain(); !strings.Contains(screen, refused) {
			t.Errorf("key %s is not refused:\n%s", k, screen)
		}
		h.send(common.StatusMsg(""))
	}
	h.command("replay " + topic + " " + sub)
	if screen := h.plain(); !strings.Contains(screen, refused) {
		t.Errorf(":replay is not refused:\n%s", screen)
	}
	st, err := env.Admin().Stats(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if b := st.Subscriptions[sub].MsgBacklog; b != 3 || len(st.Subscriptions) != 1 {
		t.Errorf("backlog %d, %d subscriptions; want 3 and 1", b, len(st.Subscriptions))
	}
}
