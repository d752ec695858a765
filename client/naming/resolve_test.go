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
