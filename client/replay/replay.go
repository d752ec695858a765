// Package replay moves dead letters back to the topics they died on, losing none: it reads
// a DLQ in order through its subscription as the only (Exclusive) consumer, republishes
// each selected message to its origin and acknowledges it in the DLQ only once the
// republish is receipted. Messages it does not select, or could not move, stay in the DLQ
// unacknowledged. It is the engine behind "letterbox replay" and the TUI's replay screen.
//
// Exactly once where the destination deduplicates: every run publishes under its own
// producer name, with sequence ids that follow the DLQ's message ids (so a message read again
// gets the same one) and ascend in read order. A run interrupted before it ended is resumed
// under the same name when the same replay (DLQ, subscription, destination, selection) is
// started again, so the broker drops what it already stored. Without deduplication a
// resumed run is at least once.
//
// Run is a pipeline of two goroutines. Its own reads, decides and republishes (read.go,
// send.go), through one batching producer per destination, never waiting for a receipt: up
// to sendWindow letters are on their way at once. The completer it starts (complete.go)
// takes them in read order, waits for each receipt, acknowledges, counts and reports. So a
// letter is acknowledged, and its event sent, only once its copy is receipted; a crash leaves
// the unreceipted in the DLQ, and a cancel lets what was sent be receipted and acknowledged.
//
// The package uses only the client package; it owns no goroutine beyond a Run call.
package replay

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/client"
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
	// To is the destination of dead letters whose origin is unknown: without REAL_TOPIC,
	// and a DLQ name that does not derive from a known topic.
	To string
	// Destination, when set, is where every selected dead letter goes, whatever its origin.
	Destination string
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

	// Total is the expected number of messages to consider (the subscription's backlog),
	// for the ETA; 0 when unknown.
	Total int64
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
	// Rate is messages considered per second; ETA is the time left at that rate when Total
	// is known.
	Rate float64       `json:"rate"`
	ETA  time.Duration `json:"eta_ns,omitempty"`
}

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
	// Arrived counts the DLQ's entries past the run's last message when it ended: dead letters
	// that arrived after the preview (Options.Until) or the start, left for a later run.
	Arrived int64
	// Until is the last message the run was to take: what a run after this one as a preview
	// passes as Options.Until to move exactly what it showed.
	Until client.MessageID
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

// Run replays opts.DLQ until it reaches the DLQ's last message as it was at the start, the
// selection's limit, or ctx ends; in every case each message is left either moved and
// acknowledged or unacknowledged in the DLQ. The error is ctx's when it ended the run.
func Run(ctx context.Context, cl *client.Client, opts Options) (Summary, error) {
	if opts.Events != nil {
		defer close(opts.Events)
	}
	if opts.DLQ == "" || opts.Subscription == "" {
		return Summary{}, errors.New("replay: DLQ and subscription are required")
	}
	if opts.MaxReplays == 0 {
		opts.MaxReplays = DefaultMaxReplays
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 2 * time.Second
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = 30 * time.Second
	}
	if opts.To != "" {
		opts.To = qualify(opts.To)
	}
	if opts.Destination != "" {
		opts.Destination = qualify(opts.Destination)
	}
	if opts.Edit != nil {
		opts.New = true
	}
	e := &engine{cl: cl, opts: opts, producers: map[string]*producerEntry{}, started: time.Now(),
		held: held{left: map[client.MessageID]int{}}, origins: map[string]string{}, lastSeq: -1}
	polled, cancel := context.WithCancel(context.Background())
	cancel()
	e.polled = polled
	e.sum.DryRun = opts.DryRun
	e.sum.ExactlyOnce = opts.Deduplication && !opts.DryRun
	e.sum.Total = opts.Total
	if !opts.DryRun && !opts.Discard {
		if err := e.openState(); err != nil {
			return e.sum, err
		}
	}
	return e.run(ctx)
}

// republishes reports whether the run sends anything (not a dry run, not a discard).
func (e *engine) republishes() bool { return !e.opts.DryRun && !e.opts.Discard }

type producerEntry struct {
	p   *client.Producer
	err error
}

type engine struct {
	cl      *client.Client
	opts    Options
	cons    *client.Consumer
	started time.Time

	statePath string
	// st: the reader appends Ledgers, the completer sets counts and marks; every write
	// and every save holds stMu.
	stMu sync.Mutex
	st   runState

	producers map[string]*producerEntry
	derived   string
	// origins caches where each REAL_TOPIC leads (the reader's).
	origins map[string]string
	// polled is an ended context: Receive with it takes a queued message or returns at once.
	polled context.Context

	sum     Summary // owned by the completer while it runs
	lastSeq int64   // the highest sequence id moved; the completer's

	crashed atomic.Bool

	held held // what of the subscription's backlog the run holds
	// inflight counts the items the reader has handed to the completer and it has not
	// finished.
	inflight atomic.Int64
}

// errCrashed ends a run that simulated a crash (Options.crashAfter).
var errCrashed = errors.New("replay: simulated crash")

// openState loads the replay's state, resuming an interrupted run, or starts a new one.
func (e *engine) openState() error {
	dir := e.opts.StateDir
	if dir == "" {
		var err error
		if dir, err = DefaultStateDir(); err != nil {
			return err
		}
	}
	dlq := qualify(e.opts.DLQ)
	sel := e.opts.Selection.canonical()
	to := e.opts.To
	if e.opts.Destination != "" {
		to = "\x00all:" + e.opts.Destination // every letter there: another replay than --to's
	}
	e.statePath = filepath.Join(dir, stateKey(dlq, e.opts.Subscription, to, sel)+".json")
	e.sum.StateFile = e.statePath
	st, ok, err := loadState(e.statePath)
	if err != nil && !e.opts.New {
		return err
	}
	if ok && !e.opts.New && !st.Done && !st.Retired && st.Name != "" {
		e.st = st
		e.sum.Resumed = true
	} else {
		e.st = runState{Name: newRunName(), DLQ: dlq, Subscription: e.opts.Subscription, To: e.opts.To,
			Selection: sel, LastSequenceID: -1, Started: time.Now().UTC()}
	}
	e.sum.Run = e.st.Name
	return e.st.save(e.statePath)
}

// item is one message on its way through the pipeline: decided at once, or waiting for the
// receipt of its republish.
type item struct {
	m       *client.Message
	dest    string
	action  Action
	reason  string
	guarded bool
	discard bool // to acknowledge without republishing
	count   int  // the letter's REPLAY_COUNT
	fut     *client.SendFuture
	seq     int64
}

func (e *engine) run(ctx context.Context) (Summary, error) {
	cons, err := e.cl.Subscribe(ctx, client.ConsumerOptions{
		Topic:               e.opts.DLQ,
		SubscriptionName:    e.opts.Subscription,
		Type:                client.Exclusive,
		InitialPosition:     client.Earliest,
		EnableBatchIndexAck: true,
		Name:                "letterbox-replay",
	})
	if errors.Is(err, client.ErrConsumerBusy) {
		return e.sum, fmt.Errorf("%w: %s on %s (stop it first; a replay must be the subscription's only consumer): %w",
			ErrBusy, e.opts.Subscription, e.opts.DLQ, err)
	}
	if err != nil {
		return e.sum, fmt.Errorf("replay: subscribe to %s as %s: %w", e.opts.DLQ, e.opts.Subscription, err)
	}
	e.cons = cons
	defer cons.Close()
	if len(cons.Topics()) != 1 {
		return e.sum, fmt.Errorf("%w: %s", ErrPartitionedDLQ, e.opts.DLQ)
	}
	var last client.MessageID
	if e.opts.Until != nil {
		last = *e.opts.Until
	} else {
		lasts, err := cons.LastMessageIDs(ctx)
		if err != nil {
			return e.sum, fmt.Errorf("replay: last message of %s: %w", e.opts.DLQ, err)
		}
		for _, id := range lasts {
			last = id
		}
	}
	e.sum.Until = last
	e.derived = derivedDestination(e.opts.DLQ, e.opts.Subscription, e.opts.KnownTopics)
	defer func() {
		for _, pe := range e.producers {
			if pe.p != nil {
				pe.p.Close()
			}
		}
	}()

	items := make(chan item, sendWindow)
	stateErr := make(chan error, 1)
	done := make(chan struct{})
	// The completer owns e.sum and e.lastSeq and, while it runs, the counts of e.st; the
	// reader owns e.st.Ledgers and the producers. State saves take stMu; e.held has its own.
	go func() {
		defer close(done)
		e.complete(items, stateErr)
	}()
	complete, runErr := e.read(ctx, last, items)
	e.flush(ctx)
	close(items)
	<-done
	select {
	case err := <-stateErr:
		runErr = errors.Join(runErr, err)
	default:
	}

	if e.crashed.Load() {
		return e.sum, errCrashed
	}
	var flushErr error
	if !e.opts.DryRun {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		flushErr = cons.FlushAcks(fctx)
		cancel()
		if flushErr != nil {
			flushErr = fmt.Errorf("replay: acknowledge in %s: %w", e.opts.DLQ, flushErr)
		}
	}
	e.sum.Complete = complete && runErr == nil && flushErr == nil && ctx.Err() == nil
	if e.sum.Complete {
		// What the subscription still holds beyond what this run left behind arrived after
		// its last message. Best effort: the count is for the report.
		if coming, err := e.stillToCome(ctx); err == nil {
			e.sum.Arrived = coming
		}
	}
	e.snapshot()
	if e.republishes() {
		e.st.Done = e.sum.Complete
		if err := e.saveState(); err != nil {
			flushErr = errors.Join(flushErr, err)
		}
	}
	if runErr == nil && flushErr == nil && ctx.Err() != nil {
		runErr = ctx.Err()
	}
	return e.sum, errors.Join(runErr, flushErr)
}
