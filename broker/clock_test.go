package broker_test

import (
	"time"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// newFakeClock is a broker clock (Config.Clock, set with its Use) that moves only when a test
// moves it, so that rates and intervals are measured in its time, not the machine's; it starts
// at a fixed time, as the rate tests want.
func newFakeClock() *brokertest.Clock { return brokertest.NewClock(time.Unix(1_800_000_000, 0)) }
