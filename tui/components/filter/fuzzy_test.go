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

// InOrder on folded strings says what Match says, for ASCII and other names alike.
func TestInOrderAgreesWithMatch(t *testing.T) {
	texts := []string{"orders", "orders-billing-DLQ", "o-r-d", "Bestellungen-Überfällig", "ÄÖÜ/äöü", "tenant/ns3/topic-01234", "ΣΊΣΥΦΟΣ-Dlq", ""}
	patterns := []string{"", "ord", "odlq", "DLQ", "xyz", "sro", "über", "ÜBER", "äö", "ns3/1234", "σίσ", "Σ", "-"}
	for _, s := range texts {
		for _, p := range patterns {
			_, want := Match(p, s)
			if got := InOrder(Fold(p), Fold(s)); got != want {
				t.Errorf("InOrder(Fold(%q), Fold(%q)) = %v, Match says %v", p, s, got, want)
			}
		}
	}
}
