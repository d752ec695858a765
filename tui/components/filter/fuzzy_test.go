package filter

import (
	"testing"

	_ "github.com/letterbox-dev/letterbox/tui/tuitest" // the -update flag of `go test ./tui/...`
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		ok   bool
	}{
		{"", "x", true}, {"ord", "orders", true}, {"odlq", "orders-billing-DLQ", true},
		{"DLQ", "orders-billing-dlq", true}, {"xyz", "orders", false}, {"sro", "orders", false},
	} {
		if _, ok := Match(tc.p, tc.s); ok != tc.ok {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.p, tc.s, ok, tc.ok)
		}
	}
	a, _ := Match("ord", "orders")
	b, _ := Match("ord", "o-r-d")
	if a <= b {
		t.Errorf("contiguous %d should beat scattered %d", a, b)
	}
}
