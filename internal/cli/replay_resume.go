package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/letterbox-dev/letterbox/client/replay"
)

// sayResuming names, on stderr, the interrupted run this replay resumes: without it a run
// started again would carry on where another left off, perhaps days ago, without a word.
func sayResuming(opts replay.Options, now time.Time, stderr io.Writer) {
	run, ok, err := replay.Pending(opts)
	if err != nil || !ok {
		return // Run reports what is wrong with the state
	}
	fmt.Fprintln(stderr, resumingLine(run, now))
}

// resumingLine says which run is resumed, started when (the time of day, with the date when
// that was not today), and what it did.
func resumingLine(run replay.PendingRun, now time.Time) string {
	started := run.Started.In(now.Location())
	when := started.Format("15:04")
	if y, m, d := started.Date(); y != now.Year() || m != now.Month() || d != now.Day() {
		when = started.Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("letterbox replay: resuming run %s of %s: %d already moved, %d skipped, %d failed (--new starts afresh)",
		run.Name, when, run.Moved, run.Skipped, run.Failed)
}
