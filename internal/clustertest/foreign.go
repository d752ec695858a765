//go:build clustertest

package clustertest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// ForeignHost is the loopback address of a host outside the cluster (StartForeign).
const ForeignHost = "127.0.0.6"

// Foreign is a web server outside the cluster that answers as a broker of its own would, and
// records what it is sent: what a misconfigured or hostile broker's redirect, or its broker
// list, leads a client to. Its broker list and its lookups name itself; every other admin
// call is answered with an empty object, and every request is kept, with its Authorization.
type Foreign struct {
	URL string // http://127.0.0.6:PORT

	mu   sync.Mutex
	seen []Request
}

// Request is one request a Foreign server received.
type Request struct {
	Method, Path  string
	Authorization string
	Form          url.Values // a form body's fields (an OAuth2 token request's)
}

// StartForeign starts a Foreign server, stopped when the test ends.
func StartForeign(t testing.TB) *Foreign {
	t.Helper()
	requireLoopbackHosts(t)
	f := &Foreign{}
	srv := httptest.NewUnstartedServer(f)
	srv.Listener.Close()
	srv.Listener = listen(t, ForeignHost)
	srv.Start()
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *Foreign) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := Request{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization")}
	if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if err := r.ParseForm(); err == nil {
			req.Form = r.PostForm
		}
	}
	f.mu.Lock()
	f.seen = append(f.seen, req)
	f.mu.Unlock()
	self := strings.TrimPrefix(f.URL, "http://")
	var body any = map[string]any{}
	switch p := r.URL.Path; {
	case p == "/admin/v2/brokers" || isBrokersOfCluster(p):
		body = []string{self}
	case p == "/admin/v2/clusters":
		body = []string{"standalone"}
	case strings.HasPrefix(p, "/lookup/v2/topic/"):
		body = map[string]string{"brokerUrl": "pulsar://" + net.JoinHostPort(ForeignHost, "6650"), "httpUrl": f.URL}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// Requests are the requests received, in order.
func (f *Foreign) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.seen...)
}

// Credentialed are the requests received that carried credentials: an Authorization header,
// or a client secret in a form.
func (f *Foreign) Credentialed() []Request {
	var out []Request
	for _, r := range f.Requests() {
		if r.Authorization != "" || r.Form.Get("client_secret") != "" {
			out = append(out, r)
		}
	}
	return out
}
