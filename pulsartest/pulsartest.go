// Package pulsartest runs a Pulsar broker inside a Go test: letterbox's embedded broker, which
// the official Pulsar clients use unmodified, started in a few milliseconds on 127.0.0.1 with
// its admin REST API, in memory or on a directory, and stopped when the test ends.
//
//	func TestOrders(t *testing.T) {
//		b := pulsartest.Start(t)
//		client, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL()})
//		...
//	}
//
// Start is for a test; New and Close are for a broker shared by a package's tests (TestMain),
// an example or a program. Options configure the broker: upstream's broker.conf keys (Conf,
// ConfFile), token or TLS authentication (TokenAuth, TLS, TLSAuth), tenants and namespaces to
// create (Tenant, Namespace), a data directory that outlives the broker (Dir, Restart). The
// broker answers on ServiceURL (pulsar:// or pulsar+ssl://) and AdminURL (http:// or
// https://), where pulsar-admin, pulsarctl and the official pulsaradmin work as against an
// upstream broker; Admin is letterbox's own admin client of it. WaitForBacklog, Messages and
// WaitForMessages are what tests of consumers and dead-letter queues keep needing.
//
// The broker behaves as upstream's standalone broker with its defaults (tenant public,
// namespace public/default, topics and subscriptions created on first use, deduplication and
// authentication off), with the differences docs/protocol.md lists. As on upstream, what no
// subscription holds is not kept unless a retention says so: a test that publishes before its
// consumer subscribes creates the subscription first (Admin's CreateSubscription, or a
// consumer it closes), or sets a retention (Conf("defaultRetentionTimeInMinutes", "-1") with
// Conf("defaultRetentionSizeInMB", "-1")).
//
// This package's API is stable: it changes only in ways that keep compiling code compiling
// and behaving as before. The packages it is built on (broker, broker/web) are importable but
// are not a stable API.
package pulsartest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Broker is a running broker with its admin API. Its methods are safe for concurrent use.
type Broker struct {
	s settings
	// tmp holds what the broker needs on disk besides its data (TLS certificates, the
	// secret key); removed by Close.
	tmp string
	sec *security
	ad  *admin.Client

	mu      sync.Mutex
	env     *brokertest.Env // the running broker; nil once closed
	service string          // pulsar://127.0.0.1:PORT, the same across restarts
	web     string          // http://127.0.0.1:PORT
	closed  bool
}

// Start starts a broker for the test t, as New does, and stops it when the test and its
// subtests have ended. A broker that cannot start fails the test.
func Start(t testing.TB, opts ...Option) *Broker {
	t.Helper()
	// The test's log gets the broker's warnings, unless an option says where they go.
	opts = append([]Option{func(s *settings) {
		s.logger = brokertest.PrefixLogger(t, "pulsartest broker: ")
		s.webLogger = brokertest.PrefixLogger(t, "pulsartest admin API: ")
	}}, opts...)
	b, err := New(opts...)
	if err != nil {
		t.Fatalf("pulsartest: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("pulsartest: stopping the broker: %v", err)
		}
	})
	return b
}

// New starts a broker on 127.0.0.1, on free ports, with its admin API. The caller stops it
// with Close. Without Dir it keeps everything in memory.
func New(opts ...Option) (*Broker, error) {
	s := defaultSettings()
	for _, o := range opts {
		o(&s)
	}
	if s.err != nil {
		return nil, fmt.Errorf("pulsartest: %w", s.err)
	}
	tmp, err := os.MkdirTemp("", "pulsartest-")
	if err != nil {
		return nil, fmt.Errorf("pulsartest: %w", err)
	}
	b := &Broker{s: s, tmp: tmp}
	fail := func(err error) (*Broker, error) {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("pulsartest: %w", err)
	}
	if b.sec, err = newSecurity(s, tmp); err != nil {
		return fail(err)
	}
	cfg, err := b.config()
	if err != nil {
		return fail(err)
	}
	if err := b.launch(cfg); err != nil {
		return fail(err)
	}
	if b.ad, err = b.sec.adminClient(b.web); err != nil {
		b.env.Close()
		return fail(err)
	}
	return b, nil
}

// config is the broker's configuration: the defaults, the broker.conf settings of Conf and
// ConfFile, then authentication and TLS. Its Store is left to launch.
func (b *Broker) config() (broker.Config, error) {
	cfg := broker.DefaultConfig()
	cfg.Logger = b.s.logger
	// A buffer reused while something still reads it turns into bytes the clients' checksums
	// reject: a broker for tests checks itself harder than a production one.
	cfg.PoisonFrameBuffers = true
	cfg, err := b.s.applyConf(cfg)
	if err != nil {
		return cfg, err
	}
	b.sec.apply(&cfg)
	return cfg, nil
}

// launch starts the broker with cfg, on its data directory when it has one, and creates the
// tenants and namespaces the options ask for.
func (b *Broker) launch(cfg broker.Config) error {
	if b.s.dir != "" {
		store, err := storage.OpenFileStore(b.s.dir, storage.FileStoreOptions{Logger: cfg.Logger, Rollover: cfg.Rollover})
		if err != nil {
			return err
		}
		cfg.Store = store // the broker owns it from here, and closes it if it fails to start
	}
	env, err := brokertest.Launch(cfg, b.s.webLogger)
	if err != nil {
		return err
	}
	if err := b.s.create(env.Broker, cfg.ClusterName); err != nil {
		env.Close()
		return err
	}
	b.mu.Lock()
	b.env = env
	b.service, b.web = env.ServiceURL, env.AdminURL
	b.mu.Unlock()
	return nil
}

// ServiceURL is the URL of the binary protocol, for the clients' ServiceURL or URL option:
// pulsar://127.0.0.1:PORT, or pulsar+ssl://127.0.0.1:PORT with TLS. It stays the same across
// Restart.
func (b *Broker) ServiceURL() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.service
}

// AdminURL is the URL of the admin REST API (upstream's /admin/v2), for pulsar-admin,
// pulsarctl and the official pulsaradmin: http://127.0.0.1:PORT, or https://127.0.0.1:PORT
// with TLS. It stays the same across Restart.
func (b *Broker) AdminURL() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.web
}

// Admin is a client of the admin API (letterbox's client/admin), authenticated as the
// superuser when authentication is on. It stays usable across Restart.
func (b *Broker) Admin() *admin.Client { return b.ad }

// Restart stops the broker and starts it again on the same data directory and the same
// addresses, as a broker process restarting would: what was receipted before is there after,
// and clients reconnect. It needs Dir.
func (b *Broker) Restart() error {
	if b.s.dir == "" {
		return errors.New("pulsartest: Restart needs a data directory (the Dir option): in memory, nothing would survive")
	}
	b.mu.Lock()
	env, closed := b.env, b.closed
	b.mu.Unlock()
	if closed {
		return errors.New("pulsartest: Restart of a closed broker")
	}
	if err := env.Close(); err != nil {
		return fmt.Errorf("pulsartest: restart: stopping: %w", err)
	}
	cfg, err := b.config()
	if err != nil {
		return fmt.Errorf("pulsartest: restart: %w", err)
	}
	// The same addresses: a client's reconnection finds the broker where it was.
	cfg.ListenAddr = env.Broker.Addr()
	if _, port, err := net.SplitHostPort(env.Web.Addr()); err == nil {
		cfg.WebServicePort = port
	}
	if err := b.launch(cfg); err != nil {
		b.mu.Lock()
		b.env = nil
		b.mu.Unlock()
		return fmt.Errorf("pulsartest: restart: %w", err)
	}
	return nil
}

// Close stops the broker and its admin API, closing every connection, and removes what the
// broker kept besides its data (a Dir stays). It is safe to call more than once.
func (b *Broker) Close() error {
	b.mu.Lock()
	env, closed := b.env, b.closed
	b.env, b.closed = nil, true
	b.mu.Unlock()
	if closed {
		return nil
	}
	var err error
	if env != nil {
		err = env.Close()
	}
	return errors.Join(err, os.RemoveAll(b.tmp))
}

// running returns the running broker, or an error once it is closed (or failed to restart).
func (b *Broker) running() (*brokertest.Env, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.env == nil {
		return nil, errors.New("pulsartest: the broker is not running")
	}
	return b.env, nil
}
