package broker_test

import (
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
)

// fakeClock is a broker clock (Config.Clock) that moves only when a test moves it, so that rates
// and intervals are measured in its time, not the machine's.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// withClock makes a test broker read c.
func withClock(c *fakeClock) func(*broker.Config) {
	return func(cfg *broker.Config) { cfg.Clock = c.Now }
}
