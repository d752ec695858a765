package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildBroker builds the letterbox binary into dir and returns its path and the module's root.
func buildBroker(ctx context.Context, dir string) (bin, root string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", "", fmt.Errorf("locating the module: %w", err)
	}
	root = filepath.Dir(strings.TrimSpace(string(gomod)))
	bin = filepath.Join(dir, "letterbox")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, root, nil
}

// revision says which commit the tree at root is, and whether tracked files differ from it.
func revision(ctx context.Context, root string) string {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	rev, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return "unknown"
	}
	if changes, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && changes != "" {
		rev += " with uncommitted changes"
	}
	return rev
}

// brokerProc is a `letterbox broker` process.
type brokerProc struct {
	cmd        *exec.Cmd
	serviceURL string
	httpURL    string
	// startup is the time from exec to the ready line.
	startup time.Duration
	stderr  *tail
	exited  chan struct{} // closed once the process has been waited for
	waitErr error
}

const readyTimeout = 10 * time.Second

// startBroker execs bin as a broker on free loopback ports and waits for its ready line. It
// keeps data in memory unless store says otherwise (--data DIR).
func startBroker(ctx context.Context, bin string, store ...string) (*brokerProc, error) {
	if len(store) == 0 {
		store = []string{"--in-memory"}
	}
	return startProc(ctx, bin, append([]string{"broker", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"}, store...))
}

// startProc execs bin with args, a broker that prints the ready line startBroker expects, and
// waits for that line.
func startProc(ctx context.Context, bin string, args []string) (*brokerProc, error) {
	ready := &readyLine{ch: make(chan string, 1)}
	b := &brokerProc{stderr: &tail{max: 8 << 10}, exited: make(chan struct{})}
	b.cmd = exec.Command(bin, args...)
	b.cmd.Stdout = ready
	b.cmd.Stderr = b.stderr
	// Should the bench die, take the broker with it.
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the broker: %w", err)
	}
	go func() {
		b.waitErr = b.cmd.Wait()
		close(b.exited)
	}()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case line := <-ready.ch:
		b.startup = time.Since(start)
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "ready" || !strings.HasPrefix(f[1], "pulsar://") {
			b.kill()
			return nil, fmt.Errorf("broker printed %q, want \"ready pulsar://HOST:PORT http://HOST:PORT\"", line)
		}
		b.serviceURL, b.httpURL = f[1], f[2]
		return b, nil
	case <-b.exited:
		return nil, fmt.Errorf("broker exited before it was ready (%v); stderr:\n%s", b.waitErr, b.stderr)
	case <-timer.C:
		b.kill()
		return nil, fmt.Errorf("broker not ready after %v; stderr:\n%s", readyTimeout, b.stderr)
	case <-ctx.Done():
		b.kill()
		return nil, ctx.Err()
	}
}

// alive reports an error if the broker process has exited.
func (b *brokerProc) alive() error {
	select {
	case <-b.exited:
		return fmt.Errorf("broker exited (%v); stderr:\n%s", b.waitErr, b.stderr)
	default:
		return nil
	}
}

// stop sends SIGTERM and waits for a clean exit, killing the process if it takes over 5 s.
func (b *brokerProc) stop() error {
	if err := b.alive(); err != nil {
		return err
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
		if b.waitErr != nil {
			return fmt.Errorf("broker exit: %w; stderr:\n%s", b.waitErr, b.stderr)
		}
		return nil
	case <-time.After(5 * time.Second):
		b.kill()
		return fmt.Errorf("broker still running 5s after SIGTERM; killed")
	}
}

func (b *brokerProc) kill() {
	_ = b.cmd.Process.Kill()
	<-b.exited
}

func (b *brokerProc) pid() int { return b.cmd.Process.Pid }

// readyLine captures the first line written to it.
type readyLine struct {
	mu   sync.Mutex
	buf  []byte
	done bool
	ch   chan string
}

func (r *readyLine) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return len(p), nil
	}
	r.buf = append(r.buf, p...)
	if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
		r.done = true
		r.ch <- string(r.buf[:i])
		r.buf = nil
	}
	return len(p), nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. It is 100 on every
// Linux architecture Go supports; getconf confirms it where available.
var clockTicks = func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || n <= 0 {
		return 100
	}
	return n
}()

// processCPU returns the user+system CPU time pid has used so far.
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it start with state (3).
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, errors.New("malformed /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / time.Duration(clockTicks), nil
}

// machineBusy returns the CPU time all processes of the machine have used so far, summed over
// its CPUs, time stolen by a hypervisor included (the first line of /proc/stat).
func machineBusy() (time.Duration, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, errors.New("malformed /proc/stat")
	}
	var ticks int64
	// user nice system idle iowait irq softirq steal: all but idle and iowait.
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / time.Duration(clockTicks), nil
}

// processRSS returns the resident set size of pid in bytes.
func processRSS(pid int) (int64, error) { return processStatusBytes(pid, "VmRSS") }

// processHWM is the peak RSS of pid, in bytes.
func processHWM(pid int) (int64, error) { return processStatusBytes(pid, "VmHWM") }

// processStatusBytes reads one "<field>:   12345 kB" line of /proc/<pid>/status, in bytes.
func processStatusBytes(pid int, field string) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc status", field)
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(raw)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
