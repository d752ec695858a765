package tui

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestReadOnlyChangesNothing: with the TUI read-only, every action key and command on a real
// broker answers with the reason — discard and replay after their preview, whose counts a
// read-only session keeps — and afterwards no subscription was created and every backlog and
// message counter is as it was.
func TestReadOnlyChangesNothing(t *testing.T) {
	env := pulsartest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	cl := brokertest.NewClient(t, env.ServiceURL())
	const dlq = "persistent://public/default/orders-billing-DLQ"
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: "billing-audit",
		TopicPurpose: client.TopicPurposeDeadLetter, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := p.Send(ctx, &client.Message{Key: "k", Payload: []byte{byte('a' + i)},
			Properties: map[string]string{client.PropertyRealTopic: "persistent://public/default/orders", "reason": "r"}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	type snap struct {
		subs     []string
		backlogs map[string]int64
		in       int64
	}
	read := func() snap {
		st, err := env.Admin().Stats(ctx, dlq)
		if err != nil {
			t.Fatal(err)
		}
		s := snap{backlogs: map[string]int64{}, in: st.MsgInCounter}
		for name, ss := range st.Subscriptions {
			if ss.IsDurable {
				s.subs = append(s.subs, name)
				s.backlogs[name] = ss.MsgBacklog
			}
		}
		slices.Sort(s.subs)
		return s
	}
	before := read()

	src, err := data.NewAdmin(data.AdminOptions{AdminURL: env.AdminURL(), ServiceURL: env.ServiceURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	app, err := New(ctx, Options{Source: src, ThemesDir: t.TempDir(), Clock: common.FixedClock{T: time.Now()},
		Getenv: func(string) string { return "" }, ReadOnly: "read-only (--readonly)"})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, app: app, patience: 30 * time.Second, streamWait: 20 * time.Second}
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.run(app.Init())
	if !strings.Contains(h.plain(), "READ-ONLY") {
		t.Errorf("the header does not say read-only:\n%s", h.plain())
	}
	h.command("dlq " + dlq)
	h.keys("space") // a letter marked: discard would have a selection
	for _, k := range []string{"P", "E", "A", "T"} {
		h.keys(k)
		if screen := h.plain(); !strings.Contains(screen, "read-only (--readonly):") || !strings.Contains(screen, "Dead letters") {
			t.Errorf("key %s: no read-only reason on the dead letters screen:\n%s", k, screen)
		}
		h.send(common.StatusMsg(""))
	}
	// Discard and replay show their preview, its exact count included; enter, which would act,
	// answers with the reason.
	previewThenRefuse := func(what string, want string) {
		t.Helper()
		screen := h.plain()
		if !strings.Contains(screen, "Preview") || !strings.Contains(screen, want) {
			t.Errorf("%s: no preview:\n%s", what, screen)
		}
		h.keys("enter")
		if screen := h.plain(); !strings.Contains(screen, "read-only (--readonly):") {
			t.Errorf("%s: enter on the preview gives no read-only reason:\n%s", what, screen)
		}
		h.send(common.StatusMsg(""))
		h.keys("esc")
	}
	h.keys("X")
	previewThenRefuse("X", "to discard       1")
	h.keys("R")
	previewThenRefuse("R", "would move       1") // the letter marked
	h.command("replay " + dlq + " billing-audit")
	previewThenRefuse(":replay", "would move       5")
	h.command("produce " + dlq)
	if screen := h.plain(); !strings.Contains(screen, "read-only (--readonly):") {
		t.Errorf(":produce: no read-only reason:\n%s", screen)
	}
	after := read()
	if !slices.Equal(after.subs, before.subs) || !maps.Equal(after.backlogs, before.backlogs) || after.in != before.in {
		t.Errorf("read-only changed the DLQ: %+v, was %+v", after, before)
	}
}
