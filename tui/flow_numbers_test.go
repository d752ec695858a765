package tui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/pages/flow"
	"github.com/letterbox-dev/letterbox/tui/pages/replay"
)

// TestFlowNumbersAreTrue runs a fixed workload through retry into the DLQ on a real broker
// and reads exactly its counts from the flow screen: N messages published; every 5th fails
// for good (two retry hops, then the DLQ with RECONSUMETIMES 3), every 5th+1 fails once and
// succeeds on its retry, the rest succeed at once.
func TestFlowNumbersAreTrue(t *testing.T) {
	const (
		n         = 50
		permanent = n / 5
		transient = n / 5
		maxDeliv  = 2
	)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := brokertest.Start(t)
	b, w := env.Broker, env.Web
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cl, err := client.New(client.Options{ServiceURL: b.ServiceURL(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	const topic = "persistent://public/default/numbers"
	cons, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "work", Type: client.Shared,
		RetryEnable: true, DLQ: &client.DLQPolicy{MaxDeliveries: maxDeliv, InitialSubscriptionName: "work-audit"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cons.Close() })
	prod, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := prod.Send(ctx, &client.Message{Key: fmt.Sprint(i), Payload: fmt.Appendf(nil, `{"n":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()
	// Deliveries: n first ones, one retry per transient, two per permanent.
	for range n + transient + maxDeliv*permanent {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var i int
		fmt.Sscan(m.Key, &i)
		_, retried := m.Properties[client.PropertyReconsumeTimes]
		switch {
		case i%5 == 0:
			err = cons.ReconsumeLater(ctx, m, 0, map[string]string{"reason": "permanent failure"})
		case i%5 == 1 && !retried:
			err = cons.ReconsumeLater(ctx, m, 0, map[string]string{"reason": "transient failure"})
		default:
			err = cons.Ack(m)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := cons.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}

	h, src := newClusterHarness(t, ctx, data.AdminOptions{AdminURL: w.URL(), ServiceURL: b.ServiceURL()}, 160, 48)
	var f *data.Flow
	// Acks and the DLQ's receipts settle within moments; poll the screen until backlogs do.
	deadline := time.Now().Add(20 * time.Second)
	for {
		h.app.popToRoot()
		h.command("flow " + topic + " work")
		fp, ok := h.app.active().(*flow.Page)
		if !ok {
			t.Fatalf("flow page: %T", h.app.active())
		}
		f = fp.Flow()
		if f != nil && f.Main.SubBacklog == 0 && f.Retry.SubBacklog == 0 && f.DLQ.SubBacklog == permanent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backlogs did not settle: %+v\n%s", f, h.plain())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := f.Main.Stats().InCounter; got != n {
		t.Errorf("main published %d, want %d", got, n)
	}
	if got, want := f.Retry.Stats().InCounter, int64(transient+maxDeliv*permanent); got != want {
		t.Errorf("retry published %d, want %d", got, want)
	}
	if got := f.DLQ.Stats().InCounter; got != permanent {
		t.Errorf("DLQ published %d, want %d", got, permanent)
	}
	if f.DLQ.Sub != "work-audit" || f.DLQPeeked != permanent || len(f.Latest) != permanent {
		t.Errorf("DLQ read through %q, %d peeked, %d latest", f.DLQ.Sub, f.DLQPeeked, len(f.Latest))
	}
	if len(f.Histogram) != 1 || f.Histogram[0] != (data.Bucket{N: maxDeliv + 1, Dead: permanent}) {
		t.Errorf("histogram %+v, want %d dead letters at %d", f.Histogram, permanent, maxDeliv+1)
	}
	for _, d := range f.Latest {
		if d.Reason != "permanent failure" || d.Origin != topic || d.OriginID == "" || d.Reconsumes != maxDeliv+1 {
			t.Errorf("dead letter %+v", d)
		}
	}
	// And the screen says so.
	s := h.plain()
	for _, want := range []string{"50 published", fmt.Sprintf("%d published", transient+maxDeliv*permanent),
		fmt.Sprintf("backlog %d on work-audit", permanent), fmt.Sprintf("%d DLQ messages peeked", permanent),
		fmt.Sprintf("%d DLQ", permanent), "permanent failure"} {
		if !strings.Contains(s, want) {
			t.Errorf("the flow screen lacks %q:\n%s", want, s)
		}
	}

	// Put them back through the replay screen: preview, confirm, run, re-read, history.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	h.app.popToRoot()
	h.command("replay " + naming.DLQName(data.ParseTopic(topic).String(), "work") + " work-audit")
	a := newAsync(h)
	rp := h.app.active().(*replay.Page)
	a.go_(rp.Init())
	a.pump(t, func() bool { return rp.Stage() == replay.Previewed })
	a.key("enter")
	a.key("y")
	// The summary, the re-read and the history line come from separate commands.
	recorded := func() bool {
		hist, err := src.History(ctx, naming.DLQName(data.ParseTopic(topic).String(), "work"), 5)
		return err == nil && len(hist) > 0
	}
	a.pump(t, func() bool {
		s := h.plain()
		return rp.Stage() == replay.Done && strings.Contains(s, "now: DLQ backlog") &&
			strings.Contains(s, "since the run started") && recorded()
	})
	s = h.plain()
	for _, want := range []string{"Replay complete in", fmt.Sprintf("moved %d · skipped 0 · failed 0", permanent),
		"now: DLQ backlog on work-audit: 0 letters (was 10)", fmt.Sprintf("(+%d since the run started)", permanent)} {
		if !strings.Contains(s, want) {
			t.Errorf("the replay screen lacks %q:\n%s", want, s)
		}
	}
	hist, err := src.History(ctx, naming.DLQName(data.ParseTopic(topic).String(), "work"), 5)
	if err != nil || len(hist) != 1 || hist[0].Moved != permanent || hist[0].Result != "complete" || hist[0].Selection != "all" {
		t.Errorf("history %+v, %v", hist, err)
	}
}
