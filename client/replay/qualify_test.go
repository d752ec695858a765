package replay

import "testing"

// TestQualifyByNamingRules checks that a replay reads names by client/naming's rules: short
// names expanded as the clients expand them, a name that is no topic name left as typed (it
// was expanded into a V1 name the broker refuses), and a -partition- suffix taken off only
// where it is a partition index.
func TestQualifyByNamingRules(t *testing.T) {
	for in, want := range map[string]string{
		"x":                           "persistent://public/default/x",
		"t/ns/x":                      "persistent://t/ns/x",
		"non-persistent://t/ns/x":     "non-persistent://t/ns/x",
		"ns/x":                        "ns/x",
		"persistent://public/default": "persistent://public/default",
	} {
		if got := qualify(in); got != want {
			t.Errorf("qualify(%q) = %q, want %q", in, got, want)
		}
	}
	known := []string{"orders-partition-01", "payments-partition-2"}
	for dlq, want := range map[string]string{
		"persistent://public/default/orders-partition-01-billing-DLQ": "persistent://public/default/orders-partition-01",
		"persistent://public/default/payments-billing-DLQ":            "persistent://public/default/payments",
	} {
		if got := derivedDestination(dlq, "billing", known); got != want {
			t.Errorf("derivedDestination(%q) = %q, want %q", dlq, got, want)
		}
	}
}
