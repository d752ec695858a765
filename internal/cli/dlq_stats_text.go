package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// How "letterbox dlq stats" writes its counts for a reader: a header, then one block per
// breakdown, counts first so that the columns line up whatever the names.

// rfc3339Milli is how times are written: RFC 3339 in UTC with milliseconds, the precision of a
// message's publish time.
const rfc3339Milli = "2006-01-02T15:04:05.000Z07:00"

// hourBarWidth is the width of the largest bar of the per-hour histogram.
const hourBarWidth = 40

func writeStats(w io.Writer, res *dlqops.ScanResult, filter string) {
	s := res.Stats
	fmt.Fprintln(w, termtext.Line(res.Topic))
	state := "complete"
	if !res.Complete {
		state = "interrupted: incomplete"
	}
	switch v := res.View; {
	case v.Subscription == "":
		fmt.Fprintf(w, "letters    every letter the DLQ retains (it has no durable subscription)\n")
	case v.IncludeAcknowledged:
		fmt.Fprintf(w, "letters    of subscription %s, the %d it acknowledged and the DLQ retains included\n", termtext.Line(v.Subscription), res.Acknowledged)
	default:
		fmt.Fprintf(w, "letters    those subscription %s has not acknowledged\n", termtext.Line(v.Subscription))
	}
	fmt.Fprintf(w, "read       %d letters in %s (%s)\n", res.Read, res.Elapsed.Round(time.Millisecond), state)
	if res.Approx != "" {
		fmt.Fprintf(w, "≈          %s\n", res.Approx)
	}
	if filter == "" {
		fmt.Fprintf(w, "selected   %d (no filter)\n", s.Letters)
	} else {
		fmt.Fprintf(w, "selected   %d by %s\n", s.Letters, filter)
	}
	if s.Letters == 0 {
		return
	}
	fmt.Fprintf(w, "published  %s to %s\n", s.First.UTC().Format(rfc3339Milli), s.Last.UTC().Format(rfc3339Milli))
	writeCounts(w, "by reason", s.ByReason, s.Letters)
	writeCounts(w, "by origin", s.ByOrigin, s.Letters)
	writeCounts(w, "by origin subscription", s.BySubscription, s.Letters)
	title := "keys"
	if s.DistinctKeys > len(s.TopKeys) {
		title = fmt.Sprintf("top keys (%d of %d distinct)", len(s.TopKeys), s.DistinctKeys)
	}
	writeCounts(w, title, s.TopKeys, s.Letters)
	writeHours(w, s.ByHour)
	reconsumes := make([]dlqops.Count, len(s.Reconsumes))
	for i, r := range s.Reconsumes {
		name := strconv.Itoa(r.Times)
		if r.Times < 0 {
			name = "none (died by redelivery)"
		}
		reconsumes[i] = dlqops.Count{Name: name, N: r.N}
	}
	writeCounts(w, "reconsume times", reconsumes, s.Letters)
}

// writeCounts writes one breakdown: count, share of total, name.
func writeCounts(w io.Writer, title string, cs []dlqops.Count, total int64) {
	fmt.Fprintf(w, "\n%s\n", title)
	width := 1
	for _, c := range cs {
		width = max(width, len(strconv.FormatInt(c.N, 10)))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %*d  %5.1f%%  %s\n", width, c.N, float64(c.N)*100/float64(max(total, 1)), termtext.Line(c.Name))
	}
}

// writeHours writes a bar per hour, scaled to the busiest hour. Runs of more than two empty
// hours fold into one line: a DLQ that fills up in bursts a week apart stays a screenful.
func writeHours(w io.Writer, hours []dlqops.HourCount) {
	io.WriteString(w, "\nper hour (UTC)\n")
	var most int64
	width := 1
	for _, h := range hours {
		most = max(most, h.N)
		width = max(width, len(strconv.FormatInt(h.N, 10)))
	}
	bar := func(h dlqops.HourCount) {
		n := 0
		if h.N > 0 {
			n = max(int(h.N*hourBarWidth/most), 1)
		}
		fmt.Fprintf(w, "  %s  %-*s  %*d\n", h.Hour.UTC().Format("2006-01-02 15:04"), hourBarWidth, strings.Repeat("#", n), width, h.N)
	}
	for i := 0; i < len(hours); i++ {
		j := i
		for j < len(hours) && hours[j].N == 0 {
			j++
		}
		if j-i > 2 {
			fmt.Fprintf(w, "  … %d hours without letters\n", j-i)
			i = j - 1
			continue
		}
		bar(hours[i])
	}
}
