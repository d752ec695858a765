package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// Action is what a replay did with one dead letter.
type Action string

const (
	Moved        Action = "moved"         // republished, receipted, acknowledged in the DLQ
	Discarded    Action = "discarded"     // acknowledged in the DLQ without republishing (Discard)
	Skipped      Action = "skipped"       // not selected, or held back by the loop guard; left in the DLQ
	Failed       Action = "failed"        // selected but not moved; left in the DLQ
	WouldMove    Action = "would-move"    // dry run: selected and movable
	WouldDiscard Action = "would-discard" // dry run of a discard: selected
)

// DefaultMaxReplays is the loop guard's default.
const DefaultMaxReplays = 3

// Options configure a replay. DLQ and Subscription are required.
type Options struct {
	DLQ          string
	Subscription string
	// Names, when set, notes the property names of every letter read, selected or not: what
	// a warning about a filter that names a property no letter has lists.
	Names *deadletter.PropertyNames
	// To is the destination of dead letters whose origin is unknown: without REAL_TOPIC,
	// and a DLQ name that does not derive from a known topic.
	To string
	// Destination, when set, is where every selected dead letter goes, whatever its origin.
	Destination string
	// AllowCrossTenant lets letters go to a destination in another tenant than the DLQ's.
	// Without it such a letter fails and stays (a dry run reports it so): a letter's
	// REAL_TOPIC is a stranger's word, and a replay publishes with the operator's credentials.
	AllowCrossTenant bool
	// Cluster keys the run's state, as the history is keyed (ClusterKey): a run interrupted on
	// one cluster is not resumed on another that has a DLQ of the same name.
	Cluster string
	// Discard acknowledges the selected dead letters in the DLQ instead of republishing them:
	// individual acknowledgements, so nothing else moves. The loop guard does not apply.
	Discard bool
	// Edit, when set, replaces the payload, key and properties of what is republished (a
	// letter fixed by hand before it is sent again); REPLAYED_FROM and REPLAY_COUNT are added
	// as always. Such a run never resumes another: it starts under a name of its own.
	Edit *Edit
	// Until, when set, is the last message the run takes: the DLQ's last message when its
	// preview was made, so that a run moves what the preview showed and leaves the dead letters
	// that arrived since (Summary.Arrived). Nil: the DLQ's last message at the start of the run.
	Until *client.MessageID
	// KnownTopics are the topics of the DLQ's namespace (fully qualified or short), used to
	// derive the origin from a DLQ named <topic>-<subscription>-DLQ. Without them the
	// origin is derived only when the DLQ is named <topic>-<Subscription>-DLQ.
	KnownTopics []string

	Selection Selection
	// MaxReplays: a dead letter already replayed this many times (its REPLAY_COUNT) is
	// skipped and reported. Zero means DefaultMaxReplays; negative disables the guard.
	MaxReplays int
	// Rate limits republishing to this many messages a second; 0 means no limit.
	Rate float64
	// DryRun reports what would move, and where, and moves nothing.
	DryRun bool

	// StateDir holds the runs' state; empty means DefaultStateDir().
	StateDir string
	// New starts a new run even when an interrupted one of the same replay exists.
	New bool
	// Deduplication tells the engine that the destination deduplicates (the broker or the
	// namespace enables it), which the summary reports as exactly once.
	Deduplication bool

	// Total is the expected number of letters to consider (the subscription's backlog in
	// letters), and Selected how many of them the preview selected; both for the ETA, 0 when
	// unknown.
	Total    int64
	Selected int64
	// Admin, when set, lets the summary count the letters a run left (Summary.Arrived,
	// LeftOut) as the subscription sees them, what it acknowledged left out; without it they
	// are the DLQ's messages in those spans.
	Admin *admin.Client
	// IdleTimeout is how long without a message before the DLQ's last one makes the run ask
	// the broker whether anything is still to come: if the subscription's backlog is only
	// what this run holds (skipped, or on its way), the rest was acknowledged earlier and the
	// replay is complete. Default 2s.
	IdleTimeout time.Duration
	// StallTimeout ends the run with an error, not complete (a later run resumes it), when
	// the broker still has dead letters for it but none arrived for this long. Default 30s.
	StallTimeout time.Duration

	// Events, when set, receives one Event per message considered, in read order. Run
	// blocks until each is received and closes Events before it returns, so receive until
	// it is closed.
	Events chan<- Event

	// crashAfter (tests) simulates a crash once this many messages moved: later receipts
	// are not acknowledged, reading stops and the final state is not written.
	crashAfter int64
	// clock (tests) is the rate limiter's time; nil: the wall clock.
	clock clock
}

// Edit is what a resend puts in place of the dead letter's own payload, key and properties.
type Edit struct {
	Payload    []byte
	Key        string
	Properties map[string]string
}

// StartEdit is a letter as an edited resend starts from: its payload, key and properties, less
// the bookkeeping and the replay's own (REPLAYED_FROM, REPLAY_COUNT), which the engine sets
// anew on what it republishes.
func StartEdit(payload []byte, key string, properties map[string]string) Edit {
	props := map[string]string{}
	for k, v := range properties {
		if !IsBookkeeping(k) && k != PropertyReplayedFrom && k != PropertyReplayCount {
			props[k] = v
		}
	}
	return Edit{Payload: bytes.Clone(payload), Key: key, Properties: props}
}

// Changes reports whether e changes anything of from (StartEdit of the letter): its payload,
// key or properties. The history calls a resend "edited" only then.
func (e Edit) Changes(from Edit) bool {
	return !bytes.Equal(e.Payload, from.Payload) || e.Key != from.Key || !maps.Equal(e.Properties, from.Properties)
}

// Progress counts what a run did so far.
type Progress struct {
	Considered int64 `json:"considered"`
	Moved      int64 `json:"moved"`
	WouldMove  int64 `json:"would_move"`
	Discarded  int64 `json:"discarded,omitempty"`
	Skipped    int64 `json:"skipped"`
	// Guarded counts the skipped messages the loop guard held back (they were selected).
	Guarded int64 `json:"guarded"`
	Failed  int64 `json:"failed"`
	// Total is Options.Total.
	Total   int64         `json:"total,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Rate is letters acted on per second: moved, discarded (in a dry run, found movable),
	// never those only looked at. ETA is the time the rest takes at that rate: the letters
	// the preview selected (Options.Selected) not yet acted on, else as many of the letters
	// still to consider (Options.Total) as the run has acted on so far.
	Rate float64       `json:"rate"`
	ETA  time.Duration `json:"eta_ns,omitempty"`
}

// Acted counts the letters the run acted on: moved, discarded, or in a dry run found movable.
func (p Progress) Acted() int64 { return p.Moved + p.Discarded + p.WouldMove }

// Event reports one message considered.
type Event struct {
	ID          client.MessageID
	Key         string
	Destination string
	Action      Action
	Reason      string
	Progress    Progress
}

// IDString is the message id as the reports and REPLAYED_FROM write it.
func (e Event) IDString() string { return idString(e.ID) }

// Summary is the outcome of a run.
type Summary struct {
	Progress
	// Run is the run's producer name; Resumed says it continues an interrupted run.
	Run     string
	Resumed bool
	DryRun  bool
	// Complete: the replay reached the DLQ's end as it was at the start (or its limit, or
	// every listed id) and every moved message is acknowledged.
	Complete bool
	// ExactlyOnce: Options.Deduplication; otherwise a resumed run is at least once.
	ExactlyOnce bool
	StateFile   string
	// Arrived counts the letters past the run's last message (Until) when it ended: dead
	// letters that arrived after the preview (Options.Until) or the start, left for a later
	// run. LeftOut counts the letters up to Until that the run never considered because its
	// selection was done (its limit reached, every listed id found). Neither counts what the
	// run considered and left (Skipped, Failed).
	Arrived int64
	LeftOut int64
	// SplitBatches counts the batches (entries of several letters) the run acted on only in
	// part, as delivered: some letters moved or discarded (in a dry run: would be), others
	// skipped, failed, or not read before the selection was done. A broker that keeps no
	// batch-index acknowledgements (upstream's default) delivers such a batch again whole, the
	// letters acted on included: see CheckWholeBatches.
	SplitBatches int64
	// Until is the last message the run was to take: what a run after this one as a preview
	// passes as Options.Until to move exactly what it showed.
	Until client.MessageID
	// WouldResume, in a dry run, is the interrupted run that the same replay without DryRun
	// resumes (nil: it starts a new one), so that a preview can say so.
	WouldResume *PendingRun
}

// OK reports whether everything selected moved (in a dry run: could move).
func (s Summary) OK() bool { return s.Complete && s.Failed == 0 && s.Guarded == 0 }

// Errors of Run.
var (
	// ErrBusy: another consumer holds the DLQ's subscription.
	ErrBusy = errors.New("replay: the subscription has another consumer")
	// ErrPartitionedDLQ: the DLQ is partitioned, which DLQs never are.
	ErrPartitionedDLQ = errors.New("replay: partitioned DLQ topics are not supported")
)

// PartOfBatchError refuses a run that would take part of a batch on a broker that acknowledges
// whole entries only.
type PartOfBatchError struct {
	Batches int64 // taken in part
}

func (e *PartOfBatchError) Error() string {
	return fmt.Sprintf("refused, nothing acknowledged: the selection takes part of %d %s, and this broker acknowledges "+
		"whole entries only (acknowledgmentAtBatchIndexLevelEnabled=false): the letters taken would come back at the next "+
		"redelivery; select whole batches, or have the broker keep batch-index acknowledgements",
		e.Batches, map[bool]string{true: "batch", false: "batches"}[e.Batches == 1])
}

// CheckWholeBatches refuses (*PartOfBatchError) a run of opts that would take part of a batch:
// for a broker that acknowledges whole entries only. It runs opts as a dry run, which reads
// without acknowledging anything.
func CheckWholeBatches(ctx context.Context, cl *client.Client, opts Options) error {
	opts.DryRun, opts.Events = true, nil
	sum, err := Run(ctx, cl, opts)
	if err != nil {
		return err
	}
	if sum.SplitBatches > 0 {
		return &PartOfBatchError{Batches: sum.SplitBatches}
	}
	return nil
}
