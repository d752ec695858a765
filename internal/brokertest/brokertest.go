// Package brokertest starts real embedded brokers for the tests of letterbox's own packages,
// with access to what the public pulsartest package keeps to itself: the *broker.Broker (its
// interceptor and Go API), any broker.Config field (sub-second intervals, settings that are no
// broker.conf key), the admin API's *web.Server. Tests that need none of that start their
// broker with pulsartest, which is built on Launch here. Also the polls tests wait with
// (WaitFor, WaitForNil: internal/testwait's, for the tests that import this package anyway)
// instead of sleeping, a listener that never answers (SilentListener), letterbox clients of a
// test's broker (NewClient), a broker clock that moves when the test moves it (Clock), and
// DLQs filled as the official Go client's dead-letter router fills them (RouteDeadLetters).
//
// Test code only: no package of the binary imports it. The packages it imports (broker,
// broker/web, client, client/admin) cannot use it in their own internal tests, which would be
// an import cycle: they wait with internal/testwait, and client's internal tests start a
// broker themselves; the external tests of broker and broker/web use it.
package brokertest

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/broker/web"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/internal/testwait"
)

// Env is a running broker with its admin API on 127.0.0.1, stopped when the test ends.
type Env struct {
	Broker     *broker.Broker
	Web        *web.Server
	Admin      *admin.Client
	ServiceURL string // pulsar://127.0.0.1:PORT
	AdminURL   string // http://127.0.0.1:PORT
}

// Config is the configuration test brokers start from: upstream's defaults, warnings and
// errors to the test's log, and frame buffers poisoned as they go back to the pool: a buffer
// reused while something still reads it turns into bytes the clients' checksums reject, so
// every test doubles as a check of the buffers' counts.
func Config(t testing.TB) broker.Config {
	cfg := broker.DefaultConfig()
	cfg.Logger = PrefixLogger(t, "broker: ")
	cfg.PoisonFrameBuffers = true
	return cfg
}

// StartBroker starts an in-memory broker alone, without the admin API (mods change its
// configuration first), closed when the test ends.
func StartBroker(t testing.TB, mods ...func(*broker.Config)) *broker.Broker {
	t.Helper()
	cfg := Config(t)
	for _, m := range mods {
		m(&cfg)
	}
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// Start starts an in-memory broker (mods change its configuration first) and its admin API.
func Start(t testing.TB, mods ...func(*broker.Config)) *Env {
	t.Helper()
	cfg := Config(t)
	for _, m := range mods {
		m(&cfg)
	}
	env, err := Launch(cfg, PrefixLogger(t, "web: "))
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(env.Stop)
	return env
}

// StartDurable starts a broker that stores its topics in dir (a FileStore), with its admin
// API. Env.Stop closes both as a restart does: the data stays, and a StartDurable on the
// same dir finds it.
func StartDurable(t testing.TB, dir string, mods ...func(*broker.Config)) *Env {
	t.Helper()
	store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return Start(t, append([]func(*broker.Config){func(c *broker.Config) { c.Store = store }}, mods...)...)
}

// Launch starts a broker with cfg and its admin API on 127.0.0.1 (on cfg.WebServicePort when
// set, else on a free port), the admin API logging to webLog, and a client of the admin API.
// The caller stops them with Close. It needs no test: pulsartest.New launches through it.
func Launch(cfg broker.Config, webLog *slog.Logger) (*Env, error) {
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		return nil, err
	}
	port := cfg.WebServicePort
	if port == "" {
		port = "0"
	}
	w, err := web.New(b, net.JoinHostPort("127.0.0.1", port), webLog)
	if err != nil {
		b.Close()
		return nil, err
	}
	ad, err := admin.New(admin.Options{URL: w.URL()})
	if err != nil {
		w.Close()
		b.Close()
		return nil, err
	}
	return &Env{Broker: b, Web: w, Admin: ad, ServiceURL: b.ServiceURL(), AdminURL: w.URL()}, nil
}

// Stop closes the admin API and the broker before the test ends (both are safe to close
// again when it does).
func (e *Env) Stop() { e.Close() }

// Close closes the admin API and the broker, and returns the first error. It is safe to call
// more than once.
func (e *Env) Close() error {
	return errors.Join(e.Web.Close(), e.Broker.Close())
}

// Client is a letterbox client of the broker, closed when the test ends.
func (e *Env) Client(t testing.TB) *client.Client {
	t.Helper()
	return NewClient(t, e.ServiceURL)
}

// NewClient is a letterbox client of the broker at serviceURL (a pulsartest broker's), closed
// when the test ends.
func NewClient(t testing.TB, serviceURL string) *client.Client {
	t.Helper()
	cl, err := client.New(client.Options{ServiceURL: serviceURL, OperationTimeout: 10 * time.Second, Logger: PrefixLogger(t, "client: ")})
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

// WaitFor and WaitForNil are testwait's For and ForNil, here beside the brokers tests wait on.
var (
	WaitFor    = testwait.For
	WaitForNil = testwait.ForNil
)

// SilentListener listens on 127.0.0.1 and accepts connections that it never reads from nor
// answers, until the test ends: a cluster that hangs. It returns its host:port.
func SilentListener(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held sync.WaitGroup
	t.Cleanup(func() { ln.Close(); held.Wait() })
	held.Add(1)
	go func() {
		defer held.Done()
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return ln.Addr().String()
}

// Logger writes warnings and errors to the test's log until the test ends.
func Logger(t testing.TB) *slog.Logger { return PrefixLogger(t, "") }

// PrefixLogger is Logger with each line starting with prefix (which of several components
// logged it).
func PrefixLogger(t testing.TB, prefix string) *slog.Logger {
	w := &logWriter{t: t, prefix: prefix}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type logWriter struct {
	mu     sync.Mutex
	t      testing.TB
	prefix string
	done   bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(w.prefix + strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
