package broker

import (
	"fmt"
	"testing"
)

// TestSweepVisitsEveryTopicOnce checks the periodic passes' iterator: every open topic once,
// across the slices it yields the processor between, and nothing after the pass stops.
func TestSweepVisitsEveryTopicOnce(t *testing.T) {
	r := newTopicRegistry(nil)
	const n = 3*sweepSlice + 7
	for i := range n {
		name := fmt.Sprintf("persistent://public/default/t-%d", i)
		r.topics[name] = &topic{full: name}
	}
	seen := map[string]int{}
	for tp := range r.sweep() {
		seen[tp.full]++
	}
	if len(seen) != n {
		t.Fatalf("a sweep visited %d of %d topics", len(seen), n)
	}
	for name, k := range seen {
		if k != 1 {
			t.Fatalf("%s visited %d times", name, k)
		}
	}
	visited := 0
	for range r.sweep() {
		if visited++; visited == sweepSlice+1 {
			break
		}
	}
	if visited != sweepSlice+1 {
		t.Fatalf("a sweep stopped after %d topics, want %d", visited, sweepSlice+1)
	}
}
