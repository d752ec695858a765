package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// sayResuming names, on stderr, the interrupted run this replay resumes (a dry run: would
// resume): without it a run started again would carry on where another left off, perhaps days
// ago, without a word.
func sayResuming(opts dlqops.ReplayOptions, now time.Time, stderr io.Writer) {
	act := opts
	act.DryRun = false
	run, ok, err := dlqops.Pending(act)
	if err != nil || !ok {
		return // Run reports what is wrong with the state
	}
	verb := "resuming"
	if opts.DryRun {
		verb = "without --dry-run, would resume"
	}
	fmt.Fprintf(stderr, "letterbox replay: %s %s (--new starts afresh)\n", verb, run.Describe(now))
}
