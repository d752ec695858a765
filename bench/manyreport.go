package main

// The many part's section of the report: what many.go measured.

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// markdown renders the many section.
func (r *manyReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Many topics and connections\n\n")
	if r.rss == 0 {
		p("Not measured.\n")
		return
	}
	p("`letterbox broker --in-memory` with %s topics, each with a producer (batching off: at 500 msg/s each, batches would wait for the client's 10 ms timer) and a Shared consumer "+
		"of the official Go client, over %s connections (%s clients of %d topics each); created in %v. At rest: nothing sent for %v, "+
		"%v after the last was created; RSS is `VmRSS`, CPU the broker's user + system time over the window. "+
		"Then the ceiling, the null broker's forwarding mode (`bench/nullecho.go`: every SEND receipted at once and handed as it came to a consumer of its topic, nothing stored), "+
		"in its own process on one CPU as the letterbox broker, with as many official clients attached the same way; both stay up, and every busy run below runs on %d of the topics "+
		"of each, paced, round robin, 1 KiB messages, while their consumers receive and acknowledge and the others stay idle. "+
		"First the official clients at %s msg/s (what this machine can generate with them: unbatched they need about 30 µs of CPU a message), in rounds, each on the letterbox broker then on the null broker; "+
		"then, the official consumers of those topics closed, our client's producers and consumers (one client and connection a topic) at %s msg/s, "+
		"in rounds, each on the letterbox broker then on the null broker: the verdict takes the median of the rounds' p99s and of the rounds' ratios of the two.\n\n",
		thousands(idleTopics), thousands(idleConns), thousands(idleConns), idleTopics/idleConns, r.setup.Round(100_000_000), idleWindow,
		manySettle, idleBusyTopics, thousands(officialBusyRate), thousands(idleBusyRate))
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	p("| broker RSS at rest | %.0f MB | < %d MB | %s |\n", float64(r.rss)/1e6, targetManyRSS>>20, metText(r.rss < targetManyRSS))
	p("| broker CPU at rest | %.2f %% of a core | < %.0f %% | %s |\n", 100*r.cpu, 100*targetManyCPU, metText(r.cpu < targetManyCPU))
	r.oursRows(b)
	r.officialRows(b)
	r.runsTable(b)
}

// oursRows renders the rows of our client's rounds: letterbox's p99, the null broker's, their
// ratio and the broker's RSS.
func (r *manyReport) oursRows(b *strings.Builder) {
	what := fmt.Sprintf("%d of them at %s msg/s, letterbox client", idleBusyTopics, thousands(idleBusyRate))
	if len(r.ours) == 0 {
		fmt.Fprintf(b, "| publish latency p99, %s | %s | < %v, ≤ %.0f× the null broker's | not measured |\n", what, notMeasuredText, targetBusyP99, targetBusyRatio)
		return
	}
	ms := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	var lp99, np99, lp50, ratios []float64
	var peak int64
	for _, pr := range r.ours {
		l, n := pr.letterbox.res, pr.null.res
		lp99 = append(lp99, millis(l.percentile(0.99)))
		lp50 = append(lp50, millis(l.percentile(0.5)))
		np99 = append(np99, millis(n.percentile(0.99)))
		if x, ok := ratioOf(millis(l.percentile(0.99)), millis(n.percentile(0.99))); ok {
			ratios = append(ratios, x)
		}
		peak = max(peak, pr.letterbox.peakRSS)
	}
	p99ok := medianF(lp99) < millis(targetBusyP99)
	fmt.Fprintf(b, "| publish latency p99, %s, letterbox broker (%s) | %s (p50 %.2f ms) | < %v | %s |\n",
		what, ofRounds(len(lp99)), byRound(lp99, ms, " ms"), medianF(lp50), targetBusyP99, metText(p99ok))
	fmt.Fprintf(b, "| publish latency p99, %s, null broker (ceiling, %s) | %s | | ceiling |\n", what, ofRounds(len(np99)), byRound(np99, ms, " ms"))
	if len(ratios) > 0 {
		fmt.Fprintf(b, "| letterbox p99 / null broker p99, %s (%s) | %s | ≤ %.0f× | %s |\n",
			what, ofRatios(len(ratios)), byRound(ratios, times, ""), targetBusyRatio, metText(medianF(ratios) <= targetBusyRatio))
	}
	fmt.Fprintf(b, "| broker RSS during the busy runs of our client, largest sample (every 100 ms) | %.0f MB | < %.0f MB | %s |\n",
		float64(peak)/1e6, float64(targetBusyRSS)/1e6, metText(peak < targetBusyRSS))
}

// runsTable lists every busy run with what says whether its load generator kept up.
func (r *manyReport) runsTable(b *strings.Builder) {
	type run struct {
		name string
		b    *busyReport
	}
	var runs []run
	add := func(name string, br *busyReport) {
		if br != nil && br.res != nil && len(br.res.latencies) > 0 {
			runs = append(runs, run{name, br})
		}
	}
	for i, pr := range r.official {
		add(fmt.Sprintf("official client, %s msg/s, letterbox, round %d", thousands(officialBusyRate), i+1), pr.letterbox)
		add(fmt.Sprintf("official client, %s msg/s, null broker, round %d", thousands(officialBusyRate), i+1), pr.null)
	}
	for i, pr := range r.ours {
		add(fmt.Sprintf("letterbox client, %s msg/s, letterbox, round %d", thousands(idleBusyRate), i+1), pr.letterbox)
		add(fmt.Sprintf("letterbox client, %s msg/s, null broker, round %d", thousands(idleBusyRate), i+1), pr.null)
	}
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n| busy run | receipted msg/s | p50 / p99 / max | broker CPU µs/msg | broker RSS, largest | pacer 99 %% within | bench process | bench GC cycles | other processes |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range runs {
		res := x.b.res
		sent := float64(res.sent) / res.window.Seconds()
		broker := float64(res.cpu) / float64(res.window)
		fmt.Fprintf(b, "| %s | %s | %.2f / %.2f / %.2f ms | %.1f | %.0f MB | %.2f ms | %.2f cores | %d | %.2f cores |\n",
			x.name, rate(sent), millis(res.percentile(0.5)), millis(res.percentile(0.99)), millis(res.percentile(1)),
			1e6*broker/sent, float64(x.b.peakRSS)/1e6, millis(x.b.pacerLag), x.b.client, x.b.benchGCs, x.b.others)
	}
	fmt.Fprintf(b, "\nEach run: a second's warm-up, then a %v window; latency from `SendAsync` to the receipt's callback, for every message of the window. "+
		"\"Pacer 99 %% within\": how late the pacer handed 99 %% of the messages to the client, by its schedule; the bench process holds every client of the part "+
		"(the idle ones of both brokers too), and with the brokers and other processes the machine has %d CPUs. "+
		"The bench sets its clients up at GOGC %d and runs the busy runs with its collector off, collecting before each run: its idle clients' queues are most of its heap, and a collection in a window would be the load generator's pause (\"bench GC cycles\" counts those completed in the window anyway). Before each busy run it also touches 3 GiB that this collection frees, and the runtime keeps free what was in use at the last collection: the run's allocations reuse memory rather than fault in fresh pages, which cost the bench a fifth more CPU in whichever run came first. "+
		"Clients: `DisableBatching` producers; the official busy consumers acknowledge with the default grouping (100 ms, 1,000), the idle ones with `AckGroupingOptions{MaxSize: 1}` (no grouping ticker); "+
		"our consumers acknowledge as our client groups by default (100 ms, 1,000).\n", idleWindow, runtime.NumCPU(), manyGCPercent)
}

// officialRows renders the rows of the official client's rounds: letterbox's p50 and p99 and
// the null broker's, each the median of the rounds, with every round's p99.
func (r *manyReport) officialRows(b *strings.Builder) {
	what := fmt.Sprintf("publish latency p50 / p99, %d of them at %s msg/s, official Go client", idleBusyTopics, thousands(officialBusyRate))
	target := fmt.Sprintf("p99 < %v", targetManyP99)
	if len(r.official) == 0 {
		fmt.Fprintf(b, "| %s | %s | %s | not measured |\n", what, notMeasuredText, target)
		return
	}
	ms := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	cell := func(runs []*busyReport) (string, float64, float64) {
		var p50, p99, sent, cpu []float64
		for _, br := range runs {
			res := br.res
			p50 = append(p50, millis(res.percentile(0.5)))
			p99 = append(p99, millis(res.percentile(0.99)))
			sent = append(sent, float64(res.sent)/res.window.Seconds())
			cpu = append(cpu, float64(res.cpu)/float64(res.window))
		}
		return fmt.Sprintf("%.2f / %s (%s msg/s receipted, broker CPU %.0f %% of a core, medians)",
			medianF(p50), byRound(p99, ms, " ms"), rate(medianF(sent)), 100*medianF(cpu)), medianF(p99), medianF(sent)
	}
	var lb, null []*busyReport
	short := 0 // rounds whose load generator could not keep up
	for _, pr := range r.official {
		lb, null = append(lb, pr.letterbox), append(null, pr.null)
		if pr.letterbox.generatorShort(targetManyP99) {
			short++
		}
	}
	text, p99, sent := cell(lb)
	verdict := "not met"
	switch {
	case sent >= 0.95*officialBusyRate && p99 < millis(targetManyP99):
		verdict = "met"
	case 2*short > len(lb):
		verdict = "not measurable here: the load generator could not keep up (below)"
	}
	fmt.Fprintf(b, "| %s, letterbox broker (%s) | %s | %s | %s |\n", what, ofRounds(len(lb)), text, target, verdict)
	text, _, _ = cell(null)
	fmt.Fprintf(b, "| %s, null broker (ceiling, %s) | %s |  | ceiling |\n", what, ofRounds(len(null)), text)
}

// generatorShort reports whether the busy run's load generator could not hold its rate: the
// pacer ran later than target, or the broker, the bench and the other processes together left
// less than a tenth of a CPU free.
func (r *busyReport) generatorShort(target time.Duration) bool {
	broker := float64(r.res.cpu) / float64(r.res.window)
	used := broker + r.client + r.others
	return r.pacerLag > target || used > float64(runtime.NumCPU())-0.1
}
