package main

// End-to-end tests of the real binary: built once into a temporary directory, run as a user
// would run it.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/testwait"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// letterbox builds the binary on first use and returns its path.
func letterbox(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		if binDir, buildErr = os.MkdirTemp("", "letterbox-e2e-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "letterbox")
		out, err := exec.Command(goTool, "build", "-buildvcs=false", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var readyLine = regexp.MustCompile(`^ready pulsar://(127\.0\.0\.1:[1-9][0-9]*) (http://127\.0\.0\.1:[1-9][0-9]*)$`)

func TestBrokerCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGTERM")
	}
	t.Parallel()
	cmd := exec.Command(letterbox(t), "broker", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--in-memory")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := new(lockedBuffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	// Every stdout line, in order; closed at EOF, that is when the process has exited.
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	var m []string
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("stdout closed before the ready line; stderr:\n%s", stderr)
		}
		if m = readyLine.FindStringSubmatch(line); m == nil {
			t.Fatalf("first stdout line %q does not match %v", line, readyLine)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no ready line within 30s; stderr:\n%s", stderr)
	}
	pulsarAddr, httpURL := m[1], m[2]
	// The broker runs Go code on one CPU unless told otherwise (`letterbox broker --procs`).
	// It logs that before the ready line, but stderr is copied into the buffer on its own.
	if want := "procs=1 "; os.Getenv("GOMAXPROCS") == "" {
		testwait.ForNil(t, 10*time.Second, "the broker logs how many CPUs it runs on", func() error {
			if !strings.Contains(stderr.String(), want) {
				return fmt.Errorf("stderr does not log %q:\n%s", want, stderr)
			}
			return nil
		})
	}

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(httpURL + "/admin/v2/brokers/health")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("health: %d %q %v, want 200 ok", resp.StatusCode, body, err)
	}
	client.CloseIdleConnections()

	conn, err := net.DialTimeout("tcp", pulsarAddr, 10*time.Second)
	if err != nil {
		t.Fatalf("connect to the pulsar port: %v", err)
	}
	conn.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Nothing else may reach stdout; the channel closes when the process exits.
	deadline := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case line, ok := <-lines:
			if ok {
				t.Errorf("unexpected stdout line after the ready line: %q", line)
			}
			done = !ok
		case <-deadline:
			t.Fatalf("still running 30s after SIGTERM; stderr:\n%s", stderr)
		}
	}
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Errorf("exit after SIGTERM: %v, want status 0; stderr:\n%s", err, stderr)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	bin := letterbox(t)
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"--help"}, 0},
		{[]string{"version"}, 0},
		{[]string{"replay", "--service-url", "pulsar://127.0.0.1:6650"}, 2}, // no --dlq
		{[]string{"broker", "--data", t.TempDir(), "--in-memory"}, 2},
		{[]string{"broker", "--compat", "v2"}, 2},
		{[]string{"no-such-command"}, 2},
	} {
		out, err := exec.Command(bin, tt.args...).CombinedOutput()
		code := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		} else if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if code != tt.code {
			t.Errorf("letterbox %q: exit %d, want %d; output:\n%s", tt.args, code, tt.code, out)
		}
	}
}
