package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// What the dlq actions (discard, purge, resend, subscribe) share: the DLQ and subscription
// they act on, and the history entry each leaves.

// openTarget connects and opens the DLQ arg names for an action (dlqops.Open): a topic that
// holds no letters is refused unless notADLQ (--not-a-dlq), and the durable subscription to
// act through is sub, else the DLQ's only one. On failure it reports and returns the exit
// code; otherwise the caller closes t.Client.
func openTarget(ctx context.Context, cf *clientFlags, cmd, arg, sub string, notADLQ bool, stderr io.Writer) (*dlqops.Target, int) {
	ad, cl, err := cf.connect(ctx, stderr)
	if err != nil {
		printError(stderr, cmd, err)
		return nil, ExitFailure
	}
	t, err := dlqops.Open(ctx, ad, cl, arg, dlqops.OpenOptions{Subscription: sub, AnyTopic: notADLQ})
	if err != nil {
		cl.Close()
		if err = flagWords(cmd, err); isUsage(err) {
			return nil, usageError(stderr, cmd, err)
		}
		printError(stderr, cmd, err)
		return nil, ExitFailure
	}
	return t, ExitOK
}

// record appends e, one action on a DLQ, to the replay history, which the TUI's dead-letters
// screen lists: whoever is on call next sees what was already done, where and by whom. A
// history that cannot be written does not undo the action; it is reported.
func (c *clientFlags) record(cmd string, e dlqops.HistoryEntry, stderr io.Writer) {
	who := dlqops.Who{Cluster: dlqops.ClusterKey(c.context, c.adminURL), Context: c.context, By: "cli"}
	if err := dlqops.Record(e, who); err != nil {
		printError(stderr, cmd, fmt.Errorf("not recorded in the replay history: %w", err))
	}
}

// resultOf words an action's outcome for the history.
func resultOf(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "complete"
	case ctx.Err() != nil:
		return "cancelled"
	}
	return "error: " + err.Error()
}

// positionOf is a message id as the commands print it and --ids and --until read it back:
// ledger:entry, or ledger:entry:partition:batch for a message of a batch.
func positionOf(id client.MessageID) string { return dlqops.PositionOf(id).String() }

// parseUntil reads --until (ledger:entry[:partition:batch]); "" is none.
func parseUntil(s string) (*client.MessageID, error) {
	if s == "" {
		return nil, nil
	}
	id, err := client.ParseMessageID(s)
	if err != nil {
		return nil, fmt.Errorf("--until: %w", err)
	}
	return &id, nil
}
