package main

// The scan part's section of the report: what scan.go measured, as docs/performance.md shows it.

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// others is the most CPU other processes used during any reading, in cores.
func (r *scanReport) others() float64 {
	var most float64
	for _, sr := range r.rounds {
		for _, res := range []*scanChildResult{sr.scan, sr.official, sr.ours, sr.filtered, sr.facets} {
			if res != nil {
				most = max(most, res.Others)
			}
		}
	}
	return most
}

// killed is how many readings left the broker busy past settleLimit, so that it was killed.
func (r *scanReport) killed() int {
	n := 0
	for _, sr := range r.rounds {
		for _, res := range []*scanChildResult{sr.scan, sr.official, sr.ours, sr.filtered, sr.facets} {
			if res != nil && res.unsettled {
				n++
			}
		}
	}
	return n
}

// series is one reading's results over the rounds.
func (r *scanReport) series(pick func(*scanRound) *scanChildResult) []*scanChildResult {
	var out []*scanChildResult
	for i := range r.rounds {
		if res := pick(&r.rounds[i]); res != nil {
			out = append(out, res)
		}
	}
	return out
}

// ratios are the scan's rate over the official reader's, in each round that measured both.
func (r *scanReport) ratios() []float64 {
	return perRound(r.rounds, func(sr scanRound) (float64, bool) {
		if sr.scan == nil || sr.official == nil {
			return 0, false
		}
		return ratioOf(sr.scan.rate(), sr.official.rate())
	})
}

// facetRatios are the facets reading's rate over the plain scan's, in each round that
// measured both.
func (r *scanReport) facetRatios() []float64 {
	return perRound(r.rounds, func(sr scanRound) (float64, bool) {
		if sr.scan == nil || sr.facets == nil {
			return 0, false
		}
		return ratioOf(sr.facets.rate(), sr.scan.rate())
	})
}

func rates(rs []*scanChildResult) []float64 {
	out := make([]float64, len(rs))
	for i, res := range rs {
		out[i] = res.rate()
	}
	return out
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// The scan's targets, as the table shows them.
const (
	scanRateTarget = "≥ 150,000 letters/s or ≥ 60 % of the official reader"
	scanMemTarget  = "< 200 MB"
)

// markdown renders the scan section.
func (r *scanReport) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "\n## Dead-letter scan\n\n")
	scans, officials := r.series(func(sr *scanRound) *scanChildResult { return sr.scan }), r.series(func(sr *scanRound) *scanChildResult { return sr.official })
	if r.skipped != "" || len(scans) == 0 {
		r.writeNotMeasured(b)
		return
	}
	r.writeTargets(b, scans, officials)
	r.writeReadings(b, scans, officials)
	r.writeMethod(b, scans)
}

// writeNotMeasured says why the scan was not measured, beside its targets.
func (r *scanReport) writeNotMeasured(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	why := "not measured (see Failures)"
	if r.skipped != "" {
		why = "Skipped: " + r.skipped + "."
	}
	if r.n == 0 {
		why = "Not measured in this run."
	}
	p("`client/triage`'s `Scan` (the TUI's scan) over a whole DLQ. %s\n\n", why)
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	p("| scan rate | %s | %s | not measured |\n", notMeasuredText, scanRateTarget)
	p("| heap after GC, result kept | %s | %s | not measured |\n", notMeasuredText, scanMemTarget)
	p("| peak RSS | %s | %s | not measured |\n", notMeasuredText, scanMemTarget)
}

// writeTargets writes the table of the scan's figures beside their targets.
func (r *scanReport) writeTargets(b *strings.Builder, scans, officials []*scanChildResult) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	busy := ""
	if r.others() >= busyWarning {
		busy = " (busy machine)"
	}
	verdict := func(met bool) string {
		if met {
			return "met" + busy
		}
		return "not met" + busy
	}
	scanRate := medianF(rates(scans))
	ratios := r.ratios()
	var heap, hwm, maxRSS int64
	for _, sr := range r.rounds {
		if sr.scan != nil {
			heap, hwm, maxRSS = max(heap, int64(sr.scan.HeapInuse)), max(hwm, sr.scan.HWM), max(maxRSS, sr.scanMaxRSS)
		}
	}

	p("`client/triage`'s `Scan`, the engine of the TUI's scan, over a DLQ of %s dead letters on `letterbox broker %s` "+
		"(its own process, one CPU by its default `--procs`), beside a bare reader of the official Go client over the same letters in the same run.\n\n",
		thousands(r.n), r.brokerArgs)
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	rateCell := rate(scanRate) + " letters/s"
	met := scanRate >= targetScanRate
	if len(ratios) > 0 {
		rateCell += fmt.Sprintf(", %.0f %% of the official reader", 100*medianF(ratios))
		met = met || medianF(ratios) >= targetScanRatio
	}
	p("| scan rate, whole DLQ, no filter (median of %d) | %s | %s | %s |\n", len(scans), rateCell, scanRateTarget, verdict(met))
	if len(officials) > 0 {
		p("| bare official reader (median of %d) | %s letters/s | | |\n", len(officials), rate(medianF(rates(officials))))
	} else {
		p("| bare official reader | %s | | |\n", notMeasuredText)
	}
	if len(ratios) > 0 {
		p("| scan / official reader (median of the rounds' ratios) | %.1f %% | | |\n", 100*medianF(ratios))
	} else {
		p("| scan / official reader | %s | | |\n", notMeasuredText)
	}
	p("| heap after GC, result kept (largest of %d) | %s | %s | %s |\n", len(scans), megabytes(heap), scanMemTarget, verdict(heap < targetScanMem))
	p("| peak RSS of the scanning process (largest of %d) | %s (rusage: %s) | %s | %s |\n", len(scans), megabytes(hwm), megabytes(maxRSS), scanMemTarget,
		verdict(max(hwm, maxRSS) < targetScanMem))
	facets := r.series(func(sr *scanRound) *scanChildResult { return sr.facets })
	if fr := r.facetRatios(); len(fr) > 0 {
		var fhwm int64
		for _, res := range facets {
			fhwm = max(fhwm, res.HWM)
		}
		p("| facets and causes / plain scan (median of the rounds' ratios; %s letters/s) | %.1f %% | ≥ 80 %% | %s |\n",
			rate(medianF(rates(facets))), 100*medianF(fr), verdict(medianF(fr) >= targetFacetsRatio))
		p("| peak RSS of the scan with facets and causes (largest of %d) | %s | %s | %s |\n", len(facets), megabytes(fhwm), scanMemTarget,
			verdict(fhwm < targetScanMem))
	} else {
		p("| facets and causes / plain scan | %s | ≥ 80 %% | not measured |\n", notMeasuredText)
	}
	if r.incident != nil {
		p("| the incident's %s letters split into causes | %s in %.2f s | %s | met |\n", thousands(incidentN),
			strings.Join(r.incident.Causes, " · "), r.incident.Elapsed.Seconds(), strings.Join(incidentCauses, " · "))
	} else {
		p("| the incident's %s letters split into causes | %s | %s | not measured |\n", thousands(incidentN), notMeasuredText,
			strings.Join(incidentCauses, " · "))
	}
}

// writeReadings writes the table of every reading, by round.
func (r *scanReport) writeReadings(b *strings.Builder, scans, officials []*scanChildResult) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	ratios := r.ratios()
	facets := r.series(func(sr *scanRound) *scanChildResult { return sr.facets })
	p("\n| reading | letters/s by round | median | notes |\n|---|---|---|---|\n")
	perLetter := func(d time.Duration, n int64) float64 { return micros(d) / float64(n) }
	row := func(name string, rs []*scanChildResult, extra string) {
		if len(rs) == 0 {
			p("| %s | %s | | |\n", name, notMeasuredText)
			return
		}
		var cpu, broker time.Duration
		var read int64
		var mallocs uint64
		var mostOthers float64
		reading, closing, settles := make([]float64, len(rs)), make([]string, len(rs)), make([]string, len(rs))
		for i, res := range rs {
			cpu, broker, read, mallocs = cpu+res.CPU, broker+res.BrokerCPU, read+res.Read, mallocs+res.Mallocs
			mostOthers = max(mostOthers, res.Others)
			reading[i] = float64(res.Read) / (res.Elapsed - res.Closing).Seconds()
			closing[i] = fmt.Sprintf("%.2f", res.Closing.Seconds())
			settles[i] = fmt.Sprintf("%.0f ms", millis(res.settle))
			if res.unsettled {
				settles[i] = fmt.Sprintf("over %v (killed)", settleLimit)
			}
		}
		notes := []string{
			"to the last letter, closing aside: " + spread(reading, rate) + " letters/s",
			"closing the reader: " + strings.Join(closing, ", ") + " s",
			"the broker dropped its subscription " + strings.Join(settles, ", ") + " after the process exited",
			fmt.Sprintf("CPU per letter: reader %.2f µs, broker %.2f µs; %.1f allocations per letter in the reader", perLetter(cpu, read),
				perLetter(broker, read), float64(mallocs)/float64(read)),
		}
		if extra != "" {
			notes = append(notes, extra)
		}
		notes = append(notes, fmt.Sprintf("other processes used up to %.2f CPUs", mostOthers))
		v := rates(rs)
		p("| %s | %s | %s | %s |\n", name, spread(v, rate), rate(medianF(v)), strings.Join(notes, "; "))
	}
	hwms := func(rs []*scanChildResult) string {
		hs := make([]string, len(rs))
		for i, res := range rs {
			hs[i] = megabytes(res.HWM)
		}
		return "VmHWM " + strings.Join(hs, ", ")
	}
	var mem []string
	for _, sr := range r.rounds {
		if sr.scan != nil {
			mem = append(mem, fmt.Sprintf("%s / %s / %s / %s", megabytes(int64(sr.scan.HeapInuse)), megabytes(int64(sr.scan.HeapAlloc)),
				megabytes(sr.scan.HWM), megabytes(sr.scanMaxRSS)))
		}
	}
	row("`triage.Scan`, no filter (the TUI's scan)", scans, "heap in use / live after GC / VmHWM / rusage max RSS by round: "+strings.Join(mem, ", ")+
		fmt.Sprintf("; before its client existed the process had %s of heap in use and %s RSS", megabytes(int64(scans[0].BaseHeap)), megabytes(scans[0].BaseRSS)))
	row("official client, bare reader", officials, hwms(officials))
	ours := r.series(func(sr *scanRound) *scanChildResult { return sr.ours })
	row("our client, bare reader", ours, hwms(ours))
	filtered := r.series(func(sr *scanRound) *scanChildResult { return sr.filtered })
	row(fmt.Sprintf("`triage.Scan`, filter `%s` (%d matches)", scanFilter, r.wantMatches), filtered, hwms(filtered))
	if len(facets) > 0 {
		row(fmt.Sprintf("`triage.Scan` with facets, then `Causes` and `Summary` (%d facets)", facets[0].Facets), facets, hwms(facets))
	}
	if len(ratios) > 0 {
		p("| scan / official reader, by round | %s | %.1f %% | |\n", spread(ratios, percent), 100*medianF(ratios))
	}
}

// writeMethod writes how the DLQ was filled and read and how each figure is taken.
func (r *scanReport) writeMethod(b *strings.Builder, scans []*scanChildResult) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	gc := func(res *scanChildResult) string {
		return fmt.Sprintf("GOGC %s, GOMEMLIMIT %s", cmp.Or(res.GOGC, "unset (100)"), cmp.Or(res.GOMEMLIMIT, "unset (none)"))
	}
	p("\n- The DLQ: %s dead letters of %d-byte JSON orders, each its own entry (batching off, no compression) as our client's and Java's "+
		"DLQ routers write them, through a producer named as a router names it that created the DLQ's subscription first "+
		"(`InitialSubscriptionName`), so that the broker keeps them all (it then held %s). As a router moves them from the four partitions "+
		"of an orders topic (which the broker holds, with three subscriptions, so that the scan can ask for them): the origin's key (customer-0 … customer-%d, each as often; none on 1 in 50) and properties (content-type, a "+
		"unique traceparent), `REAL_TOPIC` and `ORIGIN_MESSAGE_ID` on 9 in 10, `RECONSUMETIMES` on half of those, and a `reason` property "+
		"of %d distinct values. Filling took %.1f s (%s letters/s).\n",
		thousands(r.n), payloadSize, megabytes(r.brokerRSS), scanKeys-1, len(scanReasons), r.fill.Seconds(), rate(float64(r.n)/r.fill.Seconds()))
	p("- Each reading is a child process of its own (the bench binary run again), one at a time: in each of %d rounds the official "+
		"Go client's `CreateReader` from the earliest message, reading every letter and discarding it, then `triage.Scan` with no filter as "+
		"the TUI called it before causes (a client with the TUI's 10 s operation timeout, an admin client for the progress total, a progress callback, the "+
		"index of every letter's position kept; `dlq stats` reads so), then the same scan counting facets, split into causes and "+
		"summarised after it, as the TUI's scan now does; in the first round also our client's bare reader and `triage.Scan` with the filter. Every "+
		"reader asks for a receiver queue of %s messages, what `triage.Scan` asks for. The rate is the letters read over the time from "+
		"creating the reader (calling `Scan`) to the reader closed (`Scan`'s return, which closes it); the rate's verdict takes the median "+
		"scan rate and the median of the rounds' scan / official ratios.\n",
		len(r.rounds), thousands(scanReceiverQueue))
	if n := r.killed(); n > 0 {
		refills := make([]string, len(r.refills))
		for i, d := range r.refills {
			refills[i] = fmt.Sprintf("%.1f", d.Seconds())
		}
		p("- Between readings the bench waits until the broker has dropped the last reader's subscription (a non-durable one, gone "+
			"with its reader), up to %v. %d times the broker had not, still busy with the unacknowledged entries of a reader that never "+
			"acknowledges (ours; the official reader acknowledges what it reads); the bench then killed it and, for the readings left, "+
			"filled a new one the same way (in %s s).\n", settleLimit, n, cmp.Or(strings.Join(refills, ", "), "no"))
	}
	p("- Memory, in the scan's process: after the scan, `runtime.GC()` with the `Result` and the client still referenced, then "+
		"`runtime.MemStats.HeapInuse` (live bytes, `HeapAlloc`, in the notes); the peak RSS is the process's `VmHWM` at the end, over "+
		"its whole life, checked against the `ru_maxrss` its parent reads when it exits. The Go runtime as the environment left it: %s, "+
		"GOMAXPROCS %d. CPU per letter: the reading process's and the broker's utime + stime (`/proc/<pid>/stat`) over the timed span, "+
		"summed over the rounds.\n", gc(scans[0]), scans[0].GOMAXPROCS)
	if r.profiles != "" {
		p("- CPU and heap profiles of every reading were written to a directory (`-scan-profile`); profiling slows the readings a little.\n")
	}
}
