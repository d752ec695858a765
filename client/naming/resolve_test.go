package naming

import (
	"errors"
	"slices"
	"testing"
)

func TestResolve(t *testing.T) {
	existing := []string{
		"persistent://public/default/orders",
		"persistent://public/demo/orders-billing-DLQ",
		"persistent://public/demo/payments",
		"persistent://acme/prod/payments",
		"persistent://acme/prod/shipments-partition-0",
		"persistent://acme/prod/shipments",
		"non-persistent://public/default/ticks",
	}
	for _, c := range []struct{ typed, want string }{
		// A short name is the one topic of that local name, whatever its namespace: the
		// command line and the TUI find public/demo's DLQ, where the clients' rule would
		// look in public/default.
		{"orders-billing-DLQ", "persistent://public/demo/orders-billing-DLQ"},
		{" orders ", "persistent://public/default/orders"},
		{"demo/orders-billing-DLQ", "persistent://public/demo/orders-billing-DLQ"},
		{"public/demo/payments", "persistent://public/demo/payments"},
		{"persistent://acme/prod/payments", "persistent://acme/prod/payments"},
		{"shipments", "persistent://acme/prod/shipments"},
		{"shipments-partition-0", "persistent://acme/prod/shipments-partition-0"},
		{"ticks", "non-persistent://public/default/ticks"},
	} {
		got, err := Resolve(c.typed, existing)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.typed, got, err, c.want)
		}
	}

	var ne *NameError
	_, err := Resolve("payments", existing)
	if !errors.As(err, &ne) || !ne.Ambiguous || !slices.Equal(ne.Candidates, []string{"persistent://acme/prod/payments", "persistent://public/demo/payments"}) {
		t.Fatalf("ambiguous: %v", err)
	}
	if want := `"payments" names 2 topics: acme/prod/payments, public/demo/payments`; err.Error() != want {
		t.Errorf("%q, want %q", err, want)
	}
	_, err = Resolve("ordrs", existing)
	if !errors.As(err, &ne) || ne.Ambiguous || len(ne.Candidates) == 0 || ne.Candidates[0] != "persistent://public/default/orders" {
		t.Errorf("near: %v", err)
	}
	// A qualified name is that topic or none, even when its local name exists elsewhere.
	if _, err := Resolve("public/default/payments", existing); !errors.As(err, &ne) || ne.Ambiguous {
		t.Errorf("qualified, missing: %v", err)
	}
	if _, err := Resolve("a b/c/d", existing); !errors.As(err, &ne) {
		t.Errorf("not a name: %v", err)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"dlq", "dlq", 0}, {"dql", "dlq", 1}, {"ordres", "orders", 1}, {"ordrs", "orders", 1},
		{"topcs", "topics", 1}, {"tpoics", "topics", 1}, {"x", "", 1}, {"", "abc", 3}, {"flwo", "flow", 1},
		{"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// A typo two edits or fewer from a topic's name finds it, as letters in order do (defect 12 of
// issue 31: "ordres" found nothing while "order" did).
func TestResolveNearTypos(t *testing.T) {
	existing := []string{"persistent://public/demo/orders", "persistent://public/demo/orders-billing-DLQ",
		"persistent://public/demo/payments"}
	for _, typed := range []string{"ordres", "ordrs", "odrers", "orderss"} {
		var ne *NameError
		_, err := Resolve(typed, existing)
		if !errors.As(err, &ne) || len(ne.Candidates) == 0 || ne.Candidates[0] != "persistent://public/demo/orders" {
			t.Errorf("Resolve(%q): %v, want orders first among the near names", typed, err)
		}
	}
}
