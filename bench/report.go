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

	window      time.Duration
	shortWindow time.Duration
	warmup      time.Duration
	rate        int
	subType     string
	nullBatch   int
	rounds      int

	starts  []time.Duration
	idleRSS int64 // bytes; 0 when not measured

	// The headline, one producer + one consumer: the best round of each, and every round's
	// received msg/s.
	broker, ceiling             *result
	brokerRounds, ceilingRounds []float64

	brokerPaced, nullPaced *result
	brokerProd             *result
	nullProd, nullCons     *result
	durable                durableReport // letterbox broker --data (durable.go)
	clients                clientsReport // our client beside the official one (clients.go)
	replay                 replayReport  // client/replay (replay.go)
	scan                   scanReport    // client/triage's scan (scan.go)
	tui                    tuiReport     // the TUI (tui.go)
	admin                  adminReport   // the admin API under stalled requests (adminlatency.go)

	root string // the module's directory

	failures []string
}

// Targets from the issue.
const (
	targetRatio     = 0.75
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
	for _, res := range []*result{r.broker, r.ceiling, r.brokerPaced, r.nullPaced, r.brokerProd, r.nullProd, r.nullCons,
		r.durable.head, r.durable.paced, r.durable.fill} {
		if res != nil {
			most = max(most, res.others)
		}
	}
	for _, res := range []*clientResult{r.clients.ours, r.clients.official} {
		if res != nil {
			most = max(most, res.others)
		}
	}
	if r.replay.measured {
		most = max(most, r.replay.others)
	}
	if r.replay.limited.measured {
		most = max(most, r.replay.limited.others)
	}
	if r.admin.loadedMeasured {
		most = max(most, r.admin.others)
	}
	return max(most, r.scan.others())
}

func (r *report) startMedian() time.Duration {
	s := slices.Clone(r.starts)
	slices.Sort(s)
	return s[len(s)/2]
}

// markdown renders the report; the same text goes to stdout and to the -out file.
func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }

	p("# Performance\n\n")
	p("Written by `make bench` (`go run ./bench -out docs/performance.md`); rerun it rather than edit this file.\n\n")
	p("- Date: %s\n", r.date.UTC().Format("2006-01-02 15:04 MST"))
	p("- Machine: %d CPUs (`nproc`), %s, %s, %s; load average %s before the run, %s after\n",
		r.cpus, r.cpuModel, r.platform, r.goVersion, r.loadBefore, r.loadAfter)
	p("- Workload: the official Go client (`github.com/apache/pulsar-client-go` v0.19.0) over loopback, "+
		"one producer (%d-byte payloads, default batching, `SendAsync` with the client's own bound of %d messages in flight) "+
		"and one %s consumer acking every message, running concurrently on one topic; %v warm-up, then a %v measured window. "+
		"The two brokers take turns, %d rounds each, and each reports its best round.\n",
		payloadSize, 1000, r.subType, r.warmup, r.window, r.rounds)
	p("- Broker: `letterbox broker --in-memory` in its own process, built from commit %s. Ceiling: the same clients against the null broker "+
		"of `bench/nullbroker.go`, which receipts every SEND at once and answers FLOW by replaying one pre-built batch entry "+
		"of %d × %d-byte messages.\n\n", cmp.Or(r.revision, "unknown"), r.nullBatch, payloadSize)

	if busiest := r.busiest(); busiest >= busyWarning {
		p("**The machine was not idle:** during the runs other processes used up to %.2f of its %d CPUs (see the supporting runs), "+
			"which disturbs throughput, CPU time per message and latency, and the two brokers' runs unequally. "+
			"Rerun on an idle machine before trusting these numbers.\n\n", busiest, r.cpus)
	}
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
	notMeasured := "not measured"
	if r.broker != nil {
		row("throughput, letterbox broker", rate(r.broker.recvRate())+" msg/s", "", nil)
	} else {
		row("throughput, letterbox broker", notMeasured, "", nil)
	}
	if r.ceiling != nil {
		row("throughput, null broker (ceiling)", rate(r.ceiling.recvRate())+" msg/s", "", nil)
	} else {
		row("throughput, null broker (ceiling)", notMeasured, "", nil)
	}
	if r.broker != nil && r.ceiling != nil && r.ceiling.received > 0 {
		ratio := r.broker.recvRate() / r.ceiling.recvRate()
		measured := fmt.Sprintf("%.1f %%", 100*ratio)
		if ratio > 1 {
			measured += " (above 100 %: the ceiling run was disturbed more)"
		}
		row("letterbox / ceiling", measured, "≥ 75 %", new(ratio >= targetRatio), r.broker, r.ceiling)
	} else {
		row("letterbox / ceiling", notMeasured, "≥ 75 %", nil)
	}
	if r.broker != nil && r.broker.received > 0 {
		c := r.broker.cpuPerMsg()
		row("broker CPU per message", fmt.Sprintf("%.2f µs", micros(c)), "≤ 1.5 µs", new(c <= targetCPUPerMsg), r.broker)
	} else {
		row("broker CPU per message", notMeasured, "≤ 1.5 µs", nil)
	}
	latMetric := fmt.Sprintf("publish latency p50 / p99 at %s msg/s", thousands(r.rate))
	if res := r.brokerPaced; res != nil && len(res.latencies) > 0 {
		p99 := res.percentile(0.99)
		measured := fmt.Sprintf("%.2f / %.2f ms", millis(res.percentile(0.50)), millis(p99))
		// Latency at a rate the producer could not reach says nothing about that rate.
		reached := float64(res.paced)/res.window.Seconds() >= 0.95*float64(r.rate)
		if !reached {
			measured += fmt.Sprintf(", but only %s msg/s reached", rate(float64(res.paced)/res.window.Seconds()))
		}
		row(latMetric, measured, "p99 < 10 ms", new(reached && p99 < targetP99), res)
	} else {
		row(latMetric, notMeasured, "p99 < 10 ms", nil)
	}
	startMetric := fmt.Sprintf("start to ready, median (best) of %d", len(r.starts))
	if len(r.starts) > 0 {
		med := r.startMedian()
		row(startMetric, fmt.Sprintf("%.1f (%.1f) ms", millis(med), millis(slices.Min(r.starts))), "< 50 ms", new(med < targetStart))
	} else {
		row(startMetric, notMeasured, "< 50 ms", nil)
	}
	if r.idleRSS > 0 {
		row("idle RSS, 1 s after ready", fmt.Sprintf("%.1f MB", float64(r.idleRSS)/1e6), "< 30 MB", new(r.idleRSS < targetRSS))
	} else {
		row("idle RSS, 1 s after ready", notMeasured, "< 30 MB", nil)
	}

	r.durable.markdown(&b, r)
	r.clients.markdown(&b, r)
	r.replay.markdown(&b)
	r.scan.markdown(&b)
	r.tui.markdown(&b, len(r.starts))
	r.admin.markdown(&b)

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
	headNote := func(res *result, extra string) string {
		if res == nil {
			return ""
		}
		return fmt.Sprintf("%v window%s", res.window.Round(100*time.Millisecond), extra)
	}
	roundsNote := func(rounds []float64) string {
		s := make([]string, len(rounds))
		for i, v := range rounds {
			s[i] = rate(v)
		}
		return "; received msg/s by round: " + strings.Join(s, ", ")
	}
	var cpuNote string
	if r.broker != nil {
		cpuNote = fmt.Sprintf(", broker CPU %.2f s (%.0f %% of one core)", r.broker.cpu.Seconds(), 100*r.broker.cpu.Seconds()/r.broker.window.Seconds())
	}
	run("letterbox: producer + consumer (headline, best round)", r.broker, headNote(r.broker, cpuNote+roundsNote(r.brokerRounds)))
	var batchNote string
	if r.ceiling != nil && r.ceiling.batchMsgs > 0 {
		batchNote = fmt.Sprintf(", producer batches of %.0f messages on average", r.ceiling.batchMsgs)
	}
	run("null: producer + consumer (headline ceiling, best round)", r.ceiling, headNote(r.ceiling, batchNote+roundsNote(r.ceilingRounds)))
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

	p("\n## How each number is taken\n\n")
	p("- Throughput: messages the consumer received (and acked) during the window, per second of window. " +
		"The ceiling is the null broker's: its producer and consumer are not coupled, so its consumer may receive more than its producer sends.\n")
	p("- Broker CPU per message: utime + stime of the broker process (`/proc/<pid>/stat`, %d ticks/s) over the headline window, "+
		"divided by the messages received in it. The broker shares the machine's cores with the client, which runs in the bench process.\n", clockTicks)
	p("- Publish latency: from the `SendAsync` call to its callback, for every message sent in the window of a run whose producer is paced "+
		"at %s msg/s (sleeping while ahead of schedule, catching up in a burst after oversleeping), with the consumer running.\n", thousands(r.rate))
	p("- Start to ready: from exec of the freshly built binary to its `ready pulsar://… http://…` line on stdout, %d starts.\n", len(r.starts))
	p("- Idle RSS: `VmRSS` of `/proc/<pid>/status` one second after the ready line, before any client connects.\n")
	p("- The null broker runs inside the bench process; its own work is negligible next to the clients'.\n")

	if len(r.failures) > 0 {
		p("\n## Failures\n\n")
		for _, f := range r.failures {
			p("- %s\n", strings.ReplaceAll(strings.TrimSpace(f), "\n", "\n  "))
		}
	}
	return b.String()
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
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
