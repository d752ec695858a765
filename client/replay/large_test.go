package replay

import (
	"bytes"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Letters of a megabyte: what the run holds (prefetched by its consumer, or republished and
// not yet receipted) stays within sendBytes on each side, where sendWindow letters would be
// gigabytes, and every letter still moves.
func TestLargeLettersBounded(t *testing.T) {
	t.Parallel()
	const n, size = 150, 1 << 20
	e := newEnv(t, false)
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message {
		m := deadLetter(origin, i, nil)
		m.Payload = append(m.Payload, bytes.Repeat([]byte{' '}, size)...)
		return m
	})
	dispatched := func() int64 {
		st, err := e.b.TopicStats(dlq, broker.StatsOptions{})
		if err != nil {
			t.Error(err)
			return 0
		}
		return st.Subscriptions[dsub].MsgOutCounter
	}
	events := make(chan Event)
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := Run(brokertest.Ctx(t, 60*time.Second), e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Events: events})
		done <- result{sum, err}
	}()
	// Each event is a letter completed; the broker's count of what it dispatched to the run,
	// less those, is what the run holds or has on its way.
	var completed, most int64
	for range events {
		completed++
		most = max(most, dispatched()-completed)
	}
	r := <-done
	if r.err != nil || !r.sum.OK() || r.sum.Moved != n {
		t.Fatalf("summary %+v, %v; want all %d moved", r.sum, r.err, n)
	}
	limit := int64(2*sendBytes/size) + 16 // each side's bound, and a window granted at the edge
	t.Logf("at most %d letters of %d KiB held by the run at once (bound %d)", most, size>>10, limit)
	if most > limit {
		t.Fatalf("the run held up to %d letters of %d KiB at once, want at most %d", most, size>>10, limit)
	}
}
