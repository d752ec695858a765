package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// What the dlq actions (discard, purge, resend, subscribe) share: the DLQ and subscription
// they act on, and the history entry each leaves.

// target is the DLQ an action acts on, and through which subscription.
type target struct {
	ad    *admin.Client
	cl    *client.Client
	topic string
	sub   string
	stats admin.TopicStats
}

// backlog is the subscription's backlog in t.stats.
func (t *target) backlog() triage.Backlog { return triage.BacklogOf(t.stats, t.sub) }

// letters is the subscription's backlog in letters where the broker counts them, else in
// entries (a lower bound), for an ETA.
func (t *target) letters() int64 {
	if b := t.backlog(); b.LettersKnown {
		return b.Letters
	}
	return t.backlog().Entries
}

// openTarget connects, finds the DLQ arg names, refuses a topic that holds no letters unless
// notADLQ (--not-a-dlq), and finds the durable subscription to act through (sub, else the
// DLQ's only one). On failure it reports and returns the exit code; otherwise the caller
// closes t.cl.
func openTarget(ctx context.Context, cf *clientFlags, cmd, arg, sub string, notADLQ bool, stderr io.Writer) (*target, int) {
	ad, cl, topic, code := openDLQ(ctx, cf, cmd, arg, stderr)
	if code != ExitOK {
		return nil, code
	}
	t := &target{ad: ad, cl: cl, topic: topic}
	fail := func(err error) (*target, int) {
		cl.Close()
		var ue usageErr
		if errors.As(err, &ue) {
			return nil, usageError(stderr, cmd, err)
		}
		printError(stderr, cmd, err)
		return nil, ExitFailure
	}
	if err := requireLetterTopic(ctx, ad, cmd, topic, notADLQ); err != nil {
		return fail(err)
	}
	// Dead letters go to one topic, never a partitioned one; the replay engine reads one.
	if n, err := ad.Partitions(ctx, topic); err == nil && n > 0 {
		return fail(usageErr{fmt.Errorf("%s is partitioned (%d partitions): act on one partition, %s-partition-N", topic, n, topic)})
	}
	if err := t.refresh(ctx); err != nil {
		return fail(err)
	}
	var err error
	if t.sub, err = chooseSubscription(t.stats, topic, sub); err != nil {
		return fail(err)
	}
	return t, ExitOK
}

// refresh reads the DLQ's stats again.
func (t *target) refresh(ctx context.Context) error {
	st, err := triage.TopicStats(ctx, t.ad, t.topic)
	if err != nil {
		return fmt.Errorf("DLQ %s: %w", t.topic, err)
	}
	t.stats = st
	return nil
}

// record appends e, one action on a DLQ, to the replay history, which the TUI's dead-letters
// screen lists: whoever is on call next sees what was already done, where and by whom. A
// history that cannot be written does not undo the action; it is reported.
func (c *clientFlags) record(cmd string, e replay.HistoryEntry, stderr io.Writer) {
	if e.When.IsZero() {
		e.When = time.Now()
	}
	e.Cluster = replay.ClusterKey(c.context, c.adminURL)
	e.Context, e.User, e.By = c.context, replay.Actor(), "cli"
	path, err := replay.DefaultHistoryPath()
	if err == nil {
		err = replay.AppendHistory(path, e)
	}
	if err != nil {
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
func positionOf(id client.MessageID) string { return triage.PositionOf(id).String() }

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

// runEngine runs the replay engine for an action, handing each event to show (from another
// goroutine, in order) until the run ends.
func runEngine(ctx context.Context, cl *client.Client, opts replay.Options, show func(replay.Event)) (replay.Summary, error) {
	events := make(chan replay.Event, 256)
	opts.Events = events
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		for ev := range events {
			show(ev)
		}
	}()
	sum, err := replay.Run(ctx, cl, opts)
	<-shown
	return sum, err
}
