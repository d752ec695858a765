package main

// The embed part: what a Go test pays to start and stop a broker in its own process through
// pulsartest: New (the broker on 127.0.0.1, its admin API, a client of that API) and then
// Close, in the bench process, embedN times after a warm-up; in memory, then on a fresh data
// directory each time. The bench process's CPU time (getrusage: user + system, the garbage
// collector's included) over the loop, divided by the starts, with the wall time and the bytes
// allocated per start and stop.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/letterbox-dev/letterbox/pulsartest"
)

const (
	embedN      = 200
	embedWarmup = 20
)

// embedReport is what the embed part measured (nil runs: not measured).
type embedReport struct {
	n               int
	memory, durable *embedRun
}

// embedRun is one kind of start and stop, per start and stop.
type embedRun struct {
	cpu, wall time.Duration
	alloc     uint64 // bytes allocated
}

// measureEmbed times the starts and stops.
func measureEmbed(ctx context.Context, r *embedReport, progress func(string, ...any), failed func(string, error)) {
	r.n = embedN
	dir, err := os.MkdirTemp("", "letterbox-bench-embed-")
	if err != nil {
		failed("embed", err)
		return
	}
	defer os.RemoveAll(dir)
	quiet := pulsartest.Logger(slog.New(slog.DiscardHandler))
	for _, kind := range []struct {
		name string
		into **embedRun
		opts func(i int) []pulsartest.Option
	}{
		{"in memory", &r.memory, func(int) []pulsartest.Option { return []pulsartest.Option{quiet} }},
		{"on a data directory", &r.durable, func(i int) []pulsartest.Option {
			return []pulsartest.Option{quiet, pulsartest.Dir(fmt.Sprintf("%s/%d", dir, i))}
		}},
	} {
		if ctx.Err() != nil {
			return
		}
		progress("embed: %d starts and stops of a pulsartest broker %s", embedN, kind.name)
		run, err := timeStarts(ctx, kind.opts)
		if err != nil {
			failed("embed: "+kind.name, err)
			continue
		}
		*kind.into = run
	}
}

// timeStarts starts and stops embedWarmup brokers, then embedN measured ones.
func timeStarts(ctx context.Context, opts func(i int) []pulsartest.Option) (*embedRun, error) {
	cycle := func(i int) error {
		b, err := pulsartest.New(opts(i)...)
		if err != nil {
			return err
		}
		return b.Close()
	}
	for i := range embedWarmup {
		if err := cycle(-1 - i); err != nil {
			return nil, err
		}
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, err := selfCPU()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	for i := range embedN {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := cycle(i); err != nil {
			return nil, err
		}
	}
	wall := time.Since(start)
	cpu1, err := selfCPU()
	if err != nil {
		return nil, err
	}
	runtime.ReadMemStats(&m1)
	return &embedRun{cpu: (cpu1 - cpu0) / embedN, wall: wall / embedN, alloc: (m1.TotalAlloc - m0.TotalAlloc) / embedN}, nil
}

// selfCPU is the user and system time of the bench process so far.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

func (r *embedReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## A broker in a Go test\n\n")
	if r.memory == nil && r.durable == nil {
		p("Not measured.\n")
		return
	}
	p("What a test pays for `pulsartest.Start`: `pulsartest.New` (the broker on 127.0.0.1, its admin API and a client of it) "+
		"then `Close`, in the bench process, %d times after %d unmeasured; the process's user + system time (`getrusage`, "+
		"the garbage collector's included) over the loop, per start and stop.\n\n", r.n, embedWarmup)
	p("| broker | CPU per start and stop | wall time per start and stop | allocated per start and stop |\n|---|---|---|---|\n")
	row := func(name string, run *embedRun) {
		if run == nil {
			p("| %s | %s | | |\n", name, notMeasuredText)
			return
		}
		p("| %s | %.2f ms | %.2f ms | %.1f MB |\n", name, millis(run.cpu), millis(run.wall), float64(run.alloc)/1e6)
	}
	row("in memory", r.memory)
	row("on a fresh data directory (`Dir`)", r.durable)
}
