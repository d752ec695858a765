package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// run runs the command line and returns its exit code and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := run(t, args...)
		if code != ExitOK || errOut != "" {
			t.Errorf("%q: code %d, stderr %q", args, code, errOut)
		}
		for _, want := range []string{"letterbox broker", "letterbox demo", "letterbox replay", "--service-url URL", "--token-file FILE", "--context NAME"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: help lacks %q:\n%s", args, want, out)
			}
		}
	}
	code, out, _ := run(t, "broker", "--help")
	for _, want := range []string{"ready pulsar://HOST:PORT http://HOST:PORT", "--listen ADDR", "(default 127.0.0.1:6650)", "--http ADDR", "(default 127.0.0.1:8080)", "--data DIR", "--in-memory", "--config FILE", "--compat upstream", "--procs N"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("broker --help: code %d, output lacks %q:\n%s", code, want, out)
		}
	}
	for _, cmd := range []string{"demo", "replay"} {
		if code, out, _ := run(t, cmd, "-h"); code != ExitOK || !strings.Contains(out, "letterbox "+cmd) {
			t.Errorf("%s -h: code %d, output %q", cmd, code, out)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := run(t, args...)
		if code != ExitOK || !regexp.MustCompile(`^letterbox \S+ \(.*go[^)]*\)\n$`).MatchString(out) {
			t.Errorf("%q: code %d, output %q", args, code, out)
		}
	}
}

func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	vcs := func(rev, time, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: time}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"no build information", "", nil, "letterbox devel (go1.26.0 linux/amd64)"},
		{"stamping off", "", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			"letterbox devel (go1.26.0 linux/amd64)"},
		{"go install @v1.2.3", "", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}},
			"letterbox v1.2.3 (go1.26.0 linux/amd64)"},
		{"a checkout, modified", "", &debug.BuildInfo{GoVersion: "go1.26.0",
			Main:     debug.Module{Version: "v0.0.0-20261201100000-0123456789ab+dirty"},
			Settings: vcs(rev, "2026-12-01T10:00:00Z", "true")},
			"letterbox v0.0.0-20261201100000-0123456789ab+dirty (commit 0123456789ab+dirty, 2026-12-01T10:00:00Z, go1.26.0 linux/amd64)"},
		{"a checkout, stamping of the version off", "", &debug.BuildInfo{GoVersion: "go1.26.0",
			Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "2026-12-01T10:00:00Z", "false")},
			"letterbox devel (commit 0123456789ab, 2026-12-01T10:00:00Z, go1.26.0 linux/amd64)"},
		{"make dist VERSION=v1.3.0", "v1.3.0", &debug.BuildInfo{GoVersion: "go1.26.0",
			Main: debug.Module{Version: "v0.0.0-20261201100000-0123456789ab"}, Settings: vcs(rev, "2026-12-01T10:00:00Z", "false")},
			"letterbox v1.3.0 (commit 0123456789ab, 2026-12-01T10:00:00Z, go1.26.0 linux/amd64)"},
	} {
		v := readBuildVersion(tt.stamped, tt.bi)
		v.goVer = "go1.26.0" // the test binary's own toolchain and platform vary
		v.platform = "linux/amd64"
		if got := v.String(); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("maxMessageSize=big\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"--nope"}, "flag provided but not defined: -nope"},
		{[]string{"--token", "a", "--token-file", "b"}, "--token and --token-file exclude each other"},
		{[]string{"replay", "--token", "a", "--token-file", "b"}, "exclude each other"},
		{[]string{"replay", "--service-url", "http://h:8080"}, "--service-url"},
		{[]string{"--admin-url", "h:8080"}, "--admin-url"},
		{[]string{"--service-url", "pulsar://h:6650", "broker"}, "applies to the TUI and replay, not to broker"},
		{[]string{"--context", "x", "demo"}, "not to demo"},
		{[]string{"version", "x"}, "unexpected argument"},
		{[]string{"demo", "x"}, "unexpected argument"},
		{[]string{"--theme", "nope"}, `unknown theme "nope"`},
		{[]string{"demo", "--theme", "nope"}, `unknown theme "nope"`},
		{[]string{"broker", "extra"}, `unexpected argument "extra"`},
		{[]string{"broker", "--data", "d", "--in-memory"}, "--data and --in-memory exclude each other"},
		{[]string{"broker", "--compat", "v2"}, "--compat"},
		{[]string{"broker", "--procs", "-1"}, "--procs -1"},
		{[]string{"broker", "--in-memory", "--config", filepath.Join(dir, "missing.conf")}, "missing.conf"},
		{[]string{"broker", "--in-memory", "--config", bad}, "bad.conf:1: maxMessageSize"},
	} {
		code, out, errOut := run(t, tt.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var readyLine = regexp.MustCompile(`^ready pulsar://(127\.0\.0\.1:[1-9]\d*) (http://127\.0\.0\.1:[1-9]\d*)\n$`)

// runningBroker is `letterbox broker` running in-process.
type runningBroker struct {
	pulsarAddr string
	httpURL    string
	stdout     *syncBuffer
	stderr     *syncBuffer
	cancel     context.CancelFunc
	code       chan int
}

// startBroker runs `letterbox broker args...` until the ready line, and stops it at the end of
// the test if the test did not.
func startBroker(t *testing.T, args ...string) *runningBroker {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rb := &runningBroker{stdout: new(syncBuffer), stderr: new(syncBuffer), cancel: cancel, code: make(chan int, 1)}
	go func() { rb.code <- Run(ctx, append([]string{"broker"}, args...), rb.stdout, rb.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-rb.code:
		case <-time.After(30 * time.Second):
			t.Error("broker did not stop")
		}
	})
	var m []string
	brokertest.WaitFor(t, 30*time.Second, "the ready line", func() bool {
		select {
		case code := <-rb.code:
			t.Fatalf("broker exited with %d before ready; stderr:\n%s", code, rb.stderr.String())
		default:
		}
		m = readyLine.FindStringSubmatch(rb.stdout.String())
		return m != nil
	})
	rb.pulsarAddr, rb.httpURL = m[1], m[2]
	return rb
}

// stop cancels the run as a signal would and returns the exit code.
func (rb *runningBroker) stop(t *testing.T) int {
	t.Helper()
	rb.cancel()
	select {
	case code := <-rb.code:
		rb.code <- code // for the cleanup
		return code
	case <-time.After(30 * time.Second):
		t.Fatal("broker did not stop within 30s")
		return -1
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestBrokerRunsUntilCancelled(t *testing.T) {
	t.Parallel()
	rb := startBroker(t, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--in-memory")
	if status, body := get(t, rb.httpURL+"/admin/v2/brokers/health"); status != http.StatusOK || body != "ok" {
		t.Errorf("health: %d %q", status, body)
	}
	conn, err := net.DialTimeout("tcp", rb.pulsarAddr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial the pulsar port: %v", err)
	}
	conn.Close()
	if code := rb.stop(t); code != ExitOK {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, rb.stderr.String())
	}
	if out := rb.stdout.String(); strings.Count(out, "\n") != 1 {
		t.Errorf("stdout %q: want exactly the ready line", out)
	}
	if errOut := rb.stderr.String(); strings.Contains(errOut, "durable storage") {
		t.Errorf("--in-memory given, yet stderr warns about storage:\n%s", errOut)
	}
}

func TestBrokerConfigFileAndFlags(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "broker.conf")
	// --listen must win over the file's brokerServicePort.
	text := "clusterName=from-file\nbrokerServicePort=1\nunknownUpstreamKey=x\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	rb := startBroker(t, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", t.TempDir(), "--config", conf, "--compat", "upstream")
	if strings.HasSuffix(rb.pulsarAddr, ":1") {
		t.Errorf("listening on %s: brokerServicePort won over --listen", rb.pulsarAddr)
	}
	if status, body := get(t, rb.httpURL+"/admin/v2/clusters"); status != http.StatusOK || body != `["from-file"]` {
		t.Errorf("clusters: %d %q", status, body)
	}
	if code := rb.stop(t); code != ExitOK {
		t.Errorf("exit code %d", code)
	}
	errOut := rb.stderr.String()
	for _, want := range []string{"unknownUpstreamKey", "durable storage"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestBrokerPortFromConfigFile(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("brokerServicePort=0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// No --listen: the file's port applies to the default host (a free port here, since
	// 6650 may be taken on the test machine).
	rb := startBroker(t, "--http", "127.0.0.1:0", "--in-memory", "--config", conf)
	if strings.HasSuffix(rb.pulsarAddr, ":6650") {
		t.Errorf("listening on %s: the file's brokerServicePort=0 was not applied", rb.pulsarAddr)
	}
	if code := rb.stop(t); code != ExitOK {
		t.Errorf("exit code %d", code)
	}
}

func TestBrokerListenFailure(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, args := range [][]string{
		{"broker", "--in-memory", "--listen", ln.Addr().String(), "--http", "127.0.0.1:0"},
		{"broker", "--in-memory", "--listen", "127.0.0.1:0", "--http", ln.Addr().String()},
	} {
		code, out, errOut := run(t, args...)
		if code != ExitFailure || out != "" || !strings.Contains(errOut, ln.Addr().String()) {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want 1 and the address in use", args, code, out, errOut)
		}
	}
}

func TestBrokerDataDirIsLocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rb := startBroker(t, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", dir)
	// A second broker on the same directory must fail at once, saying why.
	code, out, errOut := run(t, "broker", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", dir)
	if code != ExitFailure || out != "" || !strings.Contains(errOut, "in use by another process") {
		t.Errorf("second broker on %s: code %d, stdout %q, stderr %q", dir, code, out, errOut)
	}
	if code := rb.stop(t); code != ExitOK {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, rb.stderr.String())
	}
	// Once the first has stopped, the directory is free again.
	rb2 := startBroker(t, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", dir)
	if code := rb2.stop(t); code != ExitOK {
		t.Errorf("restart on %s: exit code %d; stderr:\n%s", dir, code, rb2.stderr.String())
	}
}
