package main

import (
	"strings"
	"testing"
	"time"
)

// TestHeadlineVerdicts checks that the headline's ratios are the median of each round's
// product over the ceiling beside it: a lucky third round, which the best round of each side
// would have let decide (200 / 210, met), does not.
func TestHeadlineVerdicts(t *testing.T) {
	t.Parallel()
	res := func(received int64) *result {
		return &result{window: time.Second, sent: received, received: received, cpu: time.Duration(received) * time.Microsecond}
	}
	r := &report{rounds: 3, window: time.Second, shortWindow: time.Second, starts: []time.Duration{time.Millisecond},
		head: []headRound{
			{broker: res(100), ceiling: res(140), durable: res(70)},
			{broker: res(100), ceiling: res(140), durable: nil}, // a durable round not measured
			{broker: res(200), ceiling: res(210), durable: res(200)},
		}}
	md := r.markdown()
	for _, want := range []string{
		"| throughput, letterbox broker (median of 3 rounds) | 100 msg/s; by round 100, 100, 200 (spread 100 % of the median) |",
		"| letterbox / ceiling (median of 3 rounds' ratios) | 71.4 %; by round 71.4 %, 71.4 %, 95.2 % (spread 33 % of the median) | ≥ 80 % | not met |",
		// Two durable rounds: the mean of 50 % and 95.2 %.
		"| letterbox --data / ceiling (median of 2 rounds' ratios) | 72.6 %; by round 50.0 %, 95.2 % (spread 62 % of the median) | ≥ 65 % | met |",
		"| broker CPU per message (median of 3 rounds) | 1.00 µs;",
		"| letterbox: producer + consumer (headline, median of 3 rounds) | 100 | 100 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
