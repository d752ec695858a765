package tui

import (
	"cmp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/pages/dlq"
	"github.com/letterbox-dev/letterbox/tui/pages/flow"
	"github.com/letterbox-dev/letterbox/tui/pages/replay"
)

// From the topic screen: f opens the selected subscription's flow, d its DLQ; on the DLQ
// topic, d opens its dead letters and f the flow it derives from.
func TestFlowTopicToFlowAndDeadLetters(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.command("topic public/demo/orders")
	h.keys("f")
	fp, ok := h.app.active().(*flow.Page)
	if !ok || fp.Flow() == nil || fp.Flow().Sub != "billing" {
		t.Fatalf("f did not open the billing flow: %T", h.app.active())
	}
	h.keys("d")
	if _, ok := h.app.active().(*dlq.Page); !ok {
		t.Fatalf("d on the flow did not open the dead letters: %T", h.app.active())
	}
	h.app.popToRoot()
	h.command("topic public/demo/orders-billing-DLQ")
	h.keys("f")
	if fp, ok := h.app.active().(*flow.Page); !ok || fp.Flow() == nil || fp.Flow().Topic != orders || fp.Flow().Sub != "billing" {
		t.Fatalf("f on the DLQ did not derive the flow")
	}
	h.keys("esc", "d")
	dp, ok := h.app.active().(*dlq.Page)
	if !ok || len(dp.Loaded()) != 4 {
		t.Fatalf("d on the DLQ topic: %T", h.app.active())
	}
	if d := dp.Loaded()[0]; d.Origin != orders || d.OriginID != "12:3:-1" || d.Reconsumes != 3 || d.Reason != "currency not supported" {
		t.Errorf("dead letter read as %+v", d)
	}
}

// A replay can be cancelled mid-run; q asks first while it runs; the run lands in the
// history, which the dead-letters screen then lists.
func TestFlowReplayCancelAndHistory(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	hold := make(chan struct{})
	defer close(hold)
	h.src.ReplayHold, h.src.ReplayHoldAfter = hold, 1
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("R", "enter")
	// From here commands run concurrently, as in the program: the engine blocks until
	// cancelled.
	a := newAsync(h)
	a.key("y")
	rp := h.app.active().(*replay.Page)
	a.pump(t, func() bool { return rp.Stage() == replay.Running && strings.Contains(h.plain(), "moved            1") })
	a.key("q")
	if h.app.quitting || !strings.Contains(h.plain(), "Quit and cancel it?") {
		t.Fatalf("q did not ask:\n%s", h.plain())
	}
	a.key("n")
	a.key("esc")
	// The summary, the re-read backlog and the history line come from separate commands.
	recorded := func() bool {
		h.src.Lock()
		defer h.src.Unlock()
		return len(h.src.Replays) == 2
	}
	a.pump(t, func() bool {
		return rp.Stage() == replay.Done && strings.Contains(h.plain(), "now: DLQ backlog") && recorded()
	})
	if s := h.plain(); !strings.Contains(s, "Replay cancelled") || !strings.Contains(s, "moved 1") {
		t.Errorf("summary:\n%s", s)
	}
	h.src.Lock()
	hist := h.src.Replays
	h.src.Unlock()
	if len(hist) != 2 || hist[1].Result != "cancelled" || hist[1].By != "tui" || hist[1].Moved != 1 || hist[1].Selection != "all" {
		t.Fatalf("history: %+v", hist)
	}
	h.keys("esc")
	h.send(common.RefreshMsg{Forced: true})
	if s := h.plain(); !strings.Contains(s, "cancelled  moved 1") && !strings.Contains(s, "replay    cancelled  moved 1") {
		t.Errorf("the dead letters screen does not list the run:\n%s", s)
	}
}

// async runs commands on goroutines and feeds their messages back in order of arrival.
type async struct {
	h    *harness
	msgs chan tea.Msg
	// patience is how long pump waits for its condition (default 10 s).
	patience time.Duration
}

func newAsync(h *harness) *async { return &async{h: h, msgs: make(chan tea.Msg, 64)} }

func (a *async) key(k string) {
	_, cmd := a.h.app.Update(keyMsg(k))
	a.go_(cmd)
}

func (a *async) go_(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				a.go_(c)
			}
			return
		}
		if msg != nil {
			a.msgs <- msg
		}
	}()
}

func (a *async) pump(t *testing.T, done func() bool) {
	t.Helper()
	deadline := time.After(cmp.Or(a.patience, 10*time.Second))
	for !done() {
		select {
		case msg := <-a.msgs:
			_, cmd := a.h.app.Update(msg)
			a.go_(cmd)
		case <-deadline:
			t.Fatalf("timed out; screen:\n%s", a.h.plain())
		}
	}
}
