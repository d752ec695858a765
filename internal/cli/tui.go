package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/broker/web"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/demo"
	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// tuiFlags are the flags of the commands that run the TUI (letterbox itself and demo).
type tuiFlags struct {
	theme  string
	memory memoryLimit // of the embedded broker (broker_memory.go)
}

func (f *tuiFlags) register(fs *flag.FlagSet) { f.registerDefault(fs, "") }

func (f *tuiFlags) registerDefault(fs *flag.FlagSet, theme string) {
	fs.StringVar(&f.theme, "theme", theme, "colour theme `NAME`: dark, light, high-contrast, colour-blind, no-color or a user theme")
	fs.Var(&f.memory, "memory-limit", memoryLimitUsage)
}

// check reports an unknown theme before anything starts.
func (f *tuiFlags) check() error {
	if f.theme == "" {
		return nil
	}
	user, _ := themes.LoadDir(themes.UserDir(os.Getenv)) // a broken file is logged by the TUI
	if _, ok := themes.Find(f.theme, user); !ok {
		return fmt.Errorf("--theme: unknown theme %q (themes: %s)", f.theme, strings.Join(themes.Names(user), ", "))
	}
	return nil
}

// The TUI's own flags, in the order of the help.
var tuiFlagNames = []string{"theme", "memory-limit"}

// runTUI is `letterbox` without a command: the TUI on the cluster the client flags name; with
// none of them, on the Pulsar already serving 127.0.0.1:6650, or else on an embedded broker
// with durable data that lives as long as the TUI.
func runTUI(ctx context.Context, cf *clientFlags, tf *tuiFlags, stderr io.Writer) int {
	const name = "letterbox"
	if err := cf.validate(); err != nil {
		return usageError(stderr, name, err)
	}
	if err := tf.check(); err != nil {
		return usageError(stderr, name, err)
	}
	if _, code := cf.resolveContext(name, stderr); code != ExitOK {
		return code
	}
	if err := cf.checkContextTheme(tf); err != nil {
		return usageError(stderr, name, err)
	}
	// The contexts :context may switch to; a broken file only turns that off (with --context
	// it has already stopped letterbox above).
	cfg, cfgErr := loadConfig()
	if cfgErr != nil && cf.named == nil {
		fmt.Fprintf(stderr, "%s: warning: %v (:context is off)\n", name, cfgErr)
	} else if cfgErr == nil && cf.named == nil {
		warn(stderr, name, cfg.Warnings)
	}
	log, closeLog, err := openLog()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	defer closeLog()

	opts := data.AdminOptions{AdminURL: cf.adminURL, ServiceURL: cf.serviceURL, Context: cf.context}
	app := appSetup{theme: tf.theme, readOnly: cf.readOnly()}
	if cfg != nil {
		app.exportDir = cfg.ExportDir
	}
	if len(cf.set) > 0 {
		// A cluster of the user's choosing: never an embedded broker.
		if err := cf.apply(&opts); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return ExitUsage
		}
		log.Info("remote cluster", "context", cf.context, "service_url", opts.ServiceURL, "admin_url", opts.AdminURL)
	} else if servesPulsar(ctx, defaultListen, log) {
		log.Info("attaching to the Pulsar already serving "+defaultListen, "admin_url", defaultAdminURL)
	} else {
		dir, err := DefaultDataDir()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return ExitUsage
		}
		store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{Logger: log})
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return ExitFailure
		}
		eb, err := startEmbedded(store, false, tf.memory.limit(), log)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return ExitFailure
		}
		defer eb.close(log)
		log.Info("embedded broker", "dir", dir, "pulsar", eb.serviceURL, "http", eb.adminURL)
		opts.ServiceURL, opts.AdminURL = eb.serviceURL, eb.adminURL
		app.broker, app.dataDir, app.self = eb, dir, &selfConns{}
		opts.HTTPClient = app.self.httpClient()
	}
	app.contexts = tuiContexts(cfg, cfgErr, cf.named, opts, log)
	return runApp(ctx, opts, app, log, stderr)
}

// appSetup is how the TUI runs, beyond the cluster it opens.
type appSetup struct {
	theme string
	// readOnly is why the session may not act ("--readonly", "context prod"; "" when it may).
	readOnly string
	// contexts are those :context switches between.
	contexts tui.Contexts
	// exportDir is config.toml's export_dir ("" the working directory).
	exportDir string
	// broker, when letterbox runs it, makes q ask while others use it (tui_others.go): not
	// the TUI, whose admin connections are self's, nor the demo's workload; dataDir is its
	// data, where no export goes.
	broker  *embedded
	self    *selfConns
	demo    *demo.Workload
	dataDir string
}

// options are the TUI's options on src.
func (app appSetup) options(src *data.Admin, log *slog.Logger) tui.Options {
	to := tui.Options{Source: src, Theme: app.theme, Contexts: app.contexts, ExportDir: app.exportDir, DataDir: app.dataDir,
		Warnf: func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) }}
	if app.broker != nil {
		// Applications connect to it: the header says where (a free port at times).
		to.ServiceInHeader = true
		// The TUI's own connections (a tail, a produce, a scan) and the workload's are not
		// others'.
		own := func() int {
			n := src.OwnConnections()
			if app.demo != nil {
				n += app.demo.Connections()
			}
			return n
		}
		self := app.self
		if self == nil {
			self = &selfConns{}
		}
		to.Others = othersOf(app.broker, self, own)
	}
	if r := app.readOnly; r != "" {
		to.ReadOnly, to.ReadOnlyFlag = "read-only ("+r+")", r == "--readonly"
	}
	return to
}

// runApp runs the TUI on the cluster opts names until the user quits or ctx ends.
func runApp(ctx context.Context, opts data.AdminOptions, app appSetup, log *slog.Logger, stderr io.Writer) int {
	src, err := data.NewAdmin(opts)
	if err != nil {
		fmt.Fprintf(stderr, "letterbox: %v\n", err)
		return ExitUsage
	}
	defer src.Close()
	if app.broker == nil && os.Getenv("GOGC") == "" {
		// The TUI alone holds little but a large cluster's listing, and holds it twice while
		// it reads it again (every minute at 100,000 topics): collecting at half again what it
		// holds, rather than twice, keeps its peak near what it needs, at the cost of a few
		// more collections of a process that is mostly idle. An embedded broker's throughput
		// would pay for that, so the runtime's default stays with one.
		debug.SetGCPercent(50)
	}
	to := app.options(src, log)
	err = tui.Run(ctx, to)
	if err != nil {
		log.Error("tui", "err", err)
		fmt.Fprintf(stderr, "letterbox: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

// apply puts the client flags' (or their context's) authentication and TLS settings into opts.
func (c *clientFlags) apply(opts *data.AdminOptions) error {
	ts, err := c.tokenSource()
	if err != nil {
		return err
	}
	if ts != nil { // OAuth2; the flags exclude a token then
		opts.TokenSource = ts
	}
	opts.TrustedHosts = c.trustedHosts
	opts.Token = c.token
	if c.tokenFile != "" {
		b, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return fmt.Errorf("%s: %w", c.origin("token-file", "token_file"), err)
		}
		opts.Token = strings.TrimSpace(string(b))
		opts.TokenFile = c.tokenFile
	}
	if c.tlsCAFile != "" || c.tlsInsecure || c.clientCert.certFile != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.tlsInsecure}
		if _, err := c.withClientCert(tc); err != nil { // client_tls.go
			return err
		}
		if c.tlsCAFile != "" {
			pem, err := os.ReadFile(c.tlsCAFile)
			if err != nil {
				return fmt.Errorf("%s: %w", c.origin("tls-ca-file", "tls_ca_file"), err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return fmt.Errorf("%s %s: no PEM certificate in it", c.origin("tls-ca-file", "tls_ca_file"), c.tlsCAFile)
			}
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = tc
		opts.HTTPClient = &http.Client{Transport: tr, Timeout: 10 * time.Second}
		opts.TLSTrustCertsFile = c.tlsCAFile
		opts.TLSAllowInsecureConnection = c.tlsInsecure
		opts.TLSCertFile, opts.TLSKeyFile = c.clientCert.certFile, c.clientCert.keyFile
	}
	return nil
}

// servesPulsar reports whether addr answers the Pulsar binary protocol: something accepts a
// connection there and answers a request after the CONNECT handshake (an error answer counts:
// only a Pulsar broker sends one).
func servesPulsar(ctx context.Context, addr string, log *slog.Logger) bool {
	conn, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false // nothing listens: the common case, answered at once
	}
	conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cl, err := client.New(client.Options{ServiceURL: "pulsar://" + addr, Logger: log,
		ConnectionTimeout: time.Second, OperationTimeout: 2 * time.Second})
	if err != nil {
		return false
	}
	defer cl.Close()
	_, err = cl.TopicsOfNamespace(ctx, "public/default")
	var se *client.ServerError
	return err == nil || errors.As(err, &se)
}

// embedded is a broker with its admin listener, run by the TUI or the demo.
type embedded struct {
	b          *broker.Broker
	w          *web.Server
	serviceURL string
	adminURL   string
}

// startEmbedded starts a broker on store (nil: in memory, within memoryLimit bytes) at
// 127.0.0.1:6650 and its admin REST at 127.0.0.1:8080. With anyPort, a port in use is replaced
// by a free one; without, only the admin port is (6650 is the one applications are pointed at).
// Each of tune changes the broker's configuration after those.
func startEmbedded(store storage.Store, anyPort bool, memoryLimit int64, log *slog.Logger, tune ...func(*broker.Config)) (*embedded, error) {
	cfg := broker.DefaultConfig()
	cfg.Logger = log
	cfg.MemoryLimit = memoryLimit
	cfg.ListenAddr = defaultListen
	cfg.Store = store
	for _, f := range tune {
		f(&cfg)
	}
	if anyPort && !portFree(defaultListen) {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil { // New has closed the store
		return nil, fmt.Errorf("embedded broker: %w", err)
	}
	httpAddr := defaultHTTP
	if !portFree(httpAddr) {
		log.Warn(httpAddr + " is in use: the admin REST API listens on a free port instead")
		httpAddr = "127.0.0.1:0"
	}
	w, err := web.New(b, httpAddr, log)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("embedded broker's admin listener: %w", err)
	}
	return &embedded{b: b, w: w, serviceURL: "pulsar://" + b.Addr(), adminURL: w.URL()}, nil
}

func (e *embedded) close(log *slog.Logger) {
	if err := e.w.Close(); err != nil {
		log.Error("closing the admin listener", "err", err)
	}
	if err := e.b.Close(); err != nil {
		log.Error("closing the broker", "err", err)
	}
}

// portFree reports whether addr can be listened on now.
func portFree(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// LogPath is where the TUI logs while it owns the terminal: $XDG_STATE_HOME/letterbox/letterbox.log,
// or ~/.local/state/letterbox/letterbox.log.
func LogPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "letterbox", "letterbox.log"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no place for the log: set XDG_STATE_HOME or HOME: %w", err)
	}
	return filepath.Join(home, ".local", "state", "letterbox", "letterbox.log"), nil
}

// openLog opens the log file for appending and returns a logger writing to it.
func openLog() (*slog.Logger, func(), error) {
	path, err := LogPath()
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("log: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, nil)), func() { f.Close() }, nil
}
