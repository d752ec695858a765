package oauth2

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Redirects of the issuer's answers. The token request carries the client secret in its form,
// and net/http repeats a POST's body on a 307 or 308 to wherever the Location names: a token
// endpoint that redirects to another host would hand that host the secret. So the token
// request follows a redirect only on its own host (scheme, host and port), and no request to
// the issuer follows one from https to http, which would hand the secret, or a discovery
// document naming the token endpoint, to whoever is on the path.

// maxRedirects is net/http's own limit.
const maxRedirects = 10

// checkRedirect is the issuer's client's CheckRedirect: req is the next request, via the ones
// before it, the first being what the caller sent.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	prev, first := via[len(via)-1], via[0]
	switch {
	case prev.URL.Scheme == "https" && req.URL.Scheme != "https":
		return fmt.Errorf("redirected from %s to %s: not followed from https to http", prev.URL.Redacted(), req.URL.Redacted())
	case first.Method == http.MethodPost && !sameOrigin(first, req):
		return fmt.Errorf("%w: the token request to %s was redirected to %s", errRedirectElsewhere, first.URL.Redacted(), req.URL.Redacted())
	}
	return nil
}

// errRedirectElsewhere is why a token request redirected to another host was not followed.
var errRedirectElsewhere = errors.New("the client secret is sent to the token endpoint's host only")

// sameOrigin reports whether b goes to a's scheme, host and port.
func sameOrigin(a, b *http.Request) bool {
	return a.URL.Scheme == b.URL.Scheme && strings.EqualFold(a.URL.Hostname(), b.URL.Hostname()) && port(a) == port(b)
}

func port(r *http.Request) string {
	if p := r.URL.Port(); p != "" {
		return p
	}
	if r.URL.Scheme == "https" {
		return "443"
	}
	return "80"
}
