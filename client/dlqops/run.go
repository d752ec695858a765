package dlqops

import (
	"context"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// CheckBatches refuses, with a *replay.PartOfBatchError and before anything is sent or
// acknowledged, a run that would take some letters of a batch on a broker that acknowledges
// whole entries only (acknowledgmentAtBatchIndexLevelEnabled=false): the letters taken would
// come back at the next redelivery. A dry run changes nothing and is never refused.
func CheckBatches(ctx context.Context, cl *client.Client, opts replay.Options) error {
	if opts.DryRun || opts.Admin == nil || triage.ReadBatchAcks(ctx, opts.Admin) != triage.BatchAcksLost {
		return nil
	}
	return replay.CheckWholeBatches(ctx, cl, opts)
}

// Run runs the replay engine with opts, handing each event to show (from another goroutine,
// in order; nil: none) until the run ends. opts.Events is Run's own.
func Run(ctx context.Context, cl *client.Client, opts replay.Options, show func(replay.Event)) (replay.Summary, error) {
	events := make(chan replay.Event, 256)
	opts.Events = events
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		for ev := range events {
			if show != nil {
				show(ev)
			}
		}
	}()
	sum, err := replay.Run(ctx, cl, opts)
	<-shown
	return sum, err
}
