package naming

import (
	"slices"
	"testing"
)

// OriginNames keeps only the names a letter topic's name may derive from, and FromName judges
// every name of the listing with it as with the whole listing.
func TestOriginNames(t *testing.T) {
	listing := []string{
		"persistent://t/ns/orders",
		"persistent://t/ns/orders-billing-DLQ",
		"persistent://t/ns/orders-eu",
		"persistent://t/ns/orders-eu-billing-RETRY",
		"persistent://t/ns/payments-partition-0",
		"persistent://t/ns/payments-partition-1",
		"persistent://t/ns/payments-sub-a-DLQ-partition-0",
		"persistent://t/ns/lonely-sub-DLQ",
		"persistent://t/other/orders-billing-DLQ",
		"persistent://t/ns/unrelated",
		"persistent://t/ns/unrelated-too",
	}
	origins := OriginNames(slices.Values(listing))
	want := Names{"persistent://t/ns/orders": {}, "persistent://t/ns/orders-eu": {}, "persistent://t/ns/payments": {}}
	if len(origins) != len(want) {
		t.Errorf("OriginNames = %v, want %v", origins, want)
	}
	for n := range want {
		if _, ok := origins[n]; !ok {
			t.Errorf("OriginNames lacks %s: %v", n, origins)
		}
	}
	all := NewNames(listing)
	for _, topic := range listing {
		k1, o1, s1, n1 := all.FromName(topic)
		k2, o2, s2, n2 := origins.FromName(topic)
		if k1 != k2 || o1 != o2 || s1 != s2 || n1 != n2 {
			t.Errorf("%s: with every name %v %q %q %v, with the origins %v %q %q %v", topic, k1, o1, s1, n1, k2, o2, s2, n2)
		}
	}
}
