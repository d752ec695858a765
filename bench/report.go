package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// report is everything one bench run measured; a nil result was not measured (see failures).
type report struct {
	date      time.Time
	cpus      int
	cpuModel  string
	goVersion string
	platform  string
	revision  string // of the letterbox binary measured
	// loadBefore and loadAfter are /proc/loadavg around the run: other work on the machine
	// shows in the numbers.
	loadBefore, loadAfter string
	// speedBefore and speedAfter are the machine's speed around the run (machinespeed.go);
	// nil: not measured.
	speedBefore, speedAfter *machineSpeed

	window      time.Duration
	shortWindow time.Duration
	warmup      time.Duration
	rate        int
	subType     string
	nullBatch   int
	rounds      int

	starts  []time.Duration
	idleRSS int64 // bytes; 0 when not measured

	// The headline, one producer + one consumer, round by round on each broker.
	head []headRound

	brokerPaced, nullPaced *result
	brokerProd             *result
	nullProd, nullCons     *result
	durable                durableReport // letterbox broker --data (durable.go)
	clients                clientsReport // our client beside the official one (clients.go)
	replay                 replayReport  // client/replay (replay.go)
	scan                   scanReport    // client/triage's scan (scan.go)
	tui                    tuiReport     // the TUI (tui.go)
	admin                  adminReport   // the admin API under stalled requests (adminlatency.go)
	stored                 storedReport  // starts with 10 GiB stored (stored.go)
	files                  filesReport   // descriptors with 20,000 sealed segments (files.go)
	many                   manyReport    // 10,000 topics at rest (many.go)
	memory                 memoryReport  // the heap of a million kept messages (memory.go)
	embed                  embedReport   // pulsartest's start and stop in a test's process (embed.go)

	root string // the module's directory

	failures []string
}

// headRound is one round of the headline on each broker, run one after the other (in memory,
// null, durable), so that each product's run has its ceiling's beside it; nil: not measured.
type headRound struct{ broker, ceiling, durable *result }

func headBroker(h headRound) *result  { return h.broker }
func headCeiling(h headRound) *result { return h.ceiling }
func headDurable(h headRound) *result { return h.durable }

// headResults are one broker's measured headline rounds, in order.
func (r *report) headResults(which func(headRound) *result) []*result {
	var out []*result
	for _, h := range r.head {
		if res := which(h); res != nil {
			out = append(out, res)
		}
	}
	return out
}

// ceilingRatios are, for every round that measured both, which's received msg/s over the
// null broker's in the same round.
func (r *report) ceilingRatios(which func(headRound) *result) []float64 {
	return perRound(r.head, func(h headRound) (float64, bool) {
		if which(h) == nil || h.ceiling == nil {
			return 0, false
		}
		return ratioOf(which(h).recvRate(), h.ceiling.recvRate())
	})
}

// values are f of every result.
func values(rs []*result, f func(result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, res := range rs {
		out[i] = f(*res)
	}
	return out
}

// mostOthers is the most CPU other processes used during any of rs, in cores.
func mostOthers(rs []*result) float64 {
	var most float64
	for _, res := range rs {
		most = max(most, res.others)
	}
	return most
}

// Targets from the issues. The ratio to the ceiling is the performance issue's (#36: in memory
// at least 80 % of the null broker's throughput, as #22 asked before it); the first bench set 75 %.
const (
	targetRatio     = 0.80
	targetCPUPerMsg = 1500 * time.Nanosecond
	targetP99       = 10 * time.Millisecond
	targetStart     = 50 * time.Millisecond
	targetRSS       = 30_000_000
)

// busyWarning is how much CPU, in cores, other processes may use during a run before the report
// warns that its numbers are disturbed.
const busyWarning = 0.2

// busiest is the most CPU, in cores, that other processes used during any run.
func (r *report) busiest() float64 {
	var most float64
	for _, res := range []*result{r.brokerPaced, r.nullPaced, r.brokerProd, r.nullProd, r.nullCons,
		r.durable.paced, r.durable.fill, r.durable.drain} {
		if res != nil {
			most = max(most, res.others)
		}
	}
	for _, h := range r.head {
		for _, res := range []*result{h.broker, h.ceiling, h.durable} {
			if res != nil {
				most = max(most, res.others)
			}
		}
	}
	for _, cr := range r.clients.rounds {
		for _, res := range []*clientResult{cr.ours, cr.official} {
			if res != nil {
				most = max(most, res.others)
			}
		}
	}
	for _, rr := range append(slices.Clone(r.replay.rounds), r.replay.dedup...) {
		most = max(most, rr.others)
	}
	if r.replay.limited.measured {
		most = max(most, r.replay.limited.others)
	}
	if r.admin.loadedMeasured {
		most = max(most, r.admin.others)
	}
	return max(most, r.scan.others())
}

// markdown renders the report; the same text goes to stdout and to the -out file.
func (r *report) markdown() string {
	var b strings.Builder
	r.writeHeader(&b)
	r.writeTargets(&b)
	r.durable.markdown(&b, r)
	r.clients.markdown(&b, r)
	r.replay.markdown(&b)
	r.scan.markdown(&b)
	r.tui.markdown(&b, len(r.starts))
	r.admin.markdown(&b)
	r.stored.markdown(&b)
	r.files.markdown(&b)
	r.many.markdown(&b)
	r.memory.markdown(&b)
	r.embed.markdown(&b)

	r.writeSupporting(&b)
	r.writeMethod(&b)
	r.writeFailures(&b)
	return b.String()
}

// notMeasured stands for a figure a run that failed or was skipped did not give.
const notMeasured = "not measured"

// writeHeader writes the title and what was measured, where and how, and a warning when the
// machine was busy.
func (r *report) writeHeader(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }

	p("# Performance\n\n")
	p("Written by `make bench` (`go run ./bench -out docs/performance.md`); rerun it rather than edit this file.\n\n")
	p("- Date: %s\n", r.date.UTC().Format("2006-01-02 15:04 MST"))
	p("- Machine: %d CPUs (`nproc`), %s, %s, %s; load average %s before the run, %s after\n",
		r.cpus, r.cpuModel, r.platform, r.goVersion, r.loadBefore, r.loadAfter)
	p("%s", speedText(r.speedBefore, r.speedAfter))
	p("- Workload: the official Go client (`github.com/apache/pulsar-client-go` v0.19.0) over loopback, "+
		"one producer (%d-byte payloads, default batching, `SendAsync` with the client's own bound of %d messages in flight) "+
		"and one %s consumer acking every message, running concurrently on one topic; %v warm-up, then a %v measured window. "+
		"%d rounds, each running the letterbox broker, the null broker and the durable broker below one after the other; "+
		"every figure is the median of the rounds, and every ratio to the ceiling the median of the rounds' ratios, "+
		"each round's run over the null broker's run beside it.\n",
		payloadSize, 1000, r.subType, r.warmup, r.window, r.rounds)
	p("- Broker: `letterbox broker --in-memory` in its own process, built from commit %s. Ceiling: the same clients against the null broker "+
		"of `bench/nullbroker.go`, which receipts every SEND at once and answers FLOW by replaying one pre-built batch entry "+
		"of %d × %d-byte messages.\n\n", cmp.Or(r.revision, "unknown"), r.nullBatch, payloadSize)

	if busiest := r.busiest(); busiest >= busyWarning {
		p("**The machine was not idle:** during the runs other processes used up to %.2f of its %d CPUs (see the supporting runs), "+
			"which disturbs throughput, CPU time per message and latency, and the two brokers' runs unequally. "+
			"Rerun on an idle machine before trusting these numbers.\n\n", busiest, r.cpus)
	}
}

// writeTargets writes the table of the headline figures beside their targets.
func (r *report) writeTargets(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	// row writes one metric; from are the runs it was measured in, whose verdict is qualified
	// when other processes were busy during any of them.
	row := func(metric, measured, target string, met *bool, from ...*result) {
		verdict := ""
		if met != nil {
			verdict = "not met"
			if *met {
				verdict = "met"
			}
			if slices.ContainsFunc(from, func(res *result) bool { return res.others >= busyWarning }) {
				verdict += " (busy machine)"
			}
		} else if target != "" {
			verdict = "not measured"
		}
		p("| %s | %s | %s | %s |\n", metric, measured, target, verdict)
	}
	brokers, ceilings := r.headResults(headBroker), r.headResults(headCeiling)
	throughput := func(metric string, rs []*result) {
		if len(rs) == 0 {
			row(metric, notMeasured, "", nil)
			return
		}
		row(fmt.Sprintf("%s (%s)", metric, ofRounds(len(rs))), byRound(values(rs, result.recvRate), rate, " msg/s"), "", nil)
	}
	throughput("throughput, letterbox broker", brokers)
	throughput("throughput, null broker, the ceiling", ceilings)
	if ratios := r.ceilingRatios(headBroker); len(ratios) > 0 {
		ratio := medianF(ratios)
		measured := byRound(ratios, percent, "")
		if ratio > 1 {
			measured += "; above 100 %: the ceiling runs were disturbed more"
		}
		row(fmt.Sprintf("letterbox / ceiling (%s)", ofRatios(len(ratios))), measured, "≥ 80 %", new(ratio >= targetRatio),
			slices.Concat(brokers, ceilings)...)
	} else {
		row("letterbox / ceiling", notMeasured, "≥ 80 %", nil)
	}
	if counted := slices.DeleteFunc(slices.Clone(brokers), func(res *result) bool { return res.received == 0 }); len(counted) > 0 {
		cpu := values(counted, func(res result) float64 { return micros(res.cpuPerMsg()) })
		c := medianF(cpu)
		row(fmt.Sprintf("broker CPU per message (%s)", ofRounds(len(cpu))), byRound(cpu, func(x float64) string { return fmt.Sprintf("%.2f", x) }, " µs"),
			"≤ 1.5 µs", new(c <= micros(targetCPUPerMsg)), counted...)
	} else {
		row("broker CPU per message", notMeasured, "≤ 1.5 µs", nil)
	}
	latMetric := fmt.Sprintf("publish latency p50 / p99 at %s msg/s", thousands(r.rate))
	if res := r.brokerPaced; res != nil && len(res.latencies) > 0 {
		measured, met := pacedLatency(res, r.rate, targetP99)
		row(latMetric, measured, "p99 < 10 ms", &met, res)
	} else {
		row(latMetric, notMeasured, "p99 < 10 ms", nil)
	}
	startMetric := fmt.Sprintf("start to ready, median (best) of %d", len(r.starts))
	if len(r.starts) > 0 {
		med := median(r.starts)
		row(startMetric, fmt.Sprintf("%.1f (%.1f) ms", millis(med), millis(slices.Min(r.starts))), "< 50 ms", new(med < targetStart))
	} else {
		row(startMetric, notMeasured, "< 50 ms", nil)
	}
	if r.idleRSS > 0 {
		row("idle RSS, 1 s after ready", fmt.Sprintf("%.1f MB", float64(r.idleRSS)/1e6), "< 30 MB", new(r.idleRSS < targetRSS))
	} else {
		row("idle RSS, 1 s after ready", notMeasured, "< 30 MB", nil)
	}
}

// writeSupporting writes the table of every run beside the headline ones.
func (r *report) writeSupporting(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	brokers, ceilings := r.headResults(headBroker), r.headResults(headCeiling)
	p("\n## Supporting runs\n\n")
	p("Each over a %v window after a %v warm-up unless marked. Sent counts messages whose publish was acknowledged.\n\n", r.shortWindow, r.warmup)
	p("| run | sent msg/s | received msg/s | notes |\n|---|---|---|---|\n")
	run := func(name string, res *result, notes string) {
		if res == nil {
			p("| %s | %s | | |\n", name, notMeasured)
			return
		}
		recv := "—"
		if res.received > 0 {
			recv = rate(res.recvRate())
		}
		sent := "—"
		if res.sent > 0 {
			sent = rate(res.sendRate())
		}
		others := fmt.Sprintf("other processes used %.2f CPUs", res.others)
		p("| %s | %s | %s | %s |\n", name, sent, recv, strings.Join(slices.DeleteFunc([]string{notes, others}, func(s string) bool { return s == "" }), "; "))
	}
	roundsRow(b, "letterbox: producer + consumer", "headline", brokers, "")
	var batchNote string
	if batches := slices.DeleteFunc(values(ceilings, func(res result) float64 { return res.batchMsgs }), func(x float64) bool { return x == 0 }); len(batches) > 0 {
		batchNote = fmt.Sprintf("producer batches of %.0f messages on average (median of the rounds)", medianF(batches))
	}
	roundsRow(b, "null: producer + consumer", "headline ceiling", ceilings, batchNote)
	run("null: producer only", r.nullProd, "")
	run("null: consumer only", r.nullCons, "")
	paced := func(res *result) string {
		if res == nil || len(res.latencies) == 0 {
			return ""
		}
		return fmt.Sprintf("paced at %s msg/s (%s handed to SendAsync); latency p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms",
			thousands(r.rate), rate(float64(res.paced)/res.window.Seconds()),
			millis(res.percentile(0.50)), millis(res.percentile(0.99)), millis(res.percentile(0.999)), millis(res.latencies[len(res.latencies)-1]))
	}
	run("letterbox: paced producer + consumer", r.brokerPaced, paced(r.brokerPaced))
	run("null: paced producer only", r.nullPaced, paced(r.nullPaced))
	run("letterbox: producer only", r.brokerProd, "")
}

// writeMethod writes how each number is taken.
func (r *report) writeMethod(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## How each number is taken\n\n")
	p("- Throughput: messages the consumer received (and acked) during the window, per second of window. " +
		"The ceiling is the null broker's: its producer and consumer are not coupled, so its consumer may receive more than its producer sends.\n")
	p("- Rounds: a throughput, a CPU per message and the supporting runs' headline rows are the median of the rounds (with an even " +
		"number, the mean of the middle two). A ratio to the ceiling is the median of the rounds' ratios, each the product's received msg/s " +
		"over the null broker's in the same round, which ran right beside it: the letterbox broker's just before it, the durable broker's " +
		"just after; so it need not equal the quotient of the two medians above it. \"By round\" lists every round's value; the spread is " +
		"(largest − smallest) / median of those values.\n")
	p("- Broker CPU per message: utime + stime of the broker process (`/proc/<pid>/stat`, %d ticks/s) over a headline window, "+
		"divided by the messages received in it, the median of the rounds. The broker shares the machine's cores with the client, which runs in the bench process.\n", clockTicks)
	p("- Publish latency: from the `SendAsync` call to its callback, for every message sent in the window of a run whose producer is paced "+
		"at %s msg/s (sleeping while ahead of schedule, catching up in a burst after oversleeping), with the consumer running.\n", thousands(r.rate))
	p("- Start to ready: from exec of the freshly built binary to its `ready pulsar://… http://…` line on stdout, %d starts.\n", len(r.starts))
	p("- Idle RSS: `VmRSS` of `/proc/<pid>/status` one second after the ready line, before any client connects.\n")
	p("- The null broker runs inside the bench process; its own work is negligible next to the clients'.\n")
}

// writeFailures writes the runs that failed, if any.
func (r *report) writeFailures(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	if len(r.failures) > 0 {
		p("\n## Failures\n\n")
		for _, f := range r.failures {
			p("- %s\n", strings.ReplaceAll(strings.TrimSpace(f), "\n", "\n  "))
		}
	}
}

// roundsRow writes the row of one broker's headline rounds rs in a table of runs: the median
// sent and received msg/s, and in the notes the window, the median broker CPU (of a broker in
// a process of its own), every round's received msg/s with their spread, and extra. The name
// is followed by role, when given, and how the rounds were taken: "(headline, median of 3 rounds)".
func roundsRow(b *strings.Builder, name, role string, rs []*result, extra string) {
	if role != "" {
		role += ", "
	}
	if len(rs) == 0 {
		fmt.Fprintf(b, "| %s | %s | | |\n", name, notMeasuredText)
		return
	}
	notes := []string{fmt.Sprintf("%v window", rs[0].window.Round(100*time.Millisecond))}
	if cpu := medianF(values(rs, func(res result) float64 { return res.cpu.Seconds() })); cpu > 0 {
		load := medianF(values(rs, func(res result) float64 { return res.cpu.Seconds() / res.window.Seconds() }))
		notes = append(notes, fmt.Sprintf("broker CPU %.2f s (%.0f %% of one core), median of the rounds", cpu, 100*load))
	}
	notes = append(notes, "received msg/s by round: "+spread(values(rs, result.recvRate), rate))
	if extra != "" {
		notes = append(notes, extra)
	}
	notes = append(notes, fmt.Sprintf("other processes used up to %.2f CPUs", mostOthers(rs)))
	sent, recv := "—", "—"
	if v := medianF(values(rs, result.sendRate)); v > 0 {
		sent = rate(v)
	}
	if v := medianF(values(rs, result.recvRate)); v > 0 {
		recv = rate(v)
	}
	fmt.Fprintf(b, "| %s (%s%s) | %s | %s | %s |\n", name, role, ofRounds(len(rs)), sent, recv, strings.Join(notes, "; "))
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// pacedLatency is a paced run's "p50 / p99 ms" and whether its p99 is under target. Latency at a
// rate the producer could not reach says nothing about that rate: such a run says how far it
// got and does not meet the target.
func pacedLatency(res *result, want int, target time.Duration) (string, bool) {
	p99 := res.percentile(0.99)
	measured := fmt.Sprintf("%.2f / %.2f ms", millis(res.percentile(0.50)), millis(p99))
	got := float64(res.paced) / res.window.Seconds()
	reached := got >= 0.95*float64(want)
	if !reached {
		measured += fmt.Sprintf(", but only %s msg/s reached", rate(got))
	}
	return measured, reached && p99 < target
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func rate(perSec float64) string { return thousands(int(perSec + 0.5)) }

// thousands formats n with comma separators: 123456 → "123,456".
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// metText is a verdict's text.
func metText(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}
