package pulsartest_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/letterbox-dev/letterbox/pulsartest"
)

// TestNoGoroutineLeaks starts and stops 100 brokers, each asked something through its admin
// API and, one in ten (durable, with a namespace of their own), read through the binary
// protocol, and checks that no goroutine of theirs outlives them. Not
// parallel: the goroutines of tests running beside it would count.
func TestNoGoroutineLeaks(t *testing.T) {
	// What runs before (the testing package's own, paused parallel tests) is not this test's.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	quiet := pulsartest.Logger(slog.New(slog.DiscardHandler))
	for i := range 100 {
		opts := []pulsartest.Option{quiet}
		if i%10 == 0 {
			opts = append(opts, pulsartest.Dir(t.TempDir()), pulsartest.Namespace("acme/orders"))
		}
		b, err := pulsartest.New(opts...)
		if err != nil {
			t.Fatalf("broker %d: %v", i, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := b.Admin().Tenants(ctx); err != nil {
			t.Fatalf("broker %d: tenants: %v", i, err)
		}
		if i%10 == 0 {
			const topic = "persistent://acme/orders/events"
			if err := b.Admin().CreateTopic(ctx, topic, 0, nil); err != nil {
				t.Fatalf("broker %d: %v", i, err)
			}
			if msgs, err := b.Messages(ctx, topic); err != nil || len(msgs) != 0 {
				t.Fatalf("broker %d: messages of a new topic: %v, %v", i, msgs, err)
			}
		}
		cancel()
		if err := b.Close(); err != nil {
			t.Fatalf("broker %d: close: %v", i, err)
		}
	}
}
