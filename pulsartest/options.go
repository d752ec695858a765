package pulsartest

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// An Option configures a broker before it starts.
type Option func(*settings)

// settings are what the options say.
type settings struct {
	dir        string
	conf       []string // broker.conf lines, in order
	confFiles  []string
	tokenAuth  bool
	tls        bool
	tlsAuth    bool
	upstream   bool
	tenants    []string
	namespaces []string
	logger     *slog.Logger
	webLogger  *slog.Logger
	err        error // the first option given a value it cannot take
}

func defaultSettings() settings {
	stderr := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return settings{logger: stderr, webLogger: stderr}
}

func (s *settings) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Dir keeps the broker's data in dir, durably, as `letterbox broker --data` does: a receipt
// means the message is on disk, and a broker started again on dir (Restart, or New with the
// same Dir after Close) finds every topic, subscription, cursor and policy as they were. A
// directory is used by one broker at a time. Without Dir the broker keeps everything in
// memory.
func Dir(dir string) Option {
	return func(s *settings) {
		if dir == "" {
			s.fail(fmt.Errorf("Dir: empty directory name"))
		}
		s.dir = dir
	}
}

// Conf sets an upstream broker.conf key, as a line "key=value" of broker.conf would:
// allowAutoTopicCreation, allowAutoTopicCreationType, defaultNumPartitions,
// brokerDeduplicationEnabled, ttlDurationDefaultInSeconds, maxMessageSize,
// defaultRetentionTimeInMinutes and the others letterbox implements (broker.ConfKeys lists
// them). A key letterbox does not implement is an error rather than ignored, as `letterbox
// broker --config` ignores it: a test would otherwise pass without the setting it relies on.
func Conf(key, value string) Option {
	return func(s *settings) {
		if strings.ContainsAny(key, "=\n\r") || strings.ContainsAny(value, "\n\r") || strings.TrimSpace(key) == "" {
			s.fail(fmt.Errorf("Conf(%q, %q): want a broker.conf key and a one-line value", key, value))
			return
		}
		s.conf = append(s.conf, key+"="+value)
	}
}

// ConfFile reads the settings of a broker.conf file, as `letterbox broker --config FILE` does.
// Conf settings apply after it, whatever the order of the options. Unlike --config, a key
// letterbox does not implement is an error.
func ConfFile(path string) Option {
	return func(s *settings) { s.confFiles = append(s.confFiles, path) }
}

// UpstreamCompat makes the broker behave as an upstream broker would, as `letterbox broker
// --compat upstream`: protocol version 20 and none of letterbox's extension fields.
func UpstreamCompat() Option { return func(s *settings) { s.upstream = true } }

// Tenant creates the tenant name, allowed on the broker's cluster, unless it exists.
func Tenant(name string) Option {
	return func(s *settings) { s.tenants = append(s.tenants, name) }
}

// Namespace creates the namespace name ("tenant/namespace"), and its tenant, unless they
// exist, with the broker's default policies.
func Namespace(name string) Option {
	return func(s *settings) {
		tenant, _, err := naming.ParseNamespace(name)
		if err != nil {
			s.fail(fmt.Errorf("Namespace(%q): %w", name, err))
			return
		}
		s.tenants = append(s.tenants, tenant)
		s.namespaces = append(s.namespaces, name)
	}
}

// Logger sends the broker's log (and its admin API's) to l. Start logs warnings and errors to
// the test's log, New to standard error.
func Logger(l *slog.Logger) Option {
	return func(s *settings) {
		if l == nil {
			s.fail(fmt.Errorf("Logger: nil logger"))
			return
		}
		s.logger, s.webLogger = l, l
	}
}

// applyConf applies the broker.conf files, then the Conf lines, on top of cfg; a key letterbox
// does not implement is an error.
func (s *settings) applyConf(cfg broker.Config) (broker.Config, error) {
	apply := func(name, text string) error {
		var ignored []string
		var err error
		cfg, ignored, err = broker.ParseConf(strings.NewReader(text), name, cfg)
		if err != nil {
			return err
		}
		if len(ignored) > 0 {
			return fmt.Errorf("%s: letterbox does not implement the broker.conf keys %s", name, strings.Join(ignored, ", "))
		}
		return nil
	}
	for _, f := range s.confFiles {
		text, err := os.ReadFile(f)
		if err != nil {
			return cfg, fmt.Errorf("ConfFile: %w", err)
		}
		if err := apply(f, string(text)); err != nil {
			return cfg, err
		}
	}
	if len(s.conf) > 0 {
		if err := apply("Conf", strings.Join(s.conf, "\n")); err != nil {
			return cfg, err
		}
	}
	cfg.CompatUpstream = s.upstream
	return cfg, nil
}

// create makes the tenants and namespaces the options name, those that do not exist yet.
func (s *settings) create(b *broker.Broker, cluster string) error {
	for _, t := range s.tenants {
		if _, err := b.Tenant(t); err == nil {
			continue
		}
		if err := b.CreateTenant(t, adminapi.TenantInfo{AllowedClusters: []string{cluster}}); err != nil {
			return fmt.Errorf("tenant %s: %w", t, err)
		}
	}
	for _, ns := range s.namespaces {
		if _, err := b.NamespacePolicies(ns); err == nil {
			continue
		}
		if err := b.CreateNamespace(ns, nil); err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return nil
}
