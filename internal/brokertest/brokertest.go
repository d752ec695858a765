// Package brokertest starts a real embedded broker with its admin API for the tests of other
// packages, and polls for conditions instead of sleeping. Test code only: no package of the
// binary imports it.
package brokertest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/web"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
)

// Env is a running broker with its admin API on 127.0.0.1, stopped when the test ends.
type Env struct {
	Broker     *broker.Broker
	Admin      *admin.Client
	ServiceURL string // pulsar://127.0.0.1:PORT
	AdminURL   string // http://127.0.0.1:PORT
}

// Start starts an in-memory broker (mods change its configuration first) and its admin API.
func Start(t testing.TB, mods ...func(*broker.Config)) *Env {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.Logger = Logger(t)
	cfg.PoisonFrameBuffers = true // a buffer reused too early fails the clients' checksums
	for _, m := range mods {
		m(&cfg)
	}
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	w, err := web.New(b, "127.0.0.1:0", cfg.Logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	ad, err := admin.New(admin.Options{URL: w.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Broker: b, Admin: ad, ServiceURL: b.ServiceURL(), AdminURL: w.URL()}
}

// Client is a letterbox client of the broker, closed when the test ends.
func (e *Env) Client(t testing.TB) *client.Client {
	t.Helper()
	cl, err := client.New(client.Options{ServiceURL: e.ServiceURL, OperationTimeout: 10 * time.Second, Logger: Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// Ctx is a context that ends after d or with the test.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// WaitFor polls cond every 10 ms until it holds, failing the test after d.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Logger writes warnings and errors to the test's log until the test ends.
func Logger(t testing.TB) *slog.Logger {
	w := &logWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type logWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
