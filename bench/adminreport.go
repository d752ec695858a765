package main

import (
	"fmt"
	"strings"
	"time"
)

// markdown renders the admin section.
func (r *adminReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Admin API under stalled requests\n\n")
	p("`letterbox broker --in-memory` in a process of its own, with its default admin limits. `GET %s`, %d times on each of two kinds "+
		"of connection, alternately and one request at a time: a new connection for each request, and one connection kept alive. "+
		"First alone, then while %d other connections each hold a request they never finish (the request line and a `Host` header, "+
		"the blank line that would end the header never sent), opened just before. Latency from the call to the last byte of the answer; "+
		"a request not answered within %.0f s counts as failed, at that time; %d requests of each kind went first, untimed. "+
		"The stalled connections are then watched, for %.0f min at most, until the broker closes them.\n\n",
		adminProbePath, adminProbes, adminStalled, adminProbeTimeout.Seconds(), adminWarmups, adminStallBound.Minutes())
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	target := fmt.Sprintf("≤ %d× alone and ≤ %.0f ms", targetAdminP99Ratio, millis(targetAdminP99))
	r.latencyRow(b, "new connection each", r.idleFresh, r.loadedFresh, target)
	r.latencyRow(b, "one connection kept alive", r.idleKept, r.loadedKept, target)
	r.stallRow(b)
	if !r.loadedMeasured {
		return
	}

	p("\n| series | requests | p50 | p99 | max | failed |\n|---|---|---|---|---|---|\n")
	series := func(name string, s adminSeries) {
		if len(s.lat) == 0 {
			p("| %s | 0 | | | | |\n", name)
			return
		}
		p("| %s | %d | %.2f ms | %.2f ms | %.2f ms | %d |\n", name, len(s.lat),
			millis(s.percentile(0.50)), millis(s.percentile(0.99)), millis(s.lat[len(s.lat)-1]), s.failed)
	}
	series("alone, new connection each", r.idleFresh)
	series("alone, one connection kept alive", r.idleKept)
	series(fmt.Sprintf("%d stalled, new connection each", r.stall.opened), r.loadedFresh)
	series(fmt.Sprintf("%d stalled, one connection kept alive", r.stall.opened), r.loadedKept)

	p("\nOpening the %d stalled connections took %.0f ms; %d of them were still open when the loaded series ended",
		r.stall.opened, millis(r.openedIn), r.openAfterLoad)
	if r.openAfterLoad == r.stall.opened {
		p(", so those requests met every one of them.")
	} else {
		p(": the broker closed some while the series ran, which it met with fewer than %d held.", r.stall.opened)
	}
	p(" Broker RSS %.1f MB alone, %.1f MB holding them; other processes used %.2f CPUs during the loaded series.",
		float64(r.rssIdle)/1e6, float64(r.rssStalled)/1e6, r.others)
	if r.stallMeasured {
		switch {
		case r.stall.replies == 0:
			p(" The broker closed the stalled connections without an answer.")
		default:
			p(" %d of them were answered before being closed (one: `%s`).", r.stall.replies, r.stall.reply)
		}
		p(" Closing times run from each connection's partial request to the end of its stream (EOF or reset, as the bench read it).")
	}
	p("\n")
	for _, s := range []struct {
		name string
		s    adminSeries
	}{{"alone, new connection each", r.idleFresh}, {"alone, kept alive", r.idleKept},
		{"stalled, new connection each", r.loadedFresh}, {"stalled, kept alive", r.loadedKept}} {
		if s.s.firstErr != "" {
			p("\nFirst failure (%s): %s\n", s.name, s.s.firstErr)
		}
	}
}

// latencyRow writes the table row of the loaded p99 on one kind of connection, against the
// same kind's p99 alone.
func (r *adminReport) latencyRow(b *strings.Builder, kind string, alone, loaded adminSeries, target string) {
	metric := fmt.Sprintf("admin GET p99 under %d stalled requests, %s", adminStalled, kind)
	if !r.loadedMeasured || len(alone.lat) == 0 || len(loaded.lat) == 0 {
		fmt.Fprintf(b, "| %s | %s | %s | not measured |\n", metric, notMeasuredText, target)
		return
	}
	a, l := alone.percentile(0.99), loaded.percentile(0.99)
	measured := fmt.Sprintf("%.2f ms (alone %.2f ms: %.1f×)", millis(l), millis(a), float64(l)/float64(max(a, time.Nanosecond)))
	if loaded.failed > 0 {
		measured += fmt.Sprintf(", %d of %d failed", loaded.failed, len(loaded.lat))
	}
	v := "not met"
	if loaded.failed == 0 && l <= targetAdminP99 && l <= targetAdminP99Ratio*a {
		v = "met"
	}
	if r.openAfterLoad < adminStalled {
		v += fmt.Sprintf(" (only %d stalled at the end)", r.openAfterLoad)
	}
	if r.others >= busyWarning {
		v += " (busy machine)"
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s |\n", metric, measured, target, v)
}

// stallRow writes the table row of the stalled connections' fate.
func (r *adminReport) stallRow(b *strings.Builder) {
	metric := "stalled requests closed by the broker"
	target := fmt.Sprintf("all %d, within the %.0f min watched", adminStalled, adminStallBound.Minutes())
	if !r.stallMeasured {
		fmt.Fprintf(b, "| %s | %s | %s | not measured |\n", metric, notMeasuredText, target)
		return
	}
	o := r.stall
	measured := fmt.Sprintf("%d of %d", len(o.closes), o.opened)
	if len(o.closes) > 0 {
		measured += fmt.Sprintf(", after %.1f s median, %.1f s at most", o.closes[len(o.closes)/2].Seconds(), o.closes[len(o.closes)-1].Seconds())
	}
	if open := o.opened - len(o.closes); open > 0 {
		measured += fmt.Sprintf("; %d still open after %.0f min", open, adminStallBound.Minutes())
	}
	v := "not met"
	if o.opened == adminStalled && len(o.closes) == o.opened {
		v = "met"
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s |\n", metric, measured, target, v)
}
