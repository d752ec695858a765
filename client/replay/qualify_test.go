package replay

import "testing"

// TestQualifyByNamingRules checks that a replay reads names by client/naming's rules: short
// names expanded as the clients expand them, a name that is no topic name left as typed (it
// was expanded into a V1 name the broker refuses), a -partition- suffix taken off only where it
// is a partition index, and a DLQ partition's name derived as its topic's.
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
		"persistent://public/default/orders-partition-01-billing-DLQ":  "persistent://public/default/orders-partition-01",
		"persistent://public/default/payments-billing-DLQ":             "persistent://public/default/payments",
		"persistent://public/default/payments-billing-DLQ-partition-1": "persistent://public/default/payments",
		"persistent://public/default/payments-billing-RETRY":           "",
		"persistent://public/default/refunds-billing-DLQ":              "",
	} {
		if got := derivedDestination(dlq, "billing", known); got != want {
			t.Errorf("derivedDestination(%q) = %q, want %q", dlq, got, want)
		}
	}
	for dlq, want := range map[string]string{
		"orders-billing-DLQ":             "persistent://public/default/orders",
		"orders-billing-DLQ-partition-0": "persistent://public/default/orders",
		"orders-audit-DLQ":               "",
	} {
		if got := derivedDestination(dlq, "billing", nil); got != want {
			t.Errorf("derivedDestination(%q, no known topics) = %q, want %q", dlq, got, want)
		}
	}
}
