package web_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/web"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

var quiet = slog.New(slog.DiscardHandler)

// newServer starts a broker and its web server on free ports, both closed at the end of the
// test.
func newServer(t *testing.T, opts ...broker.Option) *web.Server {
	t.Helper()
	_, s := startServer(t, opts...)
	return s
}

// startServer is newServer that also returns the broker (internal/brokertest starts both;
// not pulsartest: these are the broker's own tests, which configure it with any broker.Option
// and reach into it).
func startServer(t *testing.T, opts ...broker.Option) (*broker.Broker, *web.Server) {
	t.Helper()
	mods := make([]func(*broker.Config), len(opts))
	for i, o := range opts {
		mods[i] = o
	}
	env := brokertest.Start(t, mods...)
	return env.Broker, env.Web
}

var client = &http.Client{Timeout: 10 * time.Second}

// do sends one request and returns the response with its body read.
func do(t *testing.T, method, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestAddrAndURL(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("Addr() = %q, want 127.0.0.1 and a real port", s.Addr())
	}
	if s.URL() != "http://"+s.Addr() {
		t.Errorf("URL() = %q", s.URL())
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	resp, body := do(t, http.MethodGet, s.URL()+"/admin/v2/brokers/health")
	if resp.StatusCode != http.StatusOK || body != "ok" {
		t.Errorf("GET health = %d %q, want 200 ok", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want text/plain", ct)
	}
	resp, body = do(t, http.MethodHead, s.URL()+"/admin/v2/brokers/health")
	if resp.StatusCode != http.StatusOK || body != "" {
		t.Errorf("HEAD health = %d %q, want 200 and no body", resp.StatusCode, body)
	}
}

func TestClusters(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts []broker.Option
		want []string
	}{
		{"default", nil, []string{"standalone"}},
		{"configured", []broker.Option{func(c *broker.Config) { c.ClusterName = "dev" }}, []string{"dev"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, tt.opts...)
			resp, body := do(t, http.MethodGet, s.URL()+"/admin/v2/clusters")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, body %q", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var got []string
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if len(got) != len(tt.want) || got[0] != tt.want[0] {
				t.Errorf("clusters = %q, want %q", got, tt.want)
			}
		})
	}
}

// reason decodes upstream's error body, {"reason": "..."}.
func reason(t *testing.T, resp *http.Response, body string) string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q, want application/json", ct)
	}
	var e struct {
		Reason *string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Reason == nil || *e.Reason == "" {
		t.Fatalf("error body %q: want {\"reason\": ...} (%v)", body, err)
	}
	return *e.Reason
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, path := range []string{
		"/",
		"/admin/v2/nothing-here",
		"/admin/v2/brokers/health/extra",
		"/admin/v3/clusters",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			resp, body := do(t, method, s.URL()+path)
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s = %d, want 404", method, path, resp.StatusCode)
				continue
			}
			reason(t, resp, body)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, tt := range []struct{ method, path string }{
		{http.MethodPost, "/admin/v2/brokers/health"},
		{http.MethodDelete, "/admin/v2/clusters"},
		{http.MethodPut, "/admin/v2/clusters"},
	} {
		resp, body := do(t, tt.method, s.URL()+tt.path)
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s = %d, want 405", tt.method, tt.path, resp.StatusCode)
			continue
		}
		reason(t, resp, body)
		if allow := resp.Header.Get("Allow"); !strings.Contains(allow, http.MethodGet) {
			t.Errorf("%s %s: Allow = %q, want GET in it", tt.method, tt.path, allow)
		}
	}
}

func TestCloseIsIdempotentAndStopsListening(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// An idle keep-alive connection must not hold Close up.
	resp, _ := do(t, http.MethodGet, s.URL()+"/admin/v2/brokers/health")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %d", resp.StatusCode)
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial after Close: %v, want connection refused", err)
	}
}

func TestListenError(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	b, err := broker.New(broker.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := web.New(b, s.Addr(), quiet); err == nil {
		t.Fatalf("New on %s, which is in use: want an error", s.Addr())
	}
	if _, err := web.New(nil, "127.0.0.1:0", quiet); err == nil {
		t.Fatal("New with a nil broker: want an error")
	}
}

func TestDebugLogsRequests(t *testing.T) {
	t.Parallel()
	b, err := broker.New(broker.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := web.New(b, "127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	do(t, http.MethodGet, s.URL()+"/admin/v2/nope")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Close has waited for every handler, so the log is complete and no longer written.
	if out := logs.String(); !strings.Contains(out, "path=/admin/v2/nope") || !strings.Contains(out, "status=404") {
		t.Errorf("debug log = %q, want the request with its status", out)
	}
}
