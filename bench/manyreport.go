package main

// The many part's section of the report: what many.go measured.

import (
	"fmt"
	"runtime"
	"strings"
)

// markdown renders the many section.
func (r *manyReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Many topics and connections at rest\n\n")
	if r.rss == 0 {
		p("Not measured.\n")
		return
	}
	p("`letterbox broker --in-memory` with %s topics, each with a producer (batching off: at 500 msg/s each, batches would wait for the client's 10 ms timer) and a Shared consumer "+
		"of the official Go client, over %s connections (%s clients of %d topics each); created in %v. At rest: nothing sent for %v, "+
		"%v after the last was created; RSS is `VmRSS`, CPU the broker's user + system time over the window. Then %d of the producers "+
		"send %s msg/s together, paced, round robin, 1 KiB messages, while their consumers receive and acknowledge and the others stay idle.\n\n",
		thousands(idleTopics), thousands(idleConns), thousands(idleConns), idleTopics/idleConns, r.setup.Round(100_000_000), idleWindow,
		manySettle, idleBusyTopics, thousands(idleBusyRate))
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	p("| broker RSS at rest | %.0f MB | < %d MB | %s |\n", float64(r.rss)/1e6, targetManyRSS>>20, verdict(r.rss < targetManyRSS))
	p("| broker CPU at rest | %.2f %% of a core | < %.0f %% | %s |\n", 100*r.cpu, 100*targetManyCPU, verdict(r.cpu < targetManyCPU))
	if res := r.busy; res != nil && len(res.latencies) > 0 {
		p99 := res.percentile(0.99)
		sent := float64(res.sent) / res.window.Seconds()
		broker := float64(res.cpu) / float64(res.window) // cores
		ok := sent >= 0.95*idleBusyRate && p99 < targetManyP99
		v := verdict(ok)
		if !ok && r.generatorShort() {
			v = "not measurable here: the load generator could not keep up (below)"
		}
		p("| publish latency p50 / p99, %d of them at %s msg/s | %.2f / %.2f ms (%s msg/s receipted, broker CPU %.0f %% of a core, RSS %.0f MB) | p99 < 10 ms | %s |\n",
			idleBusyTopics, thousands(idleBusyRate), millis(res.percentile(0.5)), millis(p99), rate(sent),
			100*broker, float64(r.busyRSS)/1e6, v)
		p("\nThe load generator during the busy run: the pacer handed 99 %% of the messages to `SendAsync` within %.2f ms of their schedule; "+
			"the bench process (every client of the part) used %.2f cores, other processes %.2f, of the machine's %d. "+
			"Per message sent, the clients used %.1f µs of CPU and the broker %.1f µs: at %s msg/s they need %.2f and %.2f cores. "+
			"Clients: `DisableBatching` producers, the busy consumers with the default acknowledgement grouping (100 ms, 1,000), "+
			"the idle ones with `AckGroupingOptions{MaxSize: 1}` (no grouping ticker).\n",
			millis(r.pacerLag), r.busyClient, r.busyOthers, runtime.NumCPU(),
			1e6*r.busyClient/sent, 1e6*broker/sent, thousands(idleBusyRate), r.busyClient/sent*idleBusyRate, broker/sent*idleBusyRate)
		if !ok && r.generatorShort() {
			p("\nThe latency above is not the broker's alone: the pacer fell behind its schedule by more than the target, or the machine's CPUs were all in use, so messages waited in the client before and after the broker. The part must be run on a machine that can hold its clients.\n")
		}
	} else {
		p("| publish latency p99, %d of them at %s msg/s | %s | p99 < 10 ms | not measured |\n", idleBusyTopics, thousands(idleBusyRate), notMeasuredText)
	}
}

// generatorShort reports whether the busy run's load generator could not hold its rate: the
// pacer ran later than the latency target, or the broker, the bench and the other processes
// together left less than a tenth of a CPU free.
func (r *manyReport) generatorShort() bool {
	if r.busy == nil {
		return false
	}
	broker := float64(r.busy.cpu) / float64(r.busy.window)
	used := broker + r.busyClient + r.busyOthers
	return r.pacerLag > targetManyP99 || used > float64(runtime.NumCPU())-0.1
}
