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
		"send %s msg/s together, paced, round robin, 1 KiB messages, while their consumers receive and acknowledge and the others stay idle; then the same load again, carried on those 100 topics by our client's producers and consumers (the official ones stay attached, idle), "+
		"because the official client's own CPU per message leaves a 2-core machine too little to measure the broker (the notes below say how much each client used). "+
		"Last, the ceiling: the official clients again, as many, attached the same way, and their busy run, against the null broker's forwarding mode (`bench/nullecho.go`, in its own process on one CPU as the letterbox broker: every SEND receipted at once and handed as it came to a consumer of its topic, nothing stored).\n\n",
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
	r.busy.row(b, "official Go client", r.busyVerdict())
	r.ours.row(b, "letterbox client", "")
	r.ceiling.row(b, "official Go client, null broker (ceiling)", "ceiling")
	if r.busy != nil && r.busy.res != nil {
		r.busy.notes(b, "official Go client", "`DisableBatching` producers, the busy consumers with the default acknowledgement grouping (100 ms, 1,000), "+
			"the idle ones with `AckGroupingOptions{MaxSize: 1}` (no grouping ticker)")
	}
	if r.ours != nil && r.ours.res != nil {
		r.ours.notes(b, "letterbox client", "the official consumers of the 100 topics closed, and on each topic a client of ours "+
			"(its own connection) with a `DisableBatching` producer and a consumer of the same Shared subscription, acknowledging "+
			"as our client groups by default (100 ms, 1,000); the official producers and the other 9,900 consumers attached and idle")
	}
	if r.ceiling != nil && r.ceiling.res != nil {
		r.ceiling.notes(b, "official Go client against the null broker", "as in the official run above")
	}
	if r.busy != nil && r.busy.res != nil && r.busy.verdict() != "met" && r.busy.generatorShort() {
		p("\nWith the official client the latency is not the broker's alone: the pacer fell behind its schedule by more than the target, or the machine's CPUs were all in use, so messages waited in the client before and after the broker.")
		if r.ceilingShort() {
			p(" The ceiling run shows it: against a broker that does nothing but forward, the same clients reach a p99 of %.2f ms here.", millis(r.ceiling.res.percentile(0.99)))
		}
		p(" The run through our client, which needs less CPU per message, measures the broker on this machine.\n")
	}
}

// busyVerdict is the verdict on the target, which the official clients' run carries: not
// measurable when the ceiling run, against the null broker, misses it too.
func (r *manyReport) busyVerdict() string {
	if r.busy == nil || r.busy.res == nil {
		return ""
	}
	v := r.busy.verdict()
	if v != "met" && r.ceilingShort() {
		return fmt.Sprintf("not measurable here: p99 %.2f ms against the null broker too", millis(r.ceiling.res.percentile(0.99)))
	}
	return v
}

// ceilingShort reports whether the ceiling run itself missed the latency target or the rate.
func (r *manyReport) ceilingShort() bool {
	if r.ceiling == nil || r.ceiling.res == nil || len(r.ceiling.res.latencies) == 0 {
		return false
	}
	return r.ceiling.verdict() != "met"
}

// row renders the latency row of one busy run; verdict, when not empty, replaces the run's own
// in the last column.
func (r *busyReport) row(b *strings.Builder, lib string, verdict string) {
	what := fmt.Sprintf("publish latency p50 / p99, %d of them at %s msg/s, %s", idleBusyTopics, thousands(idleBusyRate), lib)
	if r == nil || r.res == nil || len(r.res.latencies) == 0 {
		fmt.Fprintf(b, "| %s | %s | p99 < 10 ms | not measured |\n", what, notMeasuredText)
		return
	}
	res := r.res
	sent := float64(res.sent) / res.window.Seconds()
	broker := float64(res.cpu) / float64(res.window) // cores
	v := r.verdict()
	if verdict != "" {
		v = verdict
	}
	fmt.Fprintf(b, "| %s | %.2f / %.2f ms (%s msg/s receipted, broker CPU %.0f %% of a core, RSS %.0f MB) | p99 < 10 ms | %s |\n",
		what, millis(res.percentile(0.5)), millis(res.percentile(0.99)), rate(sent), 100*broker, float64(r.rss)/1e6, v)
}

// verdict is the run's verdict on the latency target.
func (r *busyReport) verdict() string {
	sent := float64(r.res.sent) / r.res.window.Seconds()
	switch {
	case sent >= 0.95*idleBusyRate && r.res.percentile(0.99) < targetManyP99:
		return "met"
	case r.generatorShort():
		return "not measurable here: the load generator could not keep up (below)"
	}
	return "not met"
}

// notes says whether the run's load generator kept up.
func (r *busyReport) notes(b *strings.Builder, lib, clients string) {
	sent := float64(r.res.sent) / r.res.window.Seconds()
	broker := float64(r.res.cpu) / float64(r.res.window)
	fmt.Fprintf(b, "\nThe load generator, %s: the pacer handed 99 %% of the messages to `SendAsync` within %.2f ms of their schedule; "+
		"the bench process (every client of the part) used %.2f cores, other processes %.2f, of the machine's %d. "+
		"Per message sent, the clients used %.1f µs of CPU and the broker %.1f µs: at %s msg/s they need %.2f and %.2f cores. "+
		"Clients: %s.\n",
		lib, millis(r.pacerLag), r.client, r.others, runtime.NumCPU(),
		1e6*r.client/sent, 1e6*broker/sent, thousands(idleBusyRate), r.client/sent*idleBusyRate, broker/sent*idleBusyRate, clients)
}

// generatorShort reports whether the busy run's load generator could not hold its rate: the
// pacer ran later than the latency target, or the broker, the bench and the other processes
// together left less than a tenth of a CPU free.
func (r *busyReport) generatorShort() bool {
	broker := float64(r.res.cpu) / float64(r.res.window)
	used := broker + r.client + r.others
	return r.pacerLag > targetManyP99 || used > float64(runtime.NumCPU())-0.1
}
