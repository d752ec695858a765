package tui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/pages/dlq"
)

// The letters a real broker holds, as the screens count them: a DLQ the official Go client's
// dead-letter router filled in batches.

const lettersDLQ = "persistent://public/default/orders-billing-DLQ"

// lettersApp fills lettersDLQ through the official router with n letters whose reason is
// reason(i), and opens the app on it with a clock the test moves.
func lettersApp(t *testing.T, n int, reason func(i int) string, mods ...func(*broker.Config)) (*async, *movingClock, *brokertest.Env) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t, mods...)
	env.RouteDeadLetters(t, brokertest.Route{Origin: "persistent://public/default/orders", Subscription: "billing",
		DLQ: lettersDLQ, InitialSubscription: "billing-keep", N: n, Message: func(i int) *pulsar.ProducerMessage {
			return &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, `{"order":%d}`, i), Key: fmt.Sprintf("k%d", i),
				Properties: map[string]string{"reason": reason(i)}}
		}})
	src, err := data.NewAdmin(data.AdminOptions{AdminURL: env.AdminURL, ServiceURL: env.ServiceURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	clk := &movingClock{t: time.Now()}
	app, err := New(context.Background(), Options{Source: src, ThemesDir: t.TempDir(), Clock: clk,
		Getenv: func(string) string { return "" }, Refresh: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, app: app}
	h.send(tea.WindowSizeMsg{Width: 200, Height: 50})
	a := newAsync(h)
	a.patience = time.Minute
	a.go_(app.Init())
	return a, clk, env
}

// refresh is the refresh period going by on the app's clock, without a key.
func (a *async) refresh(clk *movingClock) {
	clk.add(2 * time.Second)
	_, cmd := a.h.app.Update(refreshTickMsg{})
	a.go_(cmd)
}

// line runs one palette line.
func (a *async) line(s string) {
	a.key(":")
	for _, r := range s {
		_, cmd := a.h.app.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		a.go_(cmd)
	}
	a.key("enter")
}

// topicsRow is the topics screen's row of the DLQ.
func topicsRow(screen string) string {
	for l := range strings.Lines(screen) {
		if strings.Contains(l, "orders-billing-DLQ") {
			return l
		}
	}
	return ""
}

// A batched DLQ of 12,000 letters: the topics screen, the header and the counts give 12,000;
// after 1,000 discarded and 5,000 replayed (by filter, elsewhere) the next refresh gives the
// 6,000 left everywhere, without a key, the others gone from the counts and the list; i shows
// them again, marked; a purge of 10 letters takes exactly 10.
func TestLettersOfABatchedDLQ(t *testing.T) {
	const n = 12_000
	a, clk, env := lettersApp(t, n, func(i int) string {
		switch {
		case i%12 == 0:
			return "fraud"
		case i%12 <= 5:
			return "timeout"
		}
		return "declined"
	})
	h := a.h
	if st, err := env.Admin.Stats(context.Background(), lettersDLQ); err != nil || st.Subscriptions["billing-keep"].MsgBacklog*10 >= n {
		t.Fatalf("the router did not batch: %+v, %v", st.Subscriptions["billing-keep"], err)
	}
	a.pump(t, func() bool { return strings.Contains(topicsRow(h.plain()), " 12,000 ") })

	a.line("dlq " + lettersDLQ)
	a.pump(t, func() bool { return strings.Contains(h.plain(), "via billing-keep · 12,000 letters") })
	a.key("c")
	a.pump(t, func() bool { return strings.Contains(h.plain(), "counts of 12,000 letters") })

	// Elsewhere: a discard by filter, a replay by filter.
	ctx := brokertest.Ctx(t, 2*time.Minute)
	cl := env.Client(t)
	for _, o := range []dlqops.ReplayOptions{
		{Discard: true, Selection: dlqops.Selection{Filters: []dlqops.Filter{mustFilter(t, "property.reason=fraud")}}},
		{Selection: dlqops.Selection{Filters: []dlqops.Filter{mustFilter(t, "property.reason=timeout")}}},
	} {
		o.DLQ, o.Subscription, o.StateDir, o.Admin = lettersDLQ, "billing-keep", t.TempDir(), env.Admin
		sum, err := dlqops.Run(ctx, cl, o, nil)
		if err != nil || !sum.OK() || sum.Discarded+sum.Moved == 0 {
			t.Fatalf("%+v: %v", sum, err)
		}
	}
	a.refresh(clk)
	a.pump(t, func() bool {
		s := h.plain()
		return strings.Contains(s, "via billing-keep · 6,000 letters") && strings.Contains(s, "counts of 6,000 letters")
	})
	if s := h.plain(); strings.Contains(s, "fraud") || strings.Contains(s, "timeout") {
		t.Errorf("the counts still have the letters that went:\n%s", s)
	}
	a.key("c") // the letters
	a.pump(t, func() bool {
		return strings.Contains(h.plain(), "all 6,000 letters") && strings.Contains(h.plain(), "declined")
	})
	if s := h.plain(); strings.Contains(s, " fraud") || strings.Contains(s, " timeout") || !strings.Contains(s, "declined") {
		t.Errorf("the list shows letters that went:\n%s", s)
	}

	// i: the acknowledged ones again, marked.
	a.key("i")
	a.pump(t, func() bool {
		s := h.plain()
		return strings.Contains(s, "acknowledged shown") && regexp.MustCompile(`(?m)^✓ .* fraud`).MatchString(s)
	})
	a.key("i")
	a.pump(t, func() bool {
		return !strings.Contains(h.plain(), "acknowledged shown") && strings.Contains(h.plain(), "letters 1–")
	})

	// P 10: exactly ten letters, batch members one each.
	a.key("P")
	for _, k := range []string{"1", "0", "enter", "y"} {
		a.key(k)
	}
	a.pump(t, func() bool { return strings.Contains(h.plain(), "skipped the first 10 letters of billing-keep") })
	a.refresh(clk)
	a.pump(t, func() bool { return strings.Contains(h.plain(), "via billing-keep · 5,990 letters") })
	st, err := env.Admin.Stats(ctx, lettersDLQ)
	if err != nil || *st.Subscriptions["billing-keep"].MsgBacklogMessages != 5990 {
		t.Errorf("the broker holds %v letters after the purge of 10 of 6,000 (%v)", st.Subscriptions["billing-keep"].MsgBacklogMessages, err)
	}

	// The topics screen, at its next refresh.
	h.app.popToRoot()
	a.refresh(clk)
	a.pump(t, func() bool { return strings.Contains(topicsRow(h.plain()), " 5,990 ") })
	if _, ok := h.app.active().(*dlq.Page); ok {
		t.Fatal("still on the dead letters")
	}
}

// Against a broker that counts entries only (upstream, as --compat upstream answers, with
// upstream's default of no batch-index acknowledgements), the screens say "≈ N entries" until a
// count has read the letters, then the exact number.
func TestLettersUpstream(t *testing.T) {
	const n = 2_000
	a, _, env := lettersApp(t, n, func(int) string { return "timeout" }, func(c *broker.Config) {
		c.CompatUpstream, c.AcknowledgmentAtBatchIndexLevelEnabled = true, false
	})
	h := a.h
	st, err := env.Admin.Stats(context.Background(), lettersDLQ)
	if err != nil {
		t.Fatal(err)
	}
	entries := st.Subscriptions["billing-keep"].MsgBacklog
	a.pump(t, func() bool { return strings.Contains(topicsRow(h.plain()), fmt.Sprintf("≈%d ent", entries)) })
	a.line("dlq " + lettersDLQ)
	a.pump(t, func() bool {
		return strings.Contains(h.plain(), fmt.Sprintf("via billing-keep · ≈ %d entries (the broker counts entries, not letters) · c counts the letters", entries))
	})
	a.key("c")
	a.pump(t, func() bool {
		return regexp.MustCompile(`via billing-keep · 2,000 letters \(counted [0-9:]+\)`).MatchString(h.plain())
	})
}

func mustFilter(t *testing.T, s string) dlqops.Filter {
	t.Helper()
	f, err := dlqops.ParseFilter(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// On a broker that acknowledges whole entries only (acknowledgmentAtBatchIndexLevelEnabled=
// false), discarding three letters of a batch from the TUI is refused before anything is
// acknowledged, and the header and the counts still give every letter.
func TestLettersPartOfABatchWithoutBatchIndexAcks(t *testing.T) {
	const n = 500
	a, clk, env := lettersApp(t, n, func(int) string { return "timeout" }, func(c *broker.Config) {
		c.AcknowledgmentAtBatchIndexLevelEnabled = false
	})
	h := a.h
	ctx := brokertest.Ctx(t, 2*time.Minute)

	// The keys of three letters of the largest batch.
	r, err := env.Client(t).CreateReader(ctx, client.ReaderOptions{Topic: lettersDLQ})
	if err != nil {
		t.Fatal(err)
	}
	byEntry := map[[2]int64][]string{}
	var largest [2]int64
	for range n {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		k := [2]int64{m.ID.Ledger, m.ID.Entry}
		byEntry[k] = append(byEntry[k], m.Key)
		if len(byEntry[k]) > len(byEntry[largest]) {
			largest = k
		}
	}
	r.Close()
	batch := byEntry[largest]
	if len(batch) < 4 {
		t.Fatalf("the largest batch holds %d letters", len(batch))
	}

	a.line("dlq " + lettersDLQ)
	a.pump(t, func() bool { return strings.Contains(h.plain(), "via billing-keep · 500 letters") })
	a.key("/")
	for _, r := range fmt.Sprintf("key=%s or key=%s or key=%s", batch[0], batch[1], batch[2]) {
		a.key(string(r))
	}
	a.key("enter")
	a.pump(t, func() bool { return strings.Contains(h.plain(), "· 3 of 500 letters (scan of") })
	a.key("X")
	a.pump(t, func() bool {
		return strings.Contains(h.plain(), "to discard       3") && strings.Contains(h.plain(), "enter runs it (asks first)")
	})
	a.key("enter")
	a.pump(t, func() bool { return strings.Contains(h.plain(), "Discard 3 dead letters of") })
	a.key("y")
	a.pump(t, func() bool {
		return strings.Contains(h.plain(), "refused, nothing acknowledged: the selection takes part of 1 batch")
	})

	st, err := env.Admin.Stats(ctx, lettersDLQ)
	if err != nil || *st.Subscriptions["billing-keep"].MsgBacklogMessages != n {
		t.Fatalf("the broker counts %v letters after the refusal (%v)", st.Subscriptions["billing-keep"].MsgBacklogMessages, err)
	}
	// The search, read again at the next refresh, still holds the three letters.
	a.key("esc")
	a.refresh(clk)
	a.pump(t, func() bool {
		s := h.plain()
		return strings.Contains(s, "via billing-keep · 500 letters") && strings.Contains(s, "· 3 of 500 letters (scan of")
	})
	for _, k := range batch[:3] {
		if s := h.plain(); !strings.Contains(s, " "+k+" ") {
			t.Errorf("letter %s is not listed after the refusal:\n%s", k, s)
		}
	}
}
