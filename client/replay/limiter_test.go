package replay

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fakeClock advances only when the limiter sleeps, or when the test says. A run's reader
// sleeps on it while its completer reads it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func TestLimiter(t *testing.T) {
	ctx := context.Background()
	c := &fakeClock{now: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)}
	var l limiter
	l.init(100, c)
	start := c.now
	for range 101 {
		if err := l.wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// 101 sends at 100 a second: the first at once, the last one second later.
	if got := c.now.Sub(start); got != time.Second {
		t.Errorf("101 sends took %v, want 1s", got)
	}
	for _, d := range c.sleeps {
		if d != 10*time.Millisecond {
			t.Fatalf("slept %v between sends, want 10ms", d)
		}
	}
	// A pause is not saved up: after 5 s idle, sends are still 10 ms apart.
	c.now = c.now.Add(5 * time.Second)
	c.sleeps = nil
	for range 3 {
		l.wait(ctx)
	}
	if len(c.sleeps) != 2 || c.sleeps[0] != 10*time.Millisecond {
		t.Errorf("after a pause: sleeps %v, want the first send at once, then 10ms apart", c.sleeps)
	}
	// No rate: never sleeps.
	var free limiter
	free.init(0, c)
	c.sleeps = nil
	for range 1000 {
		free.wait(ctx)
	}
	if len(c.sleeps) != 0 {
		t.Errorf("without a rate: %d sleeps", len(c.sleeps))
	}
	// A cancelled context ends the wait.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.wait(cctx); err == nil {
		t.Error("a cancelled wait returned no error")
	}
}
