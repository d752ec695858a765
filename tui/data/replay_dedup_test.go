package data

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// TestReplayDeduplicatedIsExactlyOnce: in a namespace that deduplicates, a replay from the TUI
// is exactly once, as the command line's is (both prepare it with client/dlqops, which reads
// the DLQ's deduplication status); the TUI's own preparation left deduplication off.
func TestReplayDeduplicatedIsExactlyOnce(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	b := pulsartest.Start(t)
	a, err := NewAdmin(AdminOptions{AdminURL: b.AdminURL(), ServiceURL: b.ServiceURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.Admin().SetDeduplication(ctx, "public/default", true); err != nil {
		t.Fatal(err)
	}
	const dlq, origin = "persistent://public/default/orders-app-DLQ", "persistent://public/default/orders"
	cl, err := client.New(client.Options{ServiceURL: b.ServiceURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: "app-dlq", DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := p.Send(ctx, &client.Message{Payload: fmt.Appendf(nil, "m%d", i),
			Properties: map[string]string{client.PropertyRealTopic: origin}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	events := make(chan ReplayEvent, 16)
	go func() {
		for range events {
		}
	}()
	sum, err := a.Replay(ctx, ReplayRequest{DLQ: dlq, Subscription: "app-dlq"}, events)
	if err != nil || !sum.OK() || sum.Moved != 3 {
		t.Fatalf("replay: %+v, %v", sum, err)
	}
	if !sum.ExactlyOnce {
		t.Fatalf("a replay on a deduplicating broker is not exactly once: %+v", sum)
	}
}
