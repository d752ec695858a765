package brokertest

import (
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
)

// Clock is a broker clock (broker.Config.Clock) that moves only when the test moves it, so
// that rates, intervals and message ages are measured in its time rather than by waiting for
// the machine's. Message ages are measured against publish times, which the clients stamp with
// the machine's clock: a test of expiry starts its clock at time.Now and moves it past them.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads start until it is moved.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// AdvanceTo moves the clock forward to t; a t it has passed leaves it where it is, so that
// the broker never sees its time go back.
func (c *Clock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// Use makes a test broker read c: an option of StartBroker, Start and broker.New.
func (c *Clock) Use(cfg *broker.Config) { cfg.Clock = c.Now }
