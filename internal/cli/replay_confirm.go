package cli

import (
	"fmt"
	"io"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// confirmEveryLetter asks before a replay without a selection moves a DLQ of more than
// bigAction letters, wanting its short name typed as the other actions on a whole DLQ do. It
// asks only a person at a terminal: without one (a script, cron) a replay of every letter runs
// as it always has, which is its documented use; --yes skips the question. ok false ends the
// command with code, as confirm says.
func confirmEveryLetter(in stdin, opts dlqops.ReplayOptions, yes bool, stderr io.Writer) (ok bool, code int) {
	sel := opts.Selection
	if opts.DryRun || yes || !in.terminal || len(sel.IDs) > 0 || len(sel.Filters) > 0 || sel.Limit > 0 || opts.Total <= bigAction {
		return true, ExitOK
	}
	where := "to where each came from"
	if opts.Destination != "" {
		where = "to " + termtext.Line(shortTopic(opts.Destination))
	}
	q := question{cmd: "letterbox replay", name: localName(opts.DLQ),
		text: fmt.Sprintf("replay every letter of %s via %s, %d letters, %s?", termtext.Line(shortTopic(opts.DLQ)),
			termtext.Line(opts.Subscription), opts.Total, where)}
	return in.confirm(q, false, stderr)
}
