package admin

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// The hosts of the cluster: the only ones a request's credentials may follow a redirect to.
// A broker redirects an admin call about a topic it does not own to the owner's web URL, a
// host the client was never told about; sending the token there blindly would hand it to
// whatever host a Location header names.

// hostPattern is one trusted host: an exact name, or with wildcard every name below it; any
// port when port is "".
type hostPattern struct {
	name     string
	wildcard bool
	port     string
}

// CheckTrustedHost reports whether s is a form TrustHost and Options.TrustedHosts accept, for
// configuration read long before a client is made.
func CheckTrustedHost(s string) error {
	_, err := parseHostPattern(s)
	return err
}

// parseHostPattern reads "host", "host:port", "[v6]:port", "*.domain[:port]", or a URL, whose
// host is taken with its scheme's default port when it names none (a lookup's httpUrl).
func parseHostPattern(s string) (hostPattern, error) {
	s = strings.TrimSpace(s)
	var host, port string
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return hostPattern{}, fmt.Errorf("admin: trusted host %q: not a URL with a host", s)
		}
		host, port = u.Hostname(), u.Port()
		if port == "" {
			port = defaultPort(u.Scheme)
		}
	} else {
		host = s
		// A bare IPv6 address has colons but no port; brackets or a single colon mean one.
		if strings.HasPrefix(s, "[") || strings.Count(s, ":") == 1 {
			h, p, err := net.SplitHostPort(s)
			if err != nil {
				host = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
			} else {
				host, port = h, p
			}
		}
	}
	p := hostPattern{name: canonicalHost(host), port: port}
	if rest, ok := strings.CutPrefix(p.name, "*."); ok {
		p.name, p.wildcard = rest, true
	}
	if p.name == "" || strings.ContainsAny(p.name, "/@?#* \t") {
		return hostPattern{}, fmt.Errorf("admin: trusted host %q: want host, host:port or *.domain", s)
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return hostPattern{}, fmt.Errorf("admin: trusted host %q: bad port", s)
		}
	}
	return p, nil
}

func (p hostPattern) matches(host, port string) bool {
	if p.port != "" && p.port != port {
		return false
	}
	if p.wildcard {
		return strings.HasSuffix(host, "."+p.name)
	}
	return host == p.name
}

// canonicalHost compares host names as DNS does: without case or a trailing dot.
func canonicalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// trustedHosts is the client's list, which TrustHost extends while requests read it.
type trustedHosts struct {
	mu       sync.RWMutex
	patterns []hostPattern
}

func (t *trustedHosts) add(p hostPattern) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, q := range t.patterns {
		if q == p {
			return
		}
	}
	t.patterns = append(t.patterns, p)
}

// trusts reports whether credentials may go to u's host.
func (t *trustedHosts) trusts(u *url.URL) bool {
	host, port := canonicalHost(u.Hostname()), u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, p := range t.patterns {
		if p.matches(host, port) {
			return true
		}
	}
	return false
}

// TrustHost adds a host of the cluster, to which credentials may follow a redirect: "host"
// (any port), "host:port", "*.domain" (every name below domain), or a URL such as a lookup's
// httpUrl or httpUrlTls (its host and port). Credentials still never follow a redirect from
// https to http. Safe for concurrent use with requests in flight.
func (c *Client) TrustHost(host string) error {
	p, err := parseHostPattern(host)
	if err != nil {
		return err
	}
	c.trusted.add(p)
	return nil
}

// answeredByCluster reports whether an answer that came from u may name hosts of the cluster:
// u is a trusted host, and over https unless the admin URL itself is http.
func (c *Client) answeredByCluster(u *url.URL) bool {
	return u != nil && c.trusted.trusts(u) && (c.base.Scheme != "https" || u.Scheme == "https")
}
