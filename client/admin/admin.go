// Package admin is a typed client for the Pulsar admin REST API v2: every endpoint letterbox's
// broker serves (clusters, tenants, namespaces and their policies and permissions, topics,
// stats and internal stats, subscriptions, peek and examine, schemas, lookup, the broker's
// health and /metrics). It speaks upstream's paths and JSON only, so it works against a real
// Pulsar cluster as well as the embedded broker; letterbox's extensions (a consumer's
// schemaType) are optional fields.
//
// Every call takes a context; a Client also applies its own per-request timeout. Failures are
// *Error values carrying the HTTP status and upstream's reason. Redirects (a broker sends an
// admin call about a topic it does not own to the owner) are followed, with the credentials
// sent only to the cluster's own hosts: the admin URL's, Options.TrustedHosts,
// Client.TrustHost, and the brokers the cluster itself names (its broker list, its lookups),
// which the client asks for before it withholds credentials from a redirect.
//
// New makes a Client from Options; its methods follow upstream's admin API, one group per
// resource as upstream groups them (clusters, tenants, namespaces, topics, subscriptions,
// messages, stats, schemas, lookup, brokers), and answer with the JSON types upstream defines.
package admin

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Options configure a Client.
type Options struct {
	// URL is the admin service URL, e.g. http://127.0.0.1:8080.
	URL string
	// Token, when set, is sent as "Authorization: Bearer <Token>".
	Token string
	// Authorization, when set, replaces Token: it returns the whole Authorization header value
	// ("Bearer …") for each call, so a provider can refresh what it sends (OAuth2); "" sends
	// none.
	Authorization func(ctx context.Context) (string, error)
	// TrustedHosts are hosts of the cluster besides URL's, to which credentials may follow a
	// redirect; the forms are TrustHost's. A redirect anywhere else is followed without them.
	TrustedHosts []string
	// TLS configures https URLs (custom roots, client certificates); nil uses the defaults.
	TLS *tls.Config
	// Timeout bounds each call, redirects included; 0 means 30 s.
	Timeout time.Duration
	// HTTPClient replaces the default client (TLS is then ignored). The Client uses a copy
	// whose redirects it follows itself; the caller's client is left as it is.
	HTTPClient *http.Client
}

// Client is an admin API client, safe for concurrent use.
type Client struct {
	base    *url.URL
	auth    func(ctx context.Context) (string, error) // nil: no credentials
	hc      *http.Client
	timeout time.Duration
	trusted trustedHosts
	learned learnState // learn.go
}

// New returns a client for opts.URL.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(opts.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("admin: invalid URL %q: want http(s)://host:port", opts.URL)
	}
	c := &Client{base: u, auth: opts.Authorization, timeout: opts.Timeout}
	if c.auth == nil && opts.Token != "" {
		bearer := "Bearer " + opts.Token
		c.auth = func(context.Context) (string, error) { return bearer, nil }
	}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	c.trusted.add(hostPattern{name: canonicalHost(u.Hostname())})
	for _, h := range opts.TrustedHosts {
		p, err := parseHostPattern(h)
		if err != nil {
			return nil, err
		}
		c.trusted.add(p)
	}
	if opts.HTTPClient != nil {
		hc := *opts.HTTPClient
		c.hc = &hc
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if opts.TLS != nil {
			tr.TLSClientConfig = opts.TLS.Clone()
		}
		c.hc = &http.Client{Transport: tr}
	}
	c.hc.CheckRedirect = stopAtRedirect
	return c, nil
}

// Error is a failed request: the HTTP status and upstream's reason.
type Error struct {
	Status int
	Reason string
	// Withheld says why the request's credentials were not sent on a redirect ("" when they
	// were): the likely cause of a 401 from the broker a redirect led to.
	Withheld string
}

func (e *Error) Error() string {
	if e.Withheld != "" {
		return fmt.Sprintf("admin: HTTP %d: %s (%s)", e.Status, e.Reason, e.Withheld)
	}
	return fmt.Sprintf("admin: HTTP %d: %s", e.Status, e.Reason)
}

// IsNotFound reports whether err is a 404 from the server.
func IsNotFound(err error) bool { return StatusOf(err) == http.StatusNotFound }

// StatusOf returns the HTTP status of an *Error, else 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// request is one call: method, path segments (escaped here), query, JSON body.
type request struct {
	method      string
	path        []string
	query       url.Values
	body        any
	contentType string
	// accept replaces the default Accept: application/json (text answers: metrics).
	accept string
}

func (c *Client) url(path []string, q url.Values) string {
	var b strings.Builder
	b.WriteString(c.base.String())
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(p)
	}
	if len(q) > 0 {
		b.WriteByte('?')
		b.WriteString(q.Encode())
	}
	return b.String()
}

// do sends r and returns the response (status 2xx) for the caller to read and close, then
// cancel.
func (c *Client) do(ctx context.Context, r request) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	resp, err := c.roundTrip(ctx, r)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// roundTrip sends r, following redirects (redirect.go), and returns a 2xx response; any other
// answer is an *Error.
func (c *Client) roundTrip(ctx context.Context, r request) (*http.Response, error) {
	first := hop{method: r.method, creds: true}
	var err error
	if first.url, err = url.Parse(c.url(r.path, r.query)); err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	header := http.Header{}
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	header.Set("Accept", accept)
	if r.body != nil {
		if first.body, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("admin: encode request: %w", err)
		}
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		header.Set("Content-Type", ct)
	}
	auth := ""
	if c.auth != nil {
		if auth, err = c.auth(ctx); err != nil {
			return nil, fmt.Errorf("admin: %s %s: authorization: %w", r.method, first.url.Path, err)
		}
	}
	ex, err := c.send(ctx, first, auth, header)
	if err != nil {
		return nil, fmt.Errorf("admin: %s %s: %w", r.method, first.url.Path, err)
	}
	resp := ex.resp
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Status: resp.StatusCode, Reason: strings.TrimSpace(string(data)), Withheld: ex.withheld}
	var body adminapi.ErrorData
	if json.Unmarshal(data, &body) == nil && body.Reason != "" {
		e.Reason = body.Reason
	}
	if e.Reason == "" {
		e.Reason = http.StatusText(resp.StatusCode)
	}
	return nil, e
}

// Do sends method to path (escaped, below the admin URL, e.g. /admin/v2/broker-stats/topics)
// with query and body as JSON (nil: none), for endpoints the typed methods do not cover; the
// client's timeout, credentials and redirect policy apply as to any call. It returns the 2xx
// response, whose body the caller must close (that also ends the call's deadline); any other
// answer is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("admin: path %q: pass the query apart", path)
	}
	var segs []string
	if p := strings.Trim(path, "/"); p != "" {
		segs = strings.Split(p, "/")
	}
	resp, cancel, err := c.do(ctx, request{method: method, path: segs, query: query, body: body})
	if err != nil {
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a call's deadline when its body is closed, not before the caller has
// read it.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// call sends r and decodes a JSON answer into out (nil: ignore the body). An empty body
// (204, or upstream's null) leaves out alone and reports false.
func (c *Client) call(ctx context.Context, r request, out any) (bool, error) {
	resp, cancel, err := c.do(ctx, r)
	if err != nil {
		return false, err
	}
	defer cancel()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, fmt.Errorf("admin: read response: %w", err)
	}
	data = bytes.TrimSpace(data)
	if out == nil || len(data) == 0 || string(data) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return false, fmt.Errorf("admin: decode response of %s: %w", strings.Join(r.path, "/"), err)
	}
	return true, nil
}

// text sends r and returns the answer's body as text (health, metrics).
func (c *Client) text(ctx context.Context, r request) (string, error) {
	resp, cancel, err := c.do(ctx, r)
	if err != nil {
		return "", err
	}
	defer cancel()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("admin: read response: %w", err)
	}
	return string(data), nil
}

// Topic names.

// ParseTopic accepts full names (persistent://t/ns/x, non-persistent://t/ns/x), t/ns/x and
// bare x (in public/default), by client/naming's rules (upstream's TopicName); V2 names only:
// the admin API v2 has no path for a cluster.
func ParseTopic(s string) (naming.Topic, error) {
	t, err := naming.ParseTopic(s)
	if err != nil {
		return naming.Topic{}, fmt.Errorf("admin: %w", err)
	}
	if !t.V2() {
		return naming.Topic{}, fmt.Errorf("admin: invalid topic name %q: a V1 name (with a cluster) has no admin v2 path", s)
	}
	return t, nil
}

// topicPath is the REST path of a topic, with each segment escaped, plus more segments.
func topicPath(t naming.Topic, more ...string) []string {
	p := []string{"admin", "v2", t.Domain(), url.PathEscape(t.Tenant), url.PathEscape(t.Namespace), url.PathEscape(t.Local)}
	return append(p, more...)
}

func nsPath(ns string, more ...string) ([]string, error) {
	tenant, local, err := naming.ParseNamespace(ns)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	return append([]string{"admin", "v2", "namespaces", url.PathEscape(tenant), url.PathEscape(local)}, more...), nil
}
