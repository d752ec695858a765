package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Redirects. Upstream answers an admin call about a topic another broker owns with 307 to that
// broker's web URL. net/http would follow it but drops Authorization when the host changes, so
// every such call of a client with a token would end in 401; it would also follow any other
// host a Location names. So the client follows redirects itself: net/http's rules for methods
// and bodies, its limit of 10, and credentials only for the cluster's own hosts (trust.go).

// maxRedirects is net/http's limit too.
const maxRedirects = 10

// ErrTooManyRedirects is the error of a chain of redirects longer than 10.
var ErrTooManyRedirects = errors.New("admin: too many redirects")

// stopAtRedirect hands every redirect back to send, which decides whether to follow it.
func stopAtRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// hop is one request of a chain.
type hop struct {
	method string
	url    *url.URL
	body   []byte // nil: none
	// creds: whether Authorization goes with it. Once dropped it stays dropped: a host outside
	// the cluster must not be able to aim the caller's credentials at another path or method
	// of the cluster by redirecting back to it.
	creds bool
}

// exchange is the outcome of a chain: the final response, and why credentials were withheld
// from it ("" when they were not).
type exchange struct {
	resp     *http.Response
	withheld string
}

// send runs first and the redirects that follow it. auth is the Authorization value ("" none);
// header is set on every request.
func (c *Client) send(ctx context.Context, first hop, auth string, header http.Header) (exchange, error) {
	h := first
	withheld := ""
	for hops := 0; ; hops++ {
		var body io.Reader
		if h.body != nil {
			body = bytes.NewReader(h.body)
		}
		req, err := http.NewRequestWithContext(ctx, h.method, h.url.String(), body)
		if err != nil {
			return exchange{}, err
		}
		req.Header = header.Clone()
		if h.body == nil {
			req.Header.Del("Content-Type")
		}
		if h.creds && auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return exchange{}, err
		}
		next, ok, err := redirectOf(resp, h)
		if err != nil {
			resp.Body.Close()
			return exchange{}, err
		}
		if !ok {
			return exchange{resp: resp, withheld: withheld}, nil
		}
		// Drain what is left so the connection goes back to the pool.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if hops == maxRedirects {
			return exchange{}, fmt.Errorf("%w: stopped after %d; %s redirects again to %s",
				ErrTooManyRedirects, maxRedirects, h.url.Redacted(), next.url.Redacted())
		}
		if next.creds && auth != "" { // without credentials there is nothing to withhold
			switch {
			case h.url.Scheme == "https" && next.url.Scheme == "http":
				next.creds = false
				withheld = "credentials were not sent after a redirect from https to http (" + next.url.Host + ")"
			case !c.trusted.trusts(next.url) && !c.learnHosts(ctx, first.url, next.url):
				next.creds = false
				withheld = "credentials were not sent to " + next.url.Host + ", where a redirect led: it is not a host of the cluster " +
					"(not the admin URL's, a trusted host, a broker the cluster lists or a topic's owner its lookup names)"
			}
		}
		h = next
	}
}

// redirectOf is the request a redirect asks for, as net/http would make it: 307 and 308 repeat
// the method and body; 301, 302 and 303 turn all but GET and HEAD into a GET without body. A
// redirect without Location is an answer like any other (ok false).
func redirectOf(resp *http.Response, h hop) (hop, bool, error) {
	next := hop{method: h.method, body: h.body, creds: h.creds}
	switch resp.StatusCode {
	case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
		if h.method != http.MethodGet && h.method != http.MethodHead {
			next.method = http.MethodGet
		}
		next.body = nil
	default:
		return hop{}, false, nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return hop{}, false, nil
	}
	u, err := h.url.Parse(loc)
	if err != nil {
		return hop{}, false, fmt.Errorf("redirect from %s: bad Location %q: %w", h.url.Redacted(), loc, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return hop{}, false, fmt.Errorf("redirect from %s to %s: want an http(s) URL", h.url.Redacted(), u.Redacted())
	}
	u.Fragment, u.RawFragment = "", ""
	next.url = u
	return next, true, nil
}
