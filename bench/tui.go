package main

// The TUI's figures: the real binary in a tmux pane of 160×48 (its own tmux server, temporary
// HOME and XDG directories) for the first frame, idle CPU and the RSS of browsing a DLQ of a
// million messages, and against 100,000 topics (tuitopics.go); the render and keystroke times
// come from the tui package's Go benchmarks.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// Targets from the TUI issues.
const (
	targetFirstFrame = 300 * time.Millisecond
	targetRender     = 4 * time.Millisecond
	targetIdleCPU    = 0.03 // of one core
	targetDLQRSS     = 200_000_000
)

// tuiReport is what the TUI runs measured; zero values were not measured.
type tuiReport struct {
	// firstFrame: exec → first non-empty screen; firstTopics: exec → the demo's topics listed.
	firstFrame, firstTopics []time.Duration
	// renders are the Go benchmarks' ns/op by name, one per -count.
	renders map[string][]float64
	// idleCPU is the TUI's utime+stime over idleWindow, in cores; idleRSS its RSS then.
	idleCPU    float64
	idleWindow time.Duration
	idleRSS    int64
	idleOthers float64
	// dlqN messages in the DLQ; dlqPages pages browsed; dlqRSS the RSS after browsing and
	// dlqPeak the process's high-water mark (VmHWM); dlqBroker the broker's RSS.
	dlqN               int
	dlqFill            time.Duration
	dlqPages           int
	dlqRSS, dlqPeak    int64
	dlqBroker          int64
	dlqShown, dlqFirst string // what the screen said on the first and last page
	// large is the run against 100,000 topics (tuitopics.go).
	large largeReport
}

// tuiProc is the letterbox binary running in a pane of a tmux server of its own.
type tuiProc struct {
	sock, dir string
	pid       int
	t0        time.Time // exec of the binary
}

// startTUI runs bin args in a new tmux server (w×h) with HOME and the XDG directories under
// a fresh temporary directory.
func startTUI(ctx context.Context, bin string, w, h int, args ...string) (*tuiProc, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, errors.New("tmux not found")
	}
	dir, err := os.MkdirTemp("", "letterbox-bench-tui-")
	if err != nil {
		return nil, err
	}
	t := &tuiProc{sock: fmt.Sprintf("letterbox-bench-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: dir}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "TMUX" || k == "HOME" || strings.HasPrefix(k, "XDG_") || k == "NO_COLOR"
	})
	for _, d := range []string{"config", "state", "data", "cache"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	env = append(env, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "TERM=xterm-256color")
	// The shell records its pid and the time, then becomes the binary: t0 is the exec.
	script := fmt.Sprintf("echo $$ > %s/pid; date +%%s%%N > %s/t0; exec %s", dir, dir, bin)
	for _, a := range args {
		script += " '" + a + "'"
	}
	cmd := exec.CommandContext(ctx, "tmux", "-L", t.sock, "-f", "/dev/null", "new-session", "-d", "-s", "bench",
		"-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "sh", "-c", script)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("tmux new-session: %w: %s", err, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err1 := os.ReadFile(filepath.Join(dir, "pid"))
		ns, err2 := os.ReadFile(filepath.Join(dir, "t0"))
		if err1 == nil && err2 == nil && len(bytes.TrimSpace(ns)) > 0 {
			pid, err1 := strconv.Atoi(strings.TrimSpace(string(p)))
			n, err2 := strconv.ParseInt(strings.TrimSpace(string(ns)), 10, 64)
			if err := errors.Join(err1, err2); err != nil {
				t.close()
				return nil, err
			}
			t.pid, t.t0 = pid, time.Unix(0, n)
			return t, nil
		}
		if time.Now().After(deadline) {
			t.close()
			return nil, errors.New("the tmux pane did not start the binary within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

func (t *tuiProc) tmux(args ...string) ([]byte, error) {
	return exec.Command("tmux", append([]string{"-L", t.sock}, args...)...).Output()
}

func (t *tuiProc) capture() (string, error) {
	out, err := t.tmux("capture-pane", "-p", "-t", "bench")
	return string(out), err
}

// waitFor polls the screen until ok says so, and returns the time since exec at that capture.
func (t *tuiProc) waitFor(ctx context.Context, timeout time.Duration, ok func(string) bool) (time.Duration, string, error) {
	deadline := time.Now().Add(timeout)
	for {
		screen, err := t.capture()
		at := time.Since(t.t0)
		if err == nil && ok(screen) {
			return at, screen, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, screen, fmt.Errorf("screen not as expected within %v (%v); last screen:\n%s", timeout, err, screen)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// keys types keys (tmux key names) into the pane; literal types text as it is.
func (t *tuiProc) keys(keys ...string) error {
	_, err := t.tmux(append([]string{"send-keys", "-t", "bench"}, keys...)...)
	return err
}

func (t *tuiProc) literal(text string) error {
	_, err := t.tmux("send-keys", "-t", "bench", "-l", text)
	return err
}

// close quits the TUI with q, waits for it to exit, and ends the tmux server.
func (t *tuiProc) close() {
	if t.pid != 0 {
		_ = t.keys("Escape")
		_ = t.keys("q")
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", t.pid)); err != nil {
				break
			}
		}
	}
	sock, err := t.tmux("display-message", "-p", "#{socket_path}")
	_, _ = t.tmux("kill-server")
	if p := strings.TrimSpace(string(sock)); err == nil && strings.Contains(p, t.sock) {
		os.Remove(p) // the server leaves its socket behind
	}
	os.RemoveAll(t.dir)
}

func nonEmpty(screen string) bool { return strings.TrimSpace(screen) != "" }

// measureFirstFrame launches `letterbox demo` n times.
func measureFirstFrame(ctx context.Context, bin string, n int, r *tuiReport) error {
	for range n {
		t, err := startTUI(ctx, bin, 160, 48, "demo")
		if err != nil {
			return err
		}
		first, _, err := t.waitFor(ctx, 10*time.Second, nonEmpty)
		var topics time.Duration
		if err == nil {
			topics, _, err = t.waitFor(ctx, 10*time.Second, func(s string) bool { return strings.Contains(s, "orders-billing-RETRY") })
		}
		t.close()
		if err != nil {
			return err
		}
		r.firstFrame = append(r.firstFrame, first)
		r.firstTopics = append(r.firstTopics, topics)
	}
	return nil
}

// measureIdle runs the TUI on the idle broker b, lets it settle, and takes its CPU over window.
func measureIdle(ctx context.Context, bin string, b *brokerProc, window time.Duration, r *tuiReport) error {
	t, err := startTUI(ctx, bin, 160, 48, "--service-url", b.serviceURL, "--admin-url", b.httpURL)
	if err != nil {
		return err
	}
	defer t.close()
	if _, _, err := t.waitFor(ctx, 10*time.Second, func(s string) bool { return strings.Contains(s, "connected") }); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	w := workload{pid: t.pid}
	cpu0, _, busy0, err := w.cpuSample()
	if err != nil {
		return err
	}
	b0, _ := processCPU(b.pid())
	t0 := time.Now()
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return ctx.Err()
	}
	cpu1, _, busy1, err := w.cpuSample()
	if err != nil {
		return err
	}
	b1, _ := processCPU(b.pid())
	r.idleWindow = time.Since(t0)
	r.idleCPU = (cpu1 - cpu0).Seconds() / r.idleWindow.Seconds()
	r.idleOthers = max(0, (busy1-busy0)-(cpu1-cpu0)-(b1-b0)).Seconds() / r.idleWindow.Seconds()
	r.idleRSS, err = processRSS(t.pid)
	return err
}

// browseDLQ is the DLQ the TUI browses: n dead letters of 1 KiB from one origin, all with the
// reason the browsing waits for on screen, on a fresh DLQ that a subscription keeps.
func browseDLQ(n int) dlqFill {
	origin := fmt.Sprintf("persistent://public/default/bench-browse-%d", time.Now().UnixNano())
	const order = `{"order":"o-1","amount_cents":4200,"note":"bench"} `
	payload := []byte(strings.Repeat(order, payloadSize/len(order)+1)[:payloadSize])
	return dlqFill{topic: origin + "-app-DLQ", sub: "app-DLQ-sub", n: n, letter: func(i int) *client.Message {
		return &client.Message{Payload: payload, Key: "k" + strconv.Itoa(i), Properties: map[string]string{
			client.PropertyRealTopic: origin, client.PropertyOriginMessageID: "1:" + strconv.Itoa(i) + ":0",
			client.PropertyReconsumeTimes: "16", "reason": "bench: a dead letter",
		}}
	}}
}

// measureDLQ fills a DLQ of n messages on b, opens it in the TUI and pages through it.
func measureDLQ(ctx context.Context, bin string, b *brokerProc, n, pages int, r *tuiReport, progress func(string, ...any)) error {
	progress("tui: producing a DLQ of %s dead letters", thousands(n))
	f := browseDLQ(n)
	dlq, sub := f.topic, f.sub
	took, err := fillDLQ(ctx, b.serviceURL, f)
	if err != nil {
		return fmt.Errorf("filling the DLQ: %w", err)
	}
	r.dlqN, r.dlqFill = n, took
	progress("tui: browsing it, %d pages", pages)
	t, err := startTUI(ctx, bin, 160, 48, "--service-url", b.serviceURL, "--admin-url", b.httpURL)
	if err != nil {
		return err
	}
	defer t.close()
	if _, _, err := t.waitFor(ctx, 10*time.Second, func(s string) bool { return strings.Contains(s, "connected") }); err != nil {
		return err
	}
	if err := errors.Join(t.keys(":"), t.literal("dlq "+dlq+" "+sub), t.keys("Enter")); err != nil {
		return err
	}
	local := dlq[strings.LastIndexByte(dlq, '/')+1:]
	_, screen, err := t.waitFor(ctx, 20*time.Second, func(s string) bool {
		return strings.Contains(s, "bench: a dead letter") && strings.HasPrefix(pageLine(s), "positions 1–")
	})
	if err != nil {
		return fmt.Errorf("opening %s: %w", local, err)
	}
	r.dlqFirst = pageLine(screen)
	for i := range pages {
		if err := t.keys("]"); err != nil {
			return err
		}
		want := fmt.Sprintf("positions %d–", (i+1)*50+1)
		if _, screen, err = t.waitFor(ctx, 20*time.Second, func(s string) bool { return strings.HasPrefix(pageLine(s), want) }); err != nil {
			return fmt.Errorf("page %d: %w", i+2, err)
		}
		r.dlqPages = i + 2
	}
	r.dlqShown = pageLine(screen)
	if r.dlqRSS, err = processRSS(t.pid); err != nil {
		return err
	}
	if r.dlqPeak, err = processHWM(t.pid); err != nil {
		return err
	}
	r.dlqBroker, _ = processRSS(b.pid())
	return nil
}

// pageLine is the screen's line that says which positions of the backlog the page shows
// ("backlog positions 51–100" on the dead letters screen, "positions 51–100" on the messages
// screen), as "positions 51–100", and the backlog of the line above it.
func pageLine(screen string) string {
	var backlog string
	for line := range strings.Lines(screen) {
		if m := backlogRe.FindString(line); m != "" {
			backlog = m
		}
		line = strings.TrimPrefix(strings.TrimSpace(line), "backlog ")
		if rest, ok := strings.CutPrefix(line, "letters "); ok {
			// The dead letters screen counting letters: "letters 1–50 of the backlog".
			if f := strings.Fields(rest); len(f) > 0 {
				return strings.Join(append([]string{"positions", f[0]}, strings.Fields(backlog)...), " ")
			}
		}
		if strings.HasPrefix(line, "positions ") {
			return strings.Join(append(strings.Fields(line), backlog), " ")
		}
	}
	return ""
}

var backlogRe = regexp.MustCompile(`· backlog [0-9.,]+[kM]?`)

// renderBenchmarks are the tui package's benchmarks the report shows.
const renderBenchmarks = "^(BenchmarkTopicsRender10k|BenchmarkFlowRender|BenchmarkTopicsFilterKeystroke100k)$"

// runTUIBenchmarks runs the tui package's render benchmarks and returns ns/op by name.
func runTUIBenchmarks(ctx context.Context, root string, count int) (map[string][]float64, error) {
	// Building the test binary waits its turn on a busy machine, and the 100,000-topic
	// benchmark builds its fake cluster for each of its runs.
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", renderBenchmarks,
		"-benchtime", "1s", "-count", strconv.Itoa(count), "./tui/")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go test -bench ./tui/: %w\n%s", err, out)
	}
	res := map[string][]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 4 && strings.HasPrefix(f[0], "Benchmark") && f[3] == "ns/op" {
			name, _, _ := strings.Cut(f[0], "-")
			if v, err := strconv.ParseFloat(f[2], 64); err == nil {
				res[name] = append(res[name], v)
			}
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("go test -bench ./tui/: no results\n%s", out)
	}
	return res, nil
}

// measureTUI takes every TUI figure, recording what fails and carrying on.
func measureTUI(ctx context.Context, rep *report, o options, bin string, progress func(string, ...any), failed func(string, error)) {
	r := &rep.tui
	progress("tui: render benchmarks (go test -bench ./tui/)")
	var err error
	if r.renders, err = runTUIBenchmarks(ctx, rep.root, 3); err != nil {
		failed("tui render benchmarks", err)
	}
	progress("tui: first frame of letterbox demo, %d launches", o.starts)
	if err := measureFirstFrame(ctx, bin, o.starts, r); err != nil {
		failed("tui first frame", err)
	}
	// A broker of its own, so that the million dead letters weigh on nothing else.
	b, _, err := startDLQBroker(ctx, bin)
	if err != nil {
		failed("tui: letterbox broker", err)
		return
	}
	defer func() {
		if err := b.stop(); err != nil {
			failed("tui: stopping the letterbox broker", err)
		}
	}()
	r.idleWindow = 10 * time.Second
	progress("tui: idle CPU (%v)", r.idleWindow)
	if err := measureIdle(ctx, bin, b, r.idleWindow, r); err != nil {
		failed("tui idle CPU", err)
		r.idleWindow = 0
	}
	if err := measureDLQ(ctx, bin, b, o.dlqN, 20, r, progress); err != nil {
		failed("tui DLQ browsing", err)
		r.dlqRSS = 0
	}
	if ctx.Err() == nil {
		if err := measureLarge(ctx, bin, &r.large, progress); err != nil {
			failed(fmt.Sprintf("tui with %s topics", thousands(largeTopics)), err)
			r.large.listed, r.large.idleWindow = 0, 0
		}
	}
}

// markdown renders the TUI section.
func (r *tuiReport) markdown(b *strings.Builder, starts int) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## TUI\n\n")
	p("The real binary in a 160×48 tmux pane (a tmux server of its own, HOME and XDG directories fresh and temporary); the render " +
		"times are the `tui` package's Go benchmarks.\n\n")
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	row := func(metric, measured, target string, met *bool) {
		v := "not measured"
		if met != nil {
			v = "not met"
			if *met {
				v = "met"
			}
		}
		p("| %s | %s | %s | %s |\n", metric, measured, target, v)
	}
	if len(r.firstFrame) > 0 {
		m := median(r.firstFrame)
		row(fmt.Sprintf("first frame of `letterbox demo`, median (best) of %d", len(r.firstFrame)),
			fmt.Sprintf("%.0f (%.0f) ms; topics listed at %.0f ms", millis(m), millis(slices.Min(r.firstFrame)), millis(median(r.firstTopics))),
			"≤ 300 ms", new(m <= targetFirstFrame))
	} else {
		row(fmt.Sprintf("first frame of `letterbox demo`, median of %d", starts), notMeasuredText, "≤ 300 ms", nil)
	}
	bench := func(metric, name string) {
		if v := r.renders[name]; len(v) > 0 {
			m := time.Duration(medianF(v))
			row(metric, fmt.Sprintf("%.2f ms (`%s`, median of %d)", millis(m), name, len(v)), "< 4 ms", new(m < targetRender))
		} else {
			row(metric, notMeasuredText, "< 4 ms", nil)
		}
	}
	bench("topics screen, 10,000 topics, 160×48: one frame", "BenchmarkTopicsRender10k")
	bench("flow screen, 160×48: one frame", "BenchmarkFlowRender")
	if r.idleWindow > 0 {
		row(fmt.Sprintf("idle CPU of the TUI over %v", r.idleWindow.Round(time.Second)),
			fmt.Sprintf("%.2f %% of a core (RSS %.1f MB)", 100*r.idleCPU, float64(r.idleRSS)/1e6), "< 3 %", new(r.idleCPU < targetIdleCPU))
	} else {
		row("idle CPU of the TUI", notMeasuredText, "< 3 %", nil)
	}
	if r.dlqRSS > 0 {
		row(fmt.Sprintf("RSS browsing a DLQ of %s messages", thousands(r.dlqN)),
			fmt.Sprintf("%.1f MB (peak %.1f MB) after %d pages", float64(r.dlqRSS)/1e6, float64(r.dlqPeak)/1e6, r.dlqPages),
			"< 200 MB", new(r.dlqPeak < targetDLQRSS))
	} else {
		row("RSS browsing a DLQ of 1,000,000 messages", notMeasuredText, "< 200 MB", nil)
	}
	r.large.markdown(row, r.renders)
	p("\n- First frame: from the exec of `letterbox demo` (the pane's shell records the time, then execs the binary) to the first " +
		"capture of the pane (`tmux capture-pane`, polled every few milliseconds) with anything on it; \"topics listed\" is the first " +
		"capture showing the demo's topics (its broker started, the workload's topics created, the admin API read). Each launch quits with `q`.\n")
	p("- Render times: `go test -run '^$' -bench '%s' -benchtime 1s -count 3 ./tui/`: "+
		"`View()` of the whole app with the topics screen over a fake cluster of 10,000 topics in 10 namespaces, and with the flow screen "+
		"over the fake's orders → retry → DLQ reading of 100 dead and 100 retry letters (a fixed snapshot, not the live demo).\n", renderBenchmarks)
	if r.idleWindow > 0 {
		p("- Idle CPU: utime + stime of the TUI process (`/proc/<pid>/stat`) over %v, 2 s after it connected to an idle "+
			"`letterbox broker --in-memory` of its own through `--service-url`/`--admin-url`, the topics screen open and refreshing "+
			"(other processes used %.2f CPUs meanwhile).\n", r.idleWindow.Round(time.Second), r.idleOthers)
	}
	if r.dlqN > 0 {
		p("- DLQ browsing: %s dead letters of 1 KiB, one entry each, produced in %.1f s into a DLQ with a subscription on that broker "+
			"(in memory: the broker held %.0f MB, in its own process); the TUI opened it (`:dlq TOPIC SUB`) and paged with `]` "+
			"%d times, waiting for each page; RSS is the TUI process's `VmRSS` after the last page, peak its `VmHWM`.",
			thousands(r.dlqN), r.dlqFill.Seconds(), float64(r.dlqBroker)/1e6, max(r.dlqPages-1, 0))
		if r.dlqShown != "" {
			p(" The screen's line on the last page: \"%s\".", r.dlqShown)
		}
		p("\n")
	}
	if r.large.setup > 0 {
		r.large.notes(b)
	}
}
