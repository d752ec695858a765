package main

// The stored part's section of the report: what stored.go measured.

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// markdown renders the stored section.
func (r *storedReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Start with data stored\n\n")
	if r.skipped != "" {
		p("Not measured: %s.\n", r.skipped)
		return
	}
	if len(r.warm) == 0 && len(r.cold) == 0 {
		p("Not measured.\n")
		return
	}
	p("`letterbox broker --data DIR` on a data directory holding %.1f GiB of segment files in %d topics (1 KiB messages, one per entry, "+
		"each topic kept whole by a subscription; written once, then opened, subscribed and stopped gracefully by the broker, "+
		"as a directory is after some use). Start to ready is from exec to the ready line; the first lookup is an HTTP "+
		"`/lookup/v2` of a topic no lookup has opened since the start, on a new connection, right after the ready line: "+
		"it opens the topic (its segments' indexes, its tail segment scanned). Cold: after `sync` and "+
		"`echo 3 > /proc/sys/vm/drop_caches` before each start, so the binary is read from disk too.\n\n",
		float64(r.stored)/(1<<30), r.topics)
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	row := func(metric string, d []time.Duration, target time.Duration, skipped string) {
		switch {
		case len(d) > 0:
			med := median(d)
			verdict := "not met"
			if med < target {
				verdict = "met"
			}
			p("| %s, median (best, worst) of %d | %.1f (%.1f, %.1f) ms | < %.0f ms | %s |\n", metric, len(d),
				millis(med), millis(slices.Min(d)), millis(slices.Max(d)), millis(target), verdict)
		case skipped != "":
			p("| %s | not measured: %s | < %.0f ms | not measured |\n", metric, skipped, millis(target))
		default:
			p("| %s | %s | < %.0f ms | not measured |\n", metric, notMeasuredText, millis(target))
		}
	}
	row("start to ready, warm", r.warm, targetStoredWarm, "")
	row("start to ready, page cache dropped", r.cold, targetStoredCold, r.coldSkipped)
	row("first lookup of a stored topic, warm", r.warmLookup, targetFirstLookup, "")
	row("first lookup of a stored topic, page cache dropped", r.coldLookup, targetFirstLookup, r.coldSkipped)
}
