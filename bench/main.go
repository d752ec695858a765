// Command bench measures the letterbox broker with the official Go client and compares it with
// the ceiling the client allows on the same machine, measured in the same run against a null
// broker. It writes docs/performance.md (make bench):
//
//	go run ./bench [-out docs/performance.md] [-duration 10s]
//
// It builds the letterbox binary, runs `letterbox broker --in-memory` and, for the durable
// figure, `letterbox broker --data DIR` as separate processes, and fails with a message, rather
// than hangs, when a broker stalls or errors. Beyond the broker (part "broker") it puts our
// client beside the official one on the same broker, times client/replay with and without a rate
// limit and client/triage's whole-DLQ scan beside a bare official reader, takes the TUI's figures
// from the real binary in tmux and the tui package's benchmarks, times the admin API while
// stalled requests hold connections open, times starts with 10 GiB stored, counts the
// descriptors of a broker reading 20,000 sealed segments, weighs 10,000 topics at rest and times
// 100 busy ones beside the forwarding null broker, weighs a stream consumed as it comes and a
// million kept messages in memory, and the CPU a Go test pays for a pulsartest broker's start
// and stop; -only runs some of these parts.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

type options struct {
	out       string
	window    time.Duration
	warmup    time.Duration
	rate      int
	starts    int
	subType   string
	nullBatch int
	rounds    int
	only      map[string]bool // parts to run; empty: all
	replayN   int
	dlqN      int
	scanN     int
	// scanProfile, when set, is a directory for CPU and heap profiles of the scan part's readings.
	scanProfile string
	// keepStored keeps the stored part's data set in the OS temp directory for the next run.
	keepStored bool
}

// parts of the bench, for -only.
var partNames = []string{"broker", "clients", "replay", "scan", "tui", "admin", "stored", "files", "many", "memory", "embed"}

func (o options) part(name string) bool { return len(o.only) == 0 || o.only[name] }

func main() {
	if len(os.Args) > 1 && os.Args[1] == scanChildArg {
		os.Exit(scanChildMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == echoChildArg {
		os.Exit(echoChildMain())
	}
	var o options
	flag.StringVar(&o.out, "out", "", "also write the report, Markdown, to `FILE`")
	flag.DurationVar(&o.window, "duration", 10*time.Second, "measured window of the headline runs (supporting runs take half)")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured warm-up before each window")
	flag.IntVar(&o.rate, "rate", 50_000, "publish rate of the latency runs, msg/s")
	flag.IntVar(&o.starts, "starts", 5, "broker starts to time")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of the headline, clients, replay and scan runs, each side by side with its reference; figures are the rounds' medians")
	flag.StringVar(&o.subType, "subscription", "shared", "consumer subscription type: shared or exclusive")
	flag.IntVar(&o.nullBatch, "null-batch", 127, "messages in the batch entry the null broker replays (127: what the default producer batches of 1 KiB messages into 128 KiB)")
	flag.IntVar(&o.replayN, "replay", 100_000, "dead letters of the replay run")
	flag.IntVar(&o.dlqN, "dlq", 1_000_000, "dead letters of the DLQ the TUI browses")
	flag.IntVar(&o.scanN, "scan", 1_000_000, "dead letters of the DLQ the scan reads")
	flag.StringVar(&o.scanProfile, "scan-profile", "", "write CPU and heap profiles of the scan's readings to `DIR`")
	flag.BoolVar(&o.keepStored, "keep-stored", false, "keep the stored part's 10 GiB data set in the OS temp directory for the next run (default: removed when done)")
	only := flag.String("only", "", "run only these comma-separated parts: "+strings.Join(partNames, ", ")+" (default: all)")
	flag.Parse()
	for p := range strings.SplitSeq(*only, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !slices.Contains(partNames, p) {
			fmt.Fprintf(os.Stderr, "bench: -only: unknown part %q (parts: %s)\n", p, strings.Join(partNames, ", "))
			os.Exit(2)
		}
		if o.only == nil {
			o.only = map[string]bool{}
		}
		o.only[p] = true
	}
	if flag.NArg() > 0 || o.replayN <= 0 || o.dlqN <= 0 || o.scanN <= 0 || o.window <= 0 || o.warmup < 0 || o.rate <= 0 || o.starts <= 0 || o.rounds <= 0 || o.nullBatch <= 0 ||
		(o.subType != "shared" && o.subType != "exclusive") {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench [-out FILE] [-duration 10s] [-warmup 1s] [-rate 50000] [-starts 5] [-rounds 3] [-subscription shared|exclusive] [-null-batch 127] [-replay 100000] [-dlq 1000000] [-scan 1000000] [-scan-profile DIR] [-keep-stored] [-only PARTS]")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := measure(ctx, o, func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) })
	text := rep.markdown()
	fmt.Print(text)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	}
	if len(rep.failures) > 0 {
		fmt.Fprintf(os.Stderr, "bench: FAILED:\n  %s\n", strings.Join(rep.failures, "\n  "))
		os.Exit(1)
	}
}

// measure runs every measurement, recording what fails and carrying on with what does not
// depend on it. The headline runs alternate between the brokers, round after round, so that
// whatever else the machine is doing weighs on all alike and each product round has its
// ceiling round beside it; the report takes the medians of the rounds (rounds.go).
func measure(ctx context.Context, o options, progress func(string, ...any)) *report {
	rep := &report{
		date: time.Now(), cpus: runtime.NumCPU(), cpuModel: cpuModel(), goVersion: runtime.Version(),
		platform: runtime.GOOS + "/" + runtime.GOARCH, loadBefore: loadAverage(),
		window: o.window, shortWindow: max(o.window/2, 2*time.Second), warmup: o.warmup,
		rate: o.rate, subType: o.subType, nullBatch: o.nullBatch, rounds: o.rounds,
	}
	defer func() { rep.loadAfter = loadAverage() }()
	failed := func(what string, err error) {
		progress("%s: FAILED: %v", what, err)
		rep.failures = append(rep.failures, what+": "+err.Error())
	}
	speed := func(into **machineSpeed) {
		if ctx.Err() != nil {
			return
		}
		progress("timing loopback TCP: the machine's speed")
		var err error
		if *into, err = measureMachineSpeed(speedStreamBytes, speedPings); err != nil {
			failed("the machine's speed", err)
		}
	}

	// First, while the process is idle: its own CPU time is the figure.
	if o.part("embed") && ctx.Err() == nil {
		measureEmbed(ctx, &rep.embed, progress, failed)
	}
	speed(&rep.speedBefore)
	// Deferred before the brokers' close, so it runs after it: the machine as the run left it.
	defer speed(&rep.speedAfter)
	k := startBrokers(ctx, rep, o, progress, failed)
	defer k.close()
	if o.part("broker") {
		k.measureBroker(ctx, rep, o)
	}
	measureParts(ctx, rep, o, k, progress, failed)
	return rep
}

// brokers are what a bench run measures against: the null broker (the ceiling), the letterbox
// broker and the durable one, and the directory of the binary they run.
type brokers struct {
	// null and lb are nil when they failed to start or failed a run: the runs left on them
	// are skipped.
	null     *nullBroker
	lb       *brokerProc
	durable  *durableBench // nil without the broker part
	binDir   string        // "" when it could not be made
	progress func(string, ...any)
	failed   func(string, error)
}

// startBrokers starts the null broker (for the broker part), builds the binary and starts the
// letterbox broker from it, and, for the broker part, the durable one. What fails to start is
// reported and left nil.
func startBrokers(ctx context.Context, rep *report, o options, progress func(string, ...any), failed func(string, error)) *brokers {
	k := &brokers{progress: progress, failed: failed}
	if o.part("broker") {
		var err error
		if k.null, err = startNullBroker(o.nullBatch, payloadSize); err != nil {
			failed("null broker", err)
			k.null = nil
		}
	}
	// The binary stays until the end: the durable broker is started again from it.
	binDir, err := os.MkdirTemp("", "letterbox-bench-")
	if err == nil {
		k.binDir = binDir
		k.lb, err = prepareBroker(ctx, rep, o, progress, binDir)
	}
	if err != nil {
		failed("letterbox broker", err)
		k.lb = nil
	}
	if k.lb != nil && o.part("broker") {
		k.durable = startDurable(ctx, k.bin(), &rep.durable, progress, failed)
	}
	return k
}

// bin is the letterbox binary the brokers run.
func (k *brokers) bin() string { return filepath.Join(k.binDir, "letterbox") }

// close stops what is still running and removes the binary.
func (k *brokers) close() {
	if k.durable != nil {
		k.durable.close()
	}
	if k.lb != nil {
		if err := k.lb.stop(); err != nil {
			k.failed("stopping the letterbox broker", err)
		}
	}
	if k.binDir != "" {
		os.RemoveAll(k.binDir)
	}
	if k.null != nil {
		k.null.Close()
	}
}

// run performs w against the letterbox broker (onBroker) or the null broker and returns its
// result, nil when it failed or was skipped. After a failure, the runs left on that broker
// are skipped.
func (k *brokers) run(ctx context.Context, onBroker bool, name string, w workload) *result {
	if ctx.Err() != nil || (onBroker && k.lb == nil) || (!onBroker && k.null == nil) {
		return nil
	}
	w.name = name
	if onBroker {
		w.url, w.pid = k.lb.serviceURL, k.lb.pid()
	} else {
		w.url = k.null.url
	}
	k.progress("%s (%v)", name, w.warmup+w.window)
	sends0, msgs0 := int64(0), int64(0)
	if k.null != nil {
		sends0, msgs0 = k.null.sends.Load(), k.null.sentMsgs.Load()
	}
	res, err := w.run(ctx)
	if err == nil && onBroker {
		err = k.lb.alive()
	}
	if err != nil {
		k.failed(name, err)
		if onBroker {
			_ = k.lb.stop()
			k.lb = nil
		} else {
			k.null.Close()
			k.null = nil
		}
		return nil
	}
	if !onBroker && w.produce {
		if n := k.null.sends.Load() - sends0; n > 0 {
			res.batchMsgs = float64(k.null.sentMsgs.Load()-msgs0) / float64(n)
		}
	}
	return &res
}

// measureBroker is the broker part: the head-to-head rounds of the three brokers, then the
// paced, producer-only and consumer-only runs and the durable broker's recovery.
func (k *brokers) measureBroker(ctx context.Context, rep *report, o options) {
	subType := pulsar.Shared
	if o.subType == "exclusive" {
		subType = pulsar.Exclusive
	}
	head := workload{subType: subType, produce: true, consume: true, warmup: o.warmup, window: o.window}
	short := head
	short.window = rep.shortWindow
	paced := short
	paced.rate = o.rate
	prodOnly := short
	prodOnly.consume = false
	consOnly := short
	consOnly.produce = false

	// Each round runs the three brokers one after the other: the null broker's run sits between
	// the two products' runs that are measured against it.
	for i := range o.rounds {
		round := fmt.Sprintf(" [round %d/%d]", i+1, o.rounds)
		var h headRound
		h.broker = k.run(ctx, true, "letterbox: producer + consumer"+round, head)
		h.ceiling = k.run(ctx, false, "null: producer + consumer"+round, head)
		h.durable = k.durable.run(ctx, "letterbox --data: producer + consumer"+round, head)
		rep.head = append(rep.head, h)
	}
	rep.brokerPaced = k.run(ctx, true, fmt.Sprintf("letterbox: producer + consumer, paced at %d msg/s", o.rate), paced)
	// Paced without a consumer: against the null broker one would take all the CPU it can get,
	// whereas the letterbox consumer only gets what the producer sends.
	rep.nullPaced = k.run(ctx, false, fmt.Sprintf("null: producer only, paced at %d msg/s", o.rate), withoutConsumer(paced))
	rep.durable.paced = k.durable.run(ctx, fmt.Sprintf("letterbox --data: producer + consumer, paced at %d msg/s", o.rate), paced)
	rep.nullProd = k.run(ctx, false, "null: producer only", prodOnly)
	rep.nullCons = k.run(ctx, false, "null: consumer only", consOnly)
	// Last on the letterbox broker: nothing consumes what it leaves behind.
	rep.brokerProd = k.run(ctx, true, "letterbox: producer only", prodOnly)
	k.durable.recover(ctx, &rep.durable, head)
}

// measureReplayPart times the replay on a broker of its own: the headline's holds what its
// producer-only run left behind, over a GiB, and with it the replay's broker took three times
// the CPU per letter (0.86 s against 0.29 s for 100,000 letters) and the replay half the rate.
// That cost is the backlog's, a broker figure, not the replay's.
func measureReplayPart(ctx context.Context, rep *report, o options, bin string, progress func(string, ...any), failed func(string, error)) {
	b, err := startBroker(ctx, bin, "--in-memory")
	if err != nil {
		failed("replay: starting its broker", err)
		return
	}
	defer b.stop()
	measureReplay(ctx, &rep.replay, b, bin, o, progress, failed)
	// Then once at a rate limit, on a fresh DLQ: its figure is the limiter's accuracy, which
	// rounds would not sharpen.
	if ctx.Err() == nil {
		progress("replay at %d msg/s", replayLimitRate)
		if rep.replay.limited, err = benchReplayLimit(ctx, b, progress); err != nil {
			failed(fmt.Sprintf("replay at --rate %d", replayLimitRate), err)
		}
	}
}

// measureParts runs the parts beyond the broker that o asks for, each with the letterbox
// binary (and the clients part on the running broker).
func measureParts(ctx context.Context, rep *report, o options, k *brokers, progress func(string, ...any), failed func(string, error)) {
	if o.part("clients") && k.lb != nil && ctx.Err() == nil {
		rep.clients = compareClients(ctx, k.lb, o, rep.shortWindow, progress, failed)
	}
	if o.part("replay") && k.lb != nil && ctx.Err() == nil {
		measureReplayPart(ctx, rep, o, k.bin(), progress, failed)
	}
	if o.part("scan") && k.lb != nil && ctx.Err() == nil {
		measureScan(ctx, &rep.scan, o, k.bin(), progress, failed)
	}
	if o.part("tui") && k.lb != nil && ctx.Err() == nil {
		measureTUI(ctx, rep, o, k.bin(), progress, failed)
	}
	if o.part("admin") && k.lb != nil && ctx.Err() == nil {
		measureAdmin(ctx, &rep.admin, k.bin(), progress, failed)
	}
	if o.part("many") && k.lb != nil && ctx.Err() == nil {
		measureMany(ctx, &rep.many, k.bin(), o.rounds, progress, failed)
	}
	if o.part("memory") && k.lb != nil && ctx.Err() == nil {
		measureMemory(ctx, &rep.memory, k.bin(), progress, failed)
	}
	if o.part("stored") && k.lb != nil && ctx.Err() == nil {
		measureStored(ctx, &rep.stored, o, k.bin(), progress, failed)
	}
	if o.part("files") && k.lb != nil && ctx.Err() == nil {
		measureFiles(ctx, &rep.files, k.bin(), progress, failed)
	}
}

// prepareBroker builds the binary, times its starts, and leaves one broker running, idle for a
// second, whose RSS it records.
func prepareBroker(ctx context.Context, rep *report, o options, progress func(string, ...any), dir string) (*brokerProc, error) {
	progress("building the letterbox binary")
	bin, root, err := buildBroker(ctx, dir)
	if err != nil {
		return nil, err
	}
	rep.revision, rep.root = revision(ctx, root), root
	progress("timing %d broker starts", o.starts)
	for range o.starts {
		b, err := startBroker(ctx, bin)
		if err != nil {
			return nil, err
		}
		rep.starts = append(rep.starts, b.startup)
		if err := b.stop(); err != nil {
			return nil, err
		}
	}
	b, err := startBroker(ctx, bin)
	if err != nil {
		return nil, err
	}
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
		b.kill()
		return nil, ctx.Err()
	}
	if rep.idleRSS, err = processRSS(b.pid()); err != nil {
		b.kill()
		return nil, fmt.Errorf("idle RSS: %w", err)
	}
	return b, nil
}

func withoutConsumer(w workload) workload {
	w.consume = false
	return w
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
