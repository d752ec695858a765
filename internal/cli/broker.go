package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/broker/web"
)

// Where `letterbox broker` listens unless told otherwise: upstream's ports, loopback only.
const (
	defaultListen = "127.0.0.1:6650"
	defaultHTTP   = "127.0.0.1:8080"
)

type brokerFlags struct {
	listen   string
	http     string
	data     string
	inMemory bool
	config   string
	compat   string
	procs    int
	memory   memoryLimit   // broker_memory.go
	security securityFlags // broker_security.go
}

// brokerFlagNames lists the broker flags in the order of the help.
var brokerFlagNames = append([]string{"listen", "http", "data", "in-memory", "memory-limit", "config", "compat", "procs"}, securityFlagNames...)

func (f *brokerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.listen, "listen", defaultListen, "binary protocol listener `ADDR`, host:port (port 0: a free one)")
	fs.StringVar(&f.http, "http", defaultHTTP, "admin REST listener `ADDR`, host:port (port 0: a free one)")
	fs.StringVar(&f.data, "data", "", "keep data in `DIR` (default $XDG_DATA_HOME/letterbox or ~/.local/share/letterbox)")
	fs.BoolVar(&f.inMemory, "in-memory", false, "keep everything in memory, lost when the broker stops")
	fs.Var(&f.memory, "memory-limit", memoryLimitUsage)
	fs.StringVar(&f.config, "config", "", "settings from `FILE`, in broker.conf key=value syntax; flags win")
	fs.StringVar(&f.compat, "compat", "", "act as an `upstream` broker would: protocol v20, no extension fields")
	fs.IntVar(&f.procs, "procs", 1, "run Go code on at most `N` CPUs at once, 0: all (without the flag, GOMAXPROCS if set replaces the default)")
	f.security.register(fs)
}

// procsFor returns how many CPUs the broker process should run Go code on, and false when the
// runtime's own choice (the GOMAXPROCS variable) stands. The default is one: a local broker
// shares its machine with the clients it serves, and with one P the Go scheduler never hands a
// connection's work from one core to another, each hand-off a thread wake-up and the frame's
// bytes moving between caches. On two CPUs that costs a third of the broker's CPU per message
// (docs/performance.md); one core still moves several hundred thousand messages a second.
func (f *brokerFlags) procsFor(given map[string]bool, getenv func(string) string) (int, bool) {
	switch {
	case given["procs"] && f.procs == 0:
		return runtime.NumCPU(), true
	case given["procs"]:
		return f.procs, true
	case getenv("GOMAXPROCS") != "":
		return 0, false
	}
	return 1, true
}

const brokerUsageText = `Usage: letterbox broker [--listen ADDR] [--http ADDR] [--data DIR | --in-memory [--memory-limit SIZE]]
                        [--config FILE] [--compat upstream] [--procs N] [--token-secret-key KEY | --token-public-key KEY]
                        [--superuser-roles ROLES] [--tls-cert-file FILE --tls-key-file FILE]

Runs the embedded broker without the TUI. Once its listeners accept connections it prints
exactly one line on stdout,

  ready pulsar://HOST:PORT http://HOST:PORT

with the real ports (ready pulsar+ssl://HOST:PORT https://HOST:PORT with TLS; with the config's
brokerServicePortTls and webServicePortTls, the TLS listeners' URLs follow the plain ones on
the same line), and logs everything else to stderr. SIGINT or SIGTERM stops it (exit 0).

Flags:
`

func brokerUsage(w io.Writer) {
	io.WriteString(w, brokerUsageText)
	var f brokerFlags
	fs := newFlagSet("letterbox broker")
	f.register(fs)
	printFlags(w, fs, brokerFlagNames)
}

// runBroker is `letterbox broker`: it runs until ctx is cancelled.
func runBroker(ctx context.Context, p Process, args []string, stdout, stderr io.Writer) int {
	const name = "letterbox broker"
	var f brokerFlags
	fs := newFlagSet(name)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			brokerUsage(stdout)
			return ExitOK
		}
		return usageError(stderr, name, err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, name, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	given := make(map[string]bool)
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })

	switch {
	case given["data"] && f.inMemory:
		return usageError(stderr, name, errors.New("--data and --in-memory exclude each other"))
	case given["compat"] && f.compat != "upstream":
		return usageError(stderr, name, fmt.Errorf("--compat %q: the only mode is upstream", f.compat))
	case f.procs < 0:
		return usageError(stderr, name, fmt.Errorf("--procs %d: want 0 (all CPUs) or more", f.procs))
	}
	if n, ok := f.procsFor(given, os.Getenv); ok && p.SetProcs != nil {
		p.SetProcs(n)
	}

	log := slog.New(slog.NewTextHandler(stderr, nil))
	log.Info("go scheduler", "procs", runtime.GOMAXPROCS(0), "cpus", runtime.NumCPU())
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = f.listen
	cfg.Logger = log
	if f.config != "" {
		var err error
		if cfg, err = broker.LoadConf(f.config, cfg); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return ExitUsage
		}
		if given["listen"] {
			cfg.ListenAddr = f.listen
		}
	}
	cfg.CompatUpstream = f.compat == "upstream"
	cfg.MemoryLimit = f.memory.limit()
	if err := f.security.apply(&cfg, given); err != nil {
		return usageError(stderr, name, err)
	}
	if !f.inMemory {
		dir := f.data
		if dir == "" {
			var err error
			if dir, err = DefaultDataDir(); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", name, err)
				return ExitUsage
			}
		}
		store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{Logger: log, Rollover: cfg.Rollover,
			OpenFiles: cfg.OpenFileLimit, FileIdle: cfg.FileInfoMaxIdle})
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return ExitFailure
		}
		cfg.Store = store // the broker owns it from here
		log.Info("durable storage", "dir", dir)
	} else {
		log.Info("in-memory storage", "memory_limit", formatSize(cfg.MemoryLimit),
			"policy", cfg.BacklogQuotaDefaultRetentionPolicy)
	}

	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	httpAddr := f.http
	if cfg.WebServicePort != "" && !given["http"] {
		if host, _, err := net.SplitHostPort(httpAddr); err == nil {
			httpAddr = net.JoinHostPort(host, cfg.WebServicePort)
		}
	}
	w, err := web.New(b, httpAddr, log)
	if err != nil {
		b.Close()
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	// Every listener is bound and listening: connections are accepted from here on.
	pulsarURL, pulsarTLS := b.ListenURLs()
	urls := []string{pulsarURL, w.URL()}
	for _, u := range []string{pulsarTLS, w.URLTLS()} {
		if u != "" {
			urls = append(urls, u) // the TLS listeners beside the plain ones
		}
	}
	fmt.Fprintf(stdout, "ready %s\n", strings.Join(urls, " "))
	log.Info("broker ready", "urls", urls, "advertised", b.ServiceURL(), "advertised_tls", b.ServiceURLTLS(),
		"cluster", cfg.ClusterName, "compat_upstream", cfg.CompatUpstream)
	warnIfExposed(log, b, append([]string{b.Addr(), w.Addr()}, hostPorts(urls[2:])...)...)

	<-ctx.Done()
	log.Info("shutting down")
	code := ExitOK
	if err := w.Close(); err != nil {
		log.Error("closing the admin listener", "err", err)
		code = ExitFailure
	}
	if err := b.Close(); err != nil {
		log.Error("closing the broker", "err", err)
		code = ExitFailure
	}
	log.Info("stopped")
	return code
}

// DefaultDataDir is where the embedded broker keeps data: $XDG_DATA_HOME/letterbox, or
// ~/.local/share/letterbox.
func DefaultDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "letterbox"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no data directory: set XDG_DATA_HOME or HOME, or pass --data DIR or --in-memory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "letterbox"), nil
}
