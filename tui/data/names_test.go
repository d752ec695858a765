package data_test

import (
	"testing"

	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestParseTopicUpstreamRules checks that the screens read names by client/naming's rules and
// keep a name that is no topic name whole, as typed, where the TUI's own parser split it.
func TestParseTopicUpstreamRules(t *testing.T) {
	for in, want := range map[string]string{
		"x":                            "persistent://public/default/x",
		"acme/orders/x":                "persistent://acme/orders/x",
		"non-persistent://acme/o/x":    "non-persistent://acme/o/x",
		"persistent://acme/c/orders/x": "persistent://acme/c/orders/x",
		"bad://acme/orders/x":          "persistent://public/default/bad://acme/orders/x",
		"acme/b/c/d":                   "persistent://public/default/acme/b/c/d",
		"bad tenant/orders/x":          "persistent://public/default/bad tenant/orders/x",
		"orders/x":                     "persistent://public/default/orders/x",
	} {
		if got := data.ParseTopic(in).String(); got != want {
			t.Errorf("ParseTopic(%q) = %s, want %s", in, got, want)
		}
	}
	if got := data.ParseTopic("persistent://acme/c/orders/x").NamespaceName(); got != "acme/c/orders" {
		t.Errorf("NS of a V1 name = %s, want acme/c/orders", got)
	}
}
