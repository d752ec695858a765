package admin

import (
	"net/url"
	"testing"
)

// TestTrustedHostForms: each way of naming a host of the cluster, and what it lets credentials
// follow a redirect to.
func TestTrustedHostForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern string
		trusts  []string
		refuses []string
	}{
		{"broker-1", []string{"http://broker-1:8080/x", "https://BROKER-1.:8443/x"}, []string{"http://broker-10:8080/x", "http://a.broker-1:8080/x"}},
		{"broker-1:8080", []string{"http://broker-1:8080/x"}, []string{"http://broker-1:8081/x", "http://broker-1/x"}},
		{"*.pulsar.svc", []string{"http://b-0.pulsar.svc:8080/x", "http://a.b.pulsar.svc/x"}, []string{"http://pulsar.svc/x", "http://evilpulsar.svc/x"}},
		{"http://b-2.example.com:8080", []string{"http://b-2.example.com:8080/x"}, []string{"https://b-2.example.com:8443/x"}},
		{"https://b-2.example.com", []string{"https://b-2.example.com/x", "http://b-2.example.com:443/x"}, []string{"http://b-2.example.com/x"}},
		{"::1", []string{"http://[::1]:8080/x"}, []string{"http://[::2]:8080/x"}},
		{"[::1]:8080", []string{"http://[::1]:8080/x"}, []string{"http://[::1]:8081/x"}},
	} {
		p, err := parseHostPattern(tc.pattern)
		if err != nil {
			t.Errorf("%q: %v", tc.pattern, err)
			continue
		}
		var th trustedHosts
		th.add(p)
		for _, s := range tc.trusts {
			if u, _ := url.Parse(s); !th.trusts(u) {
				t.Errorf("%q does not trust %s", tc.pattern, s)
			}
		}
		for _, s := range tc.refuses {
			if u, _ := url.Parse(s); th.trusts(u) {
				t.Errorf("%q trusts %s", tc.pattern, s)
			}
		}
	}
	for _, bad := range []string{"", "*", "*.", "a/b", "user@host", "host:http", "host:0", "host:70000", "http://", "a*b"} {
		if _, err := parseHostPattern(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
