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
// Run is a pipeline of two goroutines. Its own reads, decides and republishes, through one
// batching producer per destination, never waiting for a receipt: up to sendWindow letters
// are on their way at once. The completer it starts takes them in read order, waits for each
// receipt, acknowledges, counts and reports. So a letter is acknowledged, and its event sent,
// only once its copy is receipted; a crash leaves the unreceipted in the DLQ, and a cancel lets
// what was sent be receipted and acknowledged.
//
// Run takes Options (the DLQ and its subscription, a Selection, where the letters go or that
// they are discarded) and reports Events as it goes and a Summary at the end; Pending finds an
// interrupted run to resume, and AppendHistory and ReadHistory keep the history of runs.
//
// The package uses only the client package; it owns no goroutine beyond a Run call.
package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/triage"
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
	e := &engine{cl: cl, opts: opts, producers: map[string]*producerEntry{}, clock: opts.clock, freed: make(chan struct{}, 1),
		held: held{left: map[client.MessageID]int{}}, origins: map[string]string{}, tenantVerdicts: map[string]string{}, lastSeq: -1}
	if opts.Selection.usesDecode() {
		e.decoder = cl.NewPayloadDecoder()
	}
	e.letters = deadletter.NewReader(nil)
	if e.clock == nil {
		e.clock = wallClock{}
	}
	e.started = e.clock.Now()
	e.sum.DryRun = opts.DryRun
	if opts.DryRun {
		act := opts
		act.DryRun = false
		if run, ok, err := Pending(act); err == nil && ok {
			e.sum.WouldResume = &run // a state that cannot be read is the run's to report
		}
	}
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
	clock   clock // the rate limit's, the rate's and the ETA's
	started time.Time
	// The reader's: the last letter it read, and whether it stopped there because the
	// selection was done (its limit, every listed id), leaving the letters after it.
	lastRead  client.MessageID
	stoppedAt bool

	statePath string
	// st: the reader appends Ledgers, the completer sets counts and marks; every write
	// and every save holds stMu.
	stMu sync.Mutex
	st   runState

	producers map[string]*producerEntry
	derived   string
	// origins caches where each REAL_TOPIC leads, tenantVerdicts what crossTenant said of
	// each destination (the reader's).
	origins        map[string]string
	tenantVerdicts map[string]string
	// decoder tells "payload decodes" for the selection's filters; nil when none asks.
	decoder *client.PayloadDecoder
	// letters reads the letter fields the selection's filters ask for (the reader's).
	letters *deadletter.Reader

	sum     Summary    // owned by the completer while it runs
	lastSeq int64      // the highest sequence id moved; the completer's
	batch   batchShare // the completer's: the batch it is in

	crashed atomic.Bool

	held held           // what of the subscription's backlog the run holds
	out  client.Message // the reader's: what it republishes, one letter at a time
	// inflight counts the items the reader has handed to the completer and it has not
	// finished; inflightBytes the payload bytes of those republished, bounded by sendBytes
	// (roomFor), and freed signals the reader when the completer lowered it.
	inflight      atomic.Int64
	inflightBytes atomic.Int64
	freed         chan struct{}
}

// errCrashed ends a run that simulated a crash (Options.crashAfter).
var errCrashed = errors.New("replay: simulated crash")

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
	bytes   int64 // the republished payload's, counted in inflightBytes
}

func (e *engine) run(ctx context.Context) (Summary, error) {
	cons, err := e.cl.Subscribe(ctx, client.ConsumerOptions{
		Topic:               e.opts.DLQ,
		SubscriptionName:    e.opts.Subscription,
		Type:                client.Exclusive,
		InitialPosition:     client.Earliest,
		EnableBatchIndexAck: true,
		Name:                naming.OwnPrefix + "replay", // never counted as the DLQ's consumer
		// As much prefetched as may be on its way (sendWindow): with the default 1000 the
		// reader waited for the broker's next delivery every few hundred letters, each
		// FLOW a round trip behind the receipts that free the window (replay at 1 KiB:
		// about a fifth faster, make bench). Large letters are prefetched only as many as
		// sendBytes holds.
		ReceiverQueueSize:  sendWindow,
		ReceiverQueueBytes: sendBytes,
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
		// Best effort: the counts are for the report.
		e.sum.Arrived, e.sum.LeftOut = e.countLeft(ctx, last)
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

// countLeft counts what a complete run left in the DLQ without considering it: the letters
// after until (arrived since the preview, or the start), and, when the selection was done
// before until, the letters between the last one read and until (left out). Both are read with
// a non-durable reader, as the subscription sees them when the admin API says what it
// acknowledged. A count that cannot be read is 0.
func (e *engine) countLeft(ctx context.Context, until client.MessageID) (arrived, leftOut int64) {
	count := func(after client.MessageID, upTo map[int32]client.MessageID) int64 {
		o := triage.ScanOptions{Topic: e.opts.DLQ, Admin: e.opts.Admin, NoIndex: true, Until: upTo,
			After: map[int32]client.MessageID{after.Partition: after}}
		if e.opts.Admin != nil {
			o.Subscription = e.opts.Subscription
		}
		res, err := triage.Scan(ctx, e.cl, o)
		if err != nil {
			return 0
		}
		return res.Read
	}
	switch {
	case e.opts.DryRun:
		// A preview is the moment everything after it arrives after: nothing did yet.
	case until.Entry >= 0:
		arrived = count(until, nil)
	default:
		arrived = count(client.EarliestMessageID(), nil) // the DLQ was empty
	}
	if e.stoppedAt && until.Entry >= 0 && entryCompare(e.lastRead, until) <= 0 && !atEnd(e.lastRead, until) {
		leftOut = count(e.lastRead, map[int32]client.MessageID{until.Partition: until})
	}
	return arrived, leftOut
}
