package naming

import "testing"

// TestShortName: a name as the screens and the command line show it, without persistent://
// and without the namespace it is read in; a name that is no topic name is shown as typed.
func TestShortName(t *testing.T) {
	for _, c := range []struct{ full, ns, want string }{
		{"persistent://acme/orders/x", "acme/orders", "x"},
		{"persistent://acme/orders/x", "", "acme/orders/x"},
		{"persistent://public/default/x", DefaultNamespaceName, "x"},
		{"persistent://acme/orders/x", DefaultNamespaceName, "acme/orders/x"},
		{"non-persistent://acme/orders/x", "acme/orders", "non-persistent://acme/orders/x"},
		{"bad://acme/orders/x", "", "bad://acme/orders/x"},
		{"acme/b/c/d", DefaultNamespaceName, "acme/b/c/d"},
	} {
		if got := ShortName(c.full, c.ns); got != c.want {
			t.Errorf("ShortName(%q, %q) = %q, want %q", c.full, c.ns, got, c.want)
		}
	}
}
