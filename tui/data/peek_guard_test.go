package data

import (
	"context"
	"testing"
	"time"
)

// The broker, as upstream's, creates a subscription that a peek names and that does not
// exist. The TUI only reads: its Peek of a subscription that does not exist is an error and
// leaves the topic without that subscription, on a partitioned topic too.
func TestPeekNeverCreatesSubscription(t *testing.T) {
	b, a := startEmbedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "persistent://public/default/peek-guard"
	const parted = "persistent://public/default/peek-guard-parted"
	if err := b.Admin().CreateTopic(ctx, topic, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Admin().CreateTopic(ctx, parted, 2, nil); err != nil {
		t.Fatal(err)
	}
	for _, tp := range []string{topic, parted} {
		if _, err := a.Produce(ctx, tp, ProduceRequest{Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Peek(ctx, tp, "ghost", 1, 10); err == nil {
			t.Errorf("%s: peek of a subscription that does not exist: no error", tp)
		}
		d, err := a.TopicDetail(ctx, tp)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range d.Subscriptions {
			if s.Name == "ghost" {
				t.Errorf("%s: the TUI's peek created subscription %q", tp, s.Name)
			}
		}
	}
}
