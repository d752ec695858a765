package main

// The child process of the scan part (scan.go): the bench binary re-executed with
// scanChildArg, so that the heap and peak RSS it reports are those of one reading of the DLQ
// and nothing else the bench holds (the fill's producer, other parts' garbage). It reads the
// whole DLQ once in one of four ways (scanModes), prints one JSON line with what it measured
// on stdout, and exits; errors go to stderr with exit status 1.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// scanChildArg, as the first argument, makes the bench binary a scan child. It is not a flag,
// so that -help does not list it and the bench's own flags never parse it.
const scanChildArg = "scan-child"

// The ways a child reads the DLQ.
const (
	modeScan     = "scan"     // triage.Scan, no filter: the TUI's scan (stats and every position kept)
	modeFiltered = "filtered" // triage.Scan with a filter
	modeOfficial = "official" // a bare reader of the official Go client
	modeOurs     = "ours"     // a bare reader of our client, to tell the client's cost from the engine's
	modeFacets   = "facets"   // triage.Scan counting facets, then splitting them into causes: the TUI's scan since causes
)

// scanReceiverQueue is the receiver queue of every reader here: what triage.Scan asks for, so
// that the bare readers get the same flow-control window as the scan.
const scanReceiverQueue = 2000

// scanChildResult is what a child measured, as JSON on its stdout.
type scanChildResult struct {
	Mode    string `json:"mode"`
	Read    int64  `json:"read"`    // letters read
	Matched int64  `json:"matched"` // letters the filter selected (scans)
	Indexed int    `json:"indexed"` // positions the result keeps (scans)
	// Elapsed is from creating the reader (calling Scan) to the reader closed (Scan's return);
	// Closing is the part of it after the last letter: Scan closes its reader before it
	// returns, and the bare readers are closed in the timed span too, alike.
	Elapsed time.Duration `json:"elapsed_ns"`
	Closing time.Duration `json:"closing_ns"`
	// CPU over Elapsed: the child's own, the broker's, and other processes' in cores (the
	// machine's busy time less the child, the broker and the bench waiting for the child).
	CPU       time.Duration `json:"cpu_ns"`
	BrokerCPU time.Duration `json:"broker_cpu_ns"`
	Others    float64       `json:"others"`
	// BaseHeap and BaseRSS: after a GC at the child's start, before any client exists.
	BaseHeap uint64 `json:"base_heap_inuse"`
	BaseRSS  int64  `json:"base_rss"`
	// Mallocs are the heap objects the process allocated over Elapsed.
	Mallocs uint64 `json:"mallocs"`
	// After the reading, a GC with the result still referenced: the heap it keeps.
	HeapInuse uint64 `json:"heap_inuse"`
	HeapAlloc uint64 `json:"heap_alloc"`
	RSS       int64  `json:"rss"`
	HWM       int64  `json:"hwm"` // VmHWM: the peak RSS of the child's whole life
	// What the scan counted, to check it read the letters the fill wrote.
	DistinctKeys int `json:"distinct_keys"`
	Reasons      int `json:"reasons"`
	Origins      int `json:"origins"`
	Subs         int `json:"subscriptions"`
	// Causes are the groups a facets reading found, "LETTERS LABEL" each; Facets how many
	// facets it summarised.
	Causes []string `json:"causes,omitempty"`
	Facets int      `json:"facets,omitempty"`
	// The Go runtime's settings the child ran with: the environment's GOGC and GOMEMLIMIT
	// (empty: the defaults) and GOMAXPROCS.
	GOGC       string `json:"gogc"`
	GOMEMLIMIT string `json:"gomemlimit"`
	GOMAXPROCS int    `json:"gomaxprocs"`

	// settle, taken by the parent, is how long after the child's exit the broker took to drop
	// the reader's subscription (and answer an admin call on the topic again); unsettled: it
	// had not within settleLimit, and was killed.
	settle    time.Duration
	unsettled bool
}

func (r scanChildResult) rate() float64 { return float64(r.Read) / r.Elapsed.Seconds() }

// scanChildMain runs a child; args follow scanChildArg.
func scanChildMain(args []string) int {
	fs := flag.NewFlagSet(scanChildArg, flag.ContinueOnError)
	var (
		mode, url, adminURL, topic, filter, profile string
		n, brokerPID                                int
		timeout                                     time.Duration
	)
	fs.StringVar(&mode, "mode", modeScan, "scan, filtered, official or ours")
	fs.StringVar(&url, "url", "", "the broker's service URL")
	fs.StringVar(&adminURL, "admin", "", "the broker's admin URL (the scan asks it for the progress total and the origin's subscriptions)")
	fs.StringVar(&topic, "topic", "", "the DLQ")
	fs.StringVar(&filter, "filter", "", "the filtered scan's expression")
	fs.IntVar(&n, "n", 0, "letters the DLQ holds")
	fs.IntVar(&brokerPID, "broker-pid", 0, "the broker process, whose CPU is charged")
	fs.DurationVar(&timeout, "timeout", 2*time.Minute, "give up after this")
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the reading to `FILE`, and its heap profile beside it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "%s %s: %v\n", scanChildArg, mode, err)
		return 1
	}
	if url == "" || topic == "" || n <= 0 || brokerPID <= 0 {
		return fail(errors.New("-url, -topic, -n and -broker-pid are required"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := childReading(ctx, scanChildConfig{mode: mode, url: url, adminURL: adminURL, topic: topic, filter: filter,
		n: n, brokerPID: brokerPID, profile: profile})
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (timed out after %v)", err, timeout)
		}
		return fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return fail(err)
	}
	return 0
}

type scanChildConfig struct {
	mode, url, adminURL, topic, filter, profile string
	n, brokerPID                                int
}

// childReading takes the process's baseline, performs the reading c.mode names with the CPU
// of everyone sampled around it, and measures the heap and RSS it leaves.
func childReading(ctx context.Context, c scanChildConfig) (res scanChildResult, err error) {
	res = scanChildResult{Mode: c.mode, GOGC: os.Getenv("GOGC"), GOMEMLIMIT: os.Getenv("GOMEMLIMIT"), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	res.BaseHeap = ms.HeapInuse
	if res.BaseRSS, err = processRSS(os.Getpid()); err != nil {
		return res, err
	}

	// read performs the reading being measured and returns what must stay referenced until
	// the heap is measured (the scan's Result: the TUI keeps it).
	var read func(ctx context.Context) (keep any, err error)
	switch c.mode {
	case modeScan, modeFiltered, modeFacets:
		read, err = scanRead(ctx, c, &res)
	case modeOfficial:
		read, err = officialRead(ctx, c, &res)
	case modeOurs:
		read, err = oursRead(ctx, c, &res)
	default:
		err = fmt.Errorf("unknown mode %q", c.mode)
	}
	if err != nil {
		return res, err
	}

	if c.profile != "" {
		f, err := os.Create(c.profile)
		if err != nil {
			return res, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return res, err
		}
	}
	self, bench := os.Getpid(), os.Getppid()
	sample := func() (own, broker, parent, busy time.Duration, err error) {
		var errs [4]error
		own, errs[0] = processCPU(self)
		broker, errs[1] = processCPU(c.brokerPID)
		parent, errs[2] = processCPU(bench)
		busy, errs[3] = machineBusy()
		return own, broker, parent, busy, errors.Join(errs[:]...)
	}
	own0, broker0, parent0, busy0, err := sample()
	if err != nil {
		return res, err
	}
	runtime.ReadMemStats(&ms)
	mallocs0 := ms.Mallocs
	t0 := time.Now()
	keep, err := read(ctx)
	res.Elapsed = time.Since(t0)
	runtime.ReadMemStats(&ms)
	res.Mallocs = ms.Mallocs - mallocs0
	if c.profile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return res, err
	}
	own1, broker1, parent1, busy1, err := sample()
	if err != nil {
		return res, err
	}
	res.CPU, res.BrokerCPU = own1-own0, broker1-broker0
	res.Others = max(0, (busy1-busy0)-res.CPU-res.BrokerCPU-(parent1-parent0)).Seconds() / res.Elapsed.Seconds()

	runtime.GC()
	runtime.ReadMemStats(&ms)
	res.HeapInuse, res.HeapAlloc = ms.HeapInuse, ms.HeapAlloc
	if c.profile != "" {
		// Beside the CPU profile, the heap's: what the reading keeps (inuse) and what it
		// allocated on the way (alloc), which is what raises the peak RSS.
		if err := writeHeapProfile(strings.TrimSuffix(c.profile, ".pprof") + ".heap.pprof"); err != nil {
			return res, err
		}
	}
	if res.RSS, err = processRSS(self); err != nil {
		return res, err
	}
	if res.HWM, err = processHWM(self); err != nil {
		return res, err
	}
	runtime.KeepAlive(keep)
	return res, nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// scanRead prepares triage.Scan as the TUI calls it: the admin client for the progress
// total, and a progress callback that keeps the latest report, as the TUI's does for its
// next frame.
func scanRead(ctx context.Context, c scanChildConfig, res *scanChildResult) (func(context.Context) (any, error), error) {
	cl, err := client.New(client.Options{ServiceURL: c.url, OperationTimeout: 10 * time.Second, Logger: ourLogger})
	if err != nil {
		return nil, err
	}
	o := triage.ScanOptions{Topic: c.topic, Facets: c.mode == modeFacets}
	if c.adminURL != "" {
		if o.Admin, err = admin.New(admin.Options{URL: c.adminURL, Timeout: 10 * time.Second}); err != nil {
			return nil, err
		}
	}
	if c.mode == modeFiltered {
		if o.Filter, err = expr.Parse(c.filter, time.Now()); err != nil {
			return nil, fmt.Errorf("filter %q: %w", c.filter, err)
		}
	}
	var last triage.Progress
	var doneAt time.Time
	o.Progress = func(p triage.Progress) {
		last = p
		if p.Done {
			doneAt = time.Now() // the last letter counted; Scan then closes its reader
		}
	}
	return func(ctx context.Context) (any, error) {
		r, err := triage.Scan(ctx, cl, o)
		if err != nil {
			return nil, err
		}
		res.Closing = time.Since(doneAt)
		if !r.Complete || !last.Done {
			return nil, fmt.Errorf("scan incomplete after %d letters", r.Read)
		}
		res.Read, res.Matched, res.Indexed = r.Read, r.Stats.Letters, len(r.Matches)
		res.DistinctKeys, res.Reasons, res.Origins, res.Subs = r.Stats.DistinctKeys, len(r.Stats.ByReason), len(r.Stats.ByOrigin), len(r.Stats.BySubscription)
		if r.Facets != nil {
			// The split is part of the reading: the TUI shows it with the counts.
			split := r.Facets.Causes()
			for _, g := range split.Groups {
				res.Causes = append(res.Causes, fmt.Sprintf("%d %s", g.Letters, g.Label))
			}
			res.Facets = len(r.Facets.Summary())
		}
		// The client stays open, as the TUI's does; the result is what the TUI keeps.
		return []any{r, cl}, nil
	}, nil
}

// officialRead prepares a reader of the official Go client from the earliest message, which
// reads until it has had every letter and does nothing with them.
func officialRead(ctx context.Context, c scanChildConfig, res *scanChildResult) (func(context.Context) (any, error), error) {
	cl, err := pulsar.NewClient(pulsar.ClientOptions{URL: c.url, ConnectionTimeout: 5 * time.Second, OperationTimeout: 10 * time.Second, Logger: clientLogger})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (any, error) {
		var r pulsar.Reader
		err := within(ctx, "creating the official reader", func() (err error) {
			r, err = cl.CreateReader(pulsar.ReaderOptions{Topic: c.topic, StartMessageID: pulsar.EarliestMessageID(),
				ReceiverQueueSize: scanReceiverQueue})
			return err
		})
		if err != nil {
			return nil, err
		}
		err = readAll(ctx, c.n, &res.Read, func(ctx context.Context) error { _, err := r.Next(ctx); return err })
		t := time.Now()
		if cerr := within(ctx, "closing the official reader", func() error { r.Close(); return nil }); err == nil {
			err = cerr
		}
		res.Closing = time.Since(t)
		return cl, err
	}, nil
}

// oursRead prepares the same bare reader with our client.
func oursRead(ctx context.Context, c scanChildConfig, res *scanChildResult) (func(context.Context) (any, error), error) {
	cl, err := client.New(client.Options{ServiceURL: c.url, OperationTimeout: 10 * time.Second, Logger: ourLogger})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (any, error) {
		r, err := cl.CreateReader(ctx, client.ReaderOptions{Topic: c.topic, StartMessageID: client.EarliestMessageID(),
			ReceiverQueueSize: scanReceiverQueue})
		if err != nil {
			return nil, fmt.Errorf("creating our reader: %w", err)
		}
		err = readAll(ctx, c.n, &res.Read, func(ctx context.Context) error { _, err := r.Next(ctx); return err })
		t := time.Now()
		r.Close()
		res.Closing = time.Since(t)
		return cl, err
	}, nil
}

// readAll calls next until it has read n letters, counting them in *read. One context serves
// every call, cancelled by a watchdog when no letter comes for stallLimit: a deadline per call
// would cost the bare readers a timer per letter that they do not need.
func readAll(ctx context.Context, n int, read *int64, next func(context.Context) error) error {
	var count atomic.Int64
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		last, lastAt := int64(-1), time.Now()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if c := count.Load(); c != last {
				last, lastAt = c, time.Now()
			} else if time.Since(lastAt) > stallLimit {
				cancel(fmt.Errorf("stalled: nothing for %v after %d letters", stallLimit, c))
				return
			}
		}
	}()
	defer func() { *read = count.Load() }()
	for i := range int64(n) {
		if err := next(ctx); err != nil {
			if cause := context.Cause(ctx); cause != nil {
				return cause
			}
			return fmt.Errorf("after %d letters: %w", i, err)
		}
		count.Store(i + 1)
	}
	return nil
}
