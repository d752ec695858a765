package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// Part of a batch. The engine acknowledges single letters of a batch (batch-index
// acknowledgements); a broker with acknowledgmentAtBatchIndexLevelEnabled=false (upstream's
// default) acknowledges whole entries only and delivers the batch again, the letters an action
// took in it included. So before an action takes part of a batch, the broker's configuration
// decides: refused when the broker says it drops such acknowledgements, asked about with a
// warning when it does not say; and after the action, what the broker kept is read back.

// askAboutBatches settles an action that takes part of the batches split before it asks q:
// refused (ok false, with the exit code) where the broker acknowledges whole entries only, fix
// saying what to do instead; with a warning before the question where the broker does not say.
func askAboutBatches(ctx context.Context, t *dlqops.Target, cmd string, split []dlqops.BatchShare, fix string, q *question, stderr io.Writer) (code int, ok bool) {
	if len(split) == 0 {
		return ExitOK, true
	}
	switch dlqops.ReadBatchAcks(ctx, t.Admin) {
	case dlqops.BatchAcksLost:
		return batchesOff(cmd, split, stderr, fix), false
	case dlqops.BatchAcksUnknown:
		q.text = batchesUnknownNote(split) + ".\n" + q.text
	}
	return ExitOK, true
}

// batchesOff is the refusal of an action that would take part of a batch the broker cannot
// acknowledge in part: it says which batches, and how to take whole ones.
func batchesOff(cmd string, split []dlqops.BatchShare, stderr io.Writer, fix string) int {
	b := split[0]
	more := ""
	if len(split) > 1 {
		more = fmt.Sprintf(" (and part of %d more batches)", len(split)-1)
	}
	fmt.Fprintf(stderr, "%s: refused, nothing acknowledged: the selection takes %d of the %d letters of batch %s%s, "+
		"and this broker acknowledges whole entries only (acknowledgmentAtBatchIndexLevelEnabled=false): "+
		"the letters taken would come back at the next redelivery. %s\n", cmd, b.Selected, b.Letters, b.Entry, more, fix)
	return ExitUsage
}

// batchesUnknownNote is what an action says before taking part of a batch on a broker that does
// not say whether it keeps such acknowledgements.
func batchesUnknownNote(split []dlqops.BatchShare) string {
	var n int64
	for _, b := range split {
		n += b.Selected
	}
	return fmt.Sprintf("%s share batches with letters not selected, and the broker does not say whether it keeps "+
		"acknowledgements of part of a batch (upstream does not, by default): if it does not, they come back", plural(n, "selected letter"))
}

// notKept reads the subscription's cursor back after an action and counts the letters of ids
// it does not show acknowledged (the broker dropped the acknowledgement: they come back), and
// those it cannot tell about (part of a batch, on a broker that does not say).
func notKept(ctx context.Context, t *dlqops.Target, ids []client.MessageID) (dropped, unknown int64, err error) {
	cur, err := dlqops.ReadCursor(ctx, t.Admin, t.Topic, t.Sub)
	if err != nil {
		return 0, 0, err
	}
	for _, id := range ids {
		p := dlqops.PositionOf(id)
		switch {
		case cur.Acked(p):
		case id.BatchSize > 1 && !cur.BatchesKnown:
			unknown++
		default:
			dropped++
		}
	}
	return dropped, unknown, nil
}

// keptWords says what the read-back found, "" when every letter is acknowledged.
func keptWords(dropped, unknown int64, sub string) string {
	var parts []string
	if dropped > 0 {
		parts = append(parts, fmt.Sprintf("%s not kept acknowledged by the broker on %s: delivered again, still in the DLQ",
			plural(dropped, "letter"), termtext.Line(sub)))
	}
	if unknown > 0 {
		parts = append(parts, fmt.Sprintf("%s of batches acknowledged in part: the broker does not say whether it kept them", plural(unknown, "letter")))
	}
	return strings.Join(parts, "; ")
}
