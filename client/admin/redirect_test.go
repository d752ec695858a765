package admin_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The servers here listen on loopback addresses of their own (127.0.0.1, .2, .3), so a
// redirect from one to another changes host as one between a cluster's brokers does: net/http
// keeps Authorization on a change of port alone.

const token = "s3cret"

// seen is what a server received.
type seen struct {
	Method, URI, Body, Auth, ContentType string
}

// recorder keeps what a server received, for the test to read once the call is back.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (rc *recorder) record(r *http.Request) seen {
	b, _ := io.ReadAll(r.Body)
	s := seen{Method: r.Method, URI: r.URL.RequestURI(), Body: string(b), Auth: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type")}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, s)
	rc.mu.Unlock()
	return s
}

func (rc *recorder) all() []seen {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]seen(nil), rc.reqs...)
}

// calls are the requests received but those a client makes to learn the cluster's hosts
// before it withholds credentials from a redirect (the broker list, a lookup).
func (rc *recorder) calls() []seen {
	var out []seen
	for _, r := range rc.all() {
		if !strings.HasPrefix(r.URI, "/admin/v2/brokers") && !strings.HasPrefix(r.URI, "/lookup/v2/") {
			out = append(out, r)
		}
	}
	return out
}

// only returns the one request the server received (learning aside).
func (rc *recorder) only(t *testing.T) seen {
	t.Helper()
	reqs := rc.calls()
	if len(reqs) != 1 {
		t.Fatalf("server received %d requests, want 1: %+v", len(reqs), reqs)
	}
	return reqs[0]
}

// listen opens a port on loopback address ip.
func listen(t *testing.T, ip string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("no loopback address %s here (Linux routes all of 127/8): %v", ip, err)
	}
	return l
}

// serveOn starts h on loopback address ip.
func serveOn(t *testing.T, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	return serve(t, listen(t, ip), h)
}

func serve(t *testing.T, l net.Listener, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// owner is the broker that owns the topics: it records each request and answers 401 without
// the token, else `["c"]`.
func owner(t *testing.T, ip string) (*httptest.Server, *recorder) {
	t.Helper()
	rc := &recorder{}
	srv := serveOn(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc.record(r).Auth != "Bearer "+token {
			http.Error(w, `{"reason":"Authentication required"}`, http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`["c"]`))
	}))
	return srv, rc
}

// front is the broker the client is pointed at: it records each request and redirects it with
// code to the same path on target.
func front(t *testing.T, ip string, code int, target string) (*httptest.Server, *recorder) {
	t.Helper()
	rc := &recorder{}
	srv := serveOn(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.record(r)
		http.Redirect(w, r, target+r.URL.RequestURI(), code)
	}))
	return srv, rc
}

func newClient(t *testing.T, opts admin.Options) *admin.Client {
	t.Helper()
	c, err := admin.New(opts)
	must(t, err)
	return c
}

// TestDefaultRedirectLosesToken shows what the client's own redirect handling fixes: net/http
// follows upstream's 307 to the owner broker but drops the token on the way, so the owner
// answers 401; the admin client keeps it for a host of the cluster.
func TestDefaultRedirectLosesToken(t *testing.T) {
	t.Parallel()
	own, _ := owner(t, "127.0.0.2")
	fr, _ := front(t, "127.0.0.1", http.StatusTemporaryRedirect, own.URL)

	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, fr.URL+"/admin/v2/clusters", nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{}).Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("net/http's redirect: HTTP %d, want 401 (the token dropped on the way to the owner)", resp.StatusCode)
	}

	c := newClient(t, admin.Options{URL: fr.URL, Token: token, TrustedHosts: []string{"127.0.0.2"}})
	if _, err := c.Clusters(ctx(t)); err != nil {
		t.Fatalf("admin client through the same redirect: %v", err)
	}
}

// TestRedirectToClusterHostKeepsTokenMethodAndBody: a 307 to a trusted host repeats the POST
// with its JSON body and the token.
func TestRedirectToClusterHostKeepsTokenMethodAndBody(t *testing.T) {
	t.Parallel()
	own, ownSeen := owner(t, "127.0.0.2")
	fr, frSeen := front(t, "127.0.0.1", http.StatusTemporaryRedirect, own.URL)
	c := newClient(t, admin.Options{URL: fr.URL, Token: token, TrustedHosts: []string{"127.0.0.2"}})

	must(t, c.UpdateTenant(ctx(t), "acme", adminapi.TenantInfo{AdminRoles: []string{"ops"}, AllowedClusters: []string{"c"}}))
	first, got := frSeen.only(t), ownSeen.only(t)
	if first.Body == "" || !strings.Contains(first.Body, `"ops"`) {
		t.Fatalf("front received body %q", first.Body)
	}
	want := seen{Method: http.MethodPost, URI: "/admin/v2/tenants/acme", Body: first.Body, Auth: "Bearer " + token,
		ContentType: "application/json"}
	if got != want {
		t.Errorf("owner received %+v\nwant %+v", got, want)
	}
}

// TestRedirectToOtherHostDropsToken: a redirect to a host outside the cluster is followed
// without the token, and the 401 that follows says why.
func TestRedirectToOtherHostDropsToken(t *testing.T) {
	t.Parallel()
	own, ownSeen := owner(t, "127.0.0.3")
	fr, _ := front(t, "127.0.0.1", http.StatusTemporaryRedirect, own.URL)
	c := newClient(t, admin.Options{URL: fr.URL, Token: token, TrustedHosts: []string{"127.0.0.2"}})

	_, err := c.Clusters(ctx(t))
	var ae *admin.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("err = %v, want a 401", err)
	}
	if got := ownSeen.only(t); got.Method != http.MethodGet {
		t.Errorf("untrusted host received %+v, want a GET", got)
	}
	for _, r := range ownSeen.all() {
		if r.Auth != "" {
			t.Errorf("untrusted host received %+v with Authorization", r)
		}
	}
	if !strings.Contains(err.Error(), "not a host of the cluster") || !strings.Contains(ae.Withheld, own.Listener.Addr().String()) {
		t.Errorf("error %q does not say the token was withheld from %s", err, own.Listener.Addr())
	}
}

// TestRedirectBackToClusterStaysWithoutToken: a host outside the cluster cannot aim the token
// at another path of the cluster by redirecting back to it.
func TestRedirectBackToClusterStaysWithoutToken(t *testing.T) {
	t.Parallel()
	homeL := listen(t, "127.0.0.1")
	away, _ := front(t, "127.0.0.3", http.StatusTemporaryRedirect, "http://"+homeL.Addr().String()+"/back")
	rc := &recorder{}
	home := serve(t, homeL, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := rc.record(r)
		switch {
		case r.URL.Path == "/admin/v2/clusters":
			http.Redirect(w, r, away.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		case got.Auth != "":
			w.Write([]byte(`["c"]`))
		default:
			http.Error(w, `{"reason":"Authentication required"}`, http.StatusUnauthorized)
		}
	}))
	c := newClient(t, admin.Options{URL: home.URL, Token: token})

	if _, err := c.Clusters(ctx(t)); admin.StatusOf(err) != http.StatusUnauthorized {
		t.Fatalf("err = %v, want a 401", err)
	}
	reqs := rc.calls()
	if len(reqs) != 2 || reqs[0].Auth == "" || reqs[1].URI != "/back/admin/v2/clusters" || reqs[1].Auth != "" {
		t.Errorf("home received %+v, want the call with the token, then /back/… without it", reqs)
	}
}

// TestRedirectFromHTTPSToHTTPDropsToken: credentials never follow a downgrade to plain http,
// even to a trusted host. The client passed in is used through a copy: its own redirect
// policy is left alone.
func TestRedirectFromHTTPSToHTTPDropsToken(t *testing.T) {
	t.Parallel()
	own, ownSeen := owner(t, "127.0.0.2")
	rc := &recorder{}
	fr := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.record(r)
		http.Redirect(w, r, own.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(fr.Close)
	hc := fr.Client() // trusts fr's certificate
	c := newClient(t, admin.Options{URL: fr.URL, Token: token, TrustedHosts: []string{"127.0.0.2"}, HTTPClient: hc})

	_, err := c.Clusters(ctx(t))
	if admin.StatusOf(err) != http.StatusUnauthorized || !strings.Contains(err.Error(), "from https to http") {
		t.Fatalf("err = %v, want a 401 that says the token was not sent over http", err)
	}
	if got := rc.only(t); got.Auth != "Bearer "+token {
		t.Errorf("https front received Authorization %q", got.Auth)
	}
	if got := ownSeen.only(t); got.Auth != "" {
		t.Errorf("http owner received Authorization %q, want none", got.Auth)
	}
	if hc.CheckRedirect != nil {
		t.Error("the caller's http.Client had its CheckRedirect changed")
	}
}

// TestRedirectLoopStops: a chain of redirects ends after 10 with an error naming where it
// stopped.
func TestRedirectLoopStops(t *testing.T) {
	t.Parallel()
	rc := &recorder{}
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.record(r)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		http.Redirect(w, r, fmt.Sprintf("/admin/v2/clusters?n=%d", n+1), http.StatusTemporaryRedirect)
	}))
	c := newClient(t, admin.Options{URL: srv.URL, Token: token})

	_, err := c.Clusters(ctx(t))
	if !errors.Is(err, admin.ErrTooManyRedirects) {
		t.Fatalf("err = %v, want ErrTooManyRedirects", err)
	}
	if !strings.Contains(err.Error(), srv.URL+"/admin/v2/clusters?n=10 redirects again to "+srv.URL+"/admin/v2/clusters?n=11") {
		t.Errorf("error %q does not name where the chain stopped", err)
	}
	if n := len(rc.all()); n != 11 {
		t.Errorf("server received %d requests, want the call and 10 redirects", n)
	}
}

// TestRedirectMethods: as net/http, 307 and 308 repeat the method and body; 301, 302 and 303
// make a POST a GET without body. A redirect on the same host keeps the token.
func TestRedirectMethods(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code       int
		method     string
		body       bool
		wantMethod string
	}{
		{http.StatusMovedPermanently, http.MethodPost, true, http.MethodGet},
		{http.StatusFound, http.MethodPost, true, http.MethodGet},
		{http.StatusSeeOther, http.MethodPost, true, http.MethodGet},
		{http.StatusSeeOther, http.MethodDelete, false, http.MethodGet},
		{http.StatusTemporaryRedirect, http.MethodPut, true, http.MethodPut},
		{http.StatusPermanentRedirect, http.MethodPost, true, http.MethodPost},
		{http.StatusPermanentRedirect, http.MethodDelete, false, http.MethodDelete},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.code, tc.method), func(t *testing.T) {
			t.Parallel()
			rc := &recorder{}
			srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rc.record(r)
				if r.URL.Path != "/done" {
					http.Redirect(w, r, "/done", tc.code)
				}
			}))
			c := newClient(t, admin.Options{URL: srv.URL, Token: token})
			var body any
			if tc.body {
				body = map[string]int{"partitions": 3}
			}
			resp, err := c.Do(ctx(t), tc.method, "/admin/v2/x", nil, body)
			must(t, err)
			resp.Body.Close()
			reqs := rc.all()
			if len(reqs) != 2 {
				t.Fatalf("server received %+v, want the call and the redirect", reqs)
			}
			want := seen{Method: tc.wantMethod, URI: "/done", Auth: "Bearer " + token}
			if tc.wantMethod == tc.method {
				want.Body, want.ContentType = reqs[0].Body, reqs[0].ContentType
			}
			if reqs[1] != want {
				t.Errorf("redirected request %+v\nwant %+v", reqs[1], want)
			}
		})
	}
}

// TestTrustHost: a host named later (by a lookup, say) gets the token from then on.
func TestTrustHost(t *testing.T) {
	t.Parallel()
	own, _ := owner(t, "127.0.0.2")
	fr, _ := front(t, "127.0.0.1", http.StatusTemporaryRedirect, own.URL)
	c := newClient(t, admin.Options{URL: fr.URL, Token: token})

	if _, err := c.Clusters(ctx(t)); admin.StatusOf(err) != http.StatusUnauthorized {
		t.Fatalf("before TrustHost: err = %v, want a 401", err)
	}
	// Trusting runs alongside calls in flight.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			if err := c.TrustHost(fmt.Sprintf("broker-%d.example.com:8080", i)); err != nil {
				t.Error(err)
			}
			c.Clusters(ctx(t))
		})
	}
	wg.Wait()
	must(t, c.TrustHost(own.URL)) // a lookup's httpUrl
	if _, err := c.Clusters(ctx(t)); err != nil {
		t.Fatalf("after TrustHost(%s): %v", own.URL, err)
	}
	if err := c.TrustHost("http://"); err == nil {
		t.Error("TrustHost accepted a URL without a host")
	}
}

// TestRedirectToOtherScheme: a Location that is not http(s) ends the call with an error.
func TestRedirectToOtherScheme(t *testing.T) {
	t.Parallel()
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	c := newClient(t, admin.Options{URL: srv.URL, Token: token})
	if _, err := c.Clusters(ctx(t)); err == nil || !strings.Contains(err.Error(), "want an http(s) URL") {
		t.Errorf("err = %v, want a refused redirect", err)
	}
}

// A lookup answered by a host outside the cluster (a redirect led there, without the token)
// names nothing the client trusts: the host it names gets no token either.
func TestLookupFromOutsideTrustsNothing(t *testing.T) {
	rc := &recorder{}
	var self string
	outside := serveOn(t, "127.0.0.3", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.record(r)
		if strings.HasPrefix(r.URL.Path, "/lookup/") {
			fmt.Fprintf(w, `{"brokerUrl":"pulsar://127.0.0.3:6650","httpUrl":%q}`, self)
			return
		}
		w.Write([]byte(`{}`))
	}))
	self = outside.URL
	fr, _ := front(t, "127.0.0.1", http.StatusTemporaryRedirect, outside.URL)
	c, err := admin.New(admin.Options{URL: fr.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Lookup(t.Context(), "persistent://public/default/t")
	if err != nil || l.HTTPURL != outside.URL {
		t.Fatalf("lookup: %+v, %v", l, err)
	}
	if _, err := c.Stats(t.Context(), "persistent://public/default/t"); err != nil {
		t.Fatal(err)
	}
	for _, s := range rc.all() {
		if s.Auth != "" {
			t.Fatalf("the host outside the cluster received the token with %s", s.URI)
		}
	}
}
