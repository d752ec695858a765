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
// The package uses only the client package; it owns no goroutine beyond a Run call.
package replay

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	e := &engine{cl: cl, opts: opts, producers: map[string]*producerEntry{}, started: time.Now(), held: map[client.MessageID]int{}}
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

	sum Summary // owned by the completer while it runs

	crashed atomic.Bool

	// held counts, per entry, the messages this run received and has not acknowledged
	// (skipped ones stay): what of the subscription's backlog is not still to come.
	heldMu sync.Mutex
	held   map[client.MessageID]int
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

	items := make(chan item, 1024)
	stateErr := make(chan error, 1)
	done := make(chan struct{})
	// The completer owns e.sum and, while it runs, the counts of e.st; the reader owns
	// e.st.Ledgers. State saves take stMu.
	go func() {
		defer close(done)
		e.complete(items, stateErr)
	}()
	complete, runErr := e.read(ctx, last, items)
	// The last batch leaves now rather than after the batching delay. Failures are the
	// completer's to report, message by message.
	for _, pe := range e.producers {
		if pe.p != nil {
			_ = pe.p.Flush(ctx)
		}
	}
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

// read receives dead letters in order and feeds the pipeline until the end, the limit, or
// ctx. complete reports that the replay reached its end.
func (e *engine) read(ctx context.Context, last client.MessageID, items chan<- item) (complete bool, err error) {
	if last.Entry < 0 {
		return true, nil // an empty DLQ
	}
	sel := &e.opts.Selection
	selected := e.st.Moved // a resumed run's limit counts what it moved before
	found := map[client.MessageID]bool{}
	var rl limiter
	rl.init(e.opts.Rate, e.opts.clock)
	var prev client.MessageID
	seen := false
	reachedEnd := false
	lastMsg := time.Now()
	for {
		if e.crashed.Load() {
			return false, nil
		}
		if sel.Limit > 0 && selected >= sel.Limit {
			return true, nil
		}
		if len(sel.IDs) > 0 && len(found) == len(sel.IDs) {
			return true, nil
		}
		rctx, cancel := context.WithTimeout(ctx, e.opts.IdleTimeout)
		m, err := e.cons.Receive(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return false, nil
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return false, fmt.Errorf("replay: receive from %s: %w", e.opts.DLQ, err)
			}
			coming, err := e.settle(ctx)
			if err != nil || e.crashed.Load() {
				return false, err
			}
			if coming == 0 {
				return true, nil // nothing more up to the end: the rest was acknowledged before
			}
			if stalled := time.Since(lastMsg); stalled >= e.opts.StallTimeout {
				return false, fmt.Errorf("replay: %s has %d more entries for %s, but none arrived for %v",
					e.opts.DLQ, coming, e.opts.Subscription, stalled.Round(time.Second))
			}
			continue
		}
		lastMsg = time.Now()
		// A redelivery (after a reconnect) of something this run already handled. If it moved,
		// its acknowledgement may have been lost with the connection: it is sent again.
		// Skipped ones, and those still waiting for their receipt, are held and left alone.
		if seen && m.ID.Compare(prev) <= 0 {
			if !e.opts.DryRun && !e.holds(m.ID) {
				_ = e.cons.Ack(m)
			}
			continue
		}
		if entryCompare(m.ID, last) > 0 {
			return true, nil // published after the replay started
		}
		prev, seen = m.ID, true
		e.hold(m.ID, 1)
		it := e.decide(m)
		if it.action == "" {
			for _, id := range sel.IDs {
				if idNames(id, m.ID) {
					found[id] = true
				}
			}
			selected++
			switch {
			case e.opts.DryRun && e.opts.Discard:
				it.action = WouldDiscard
			case e.opts.DryRun:
				it.action = WouldMove
			case e.opts.Discard:
				it.discard = true
			default:
				if err := rl.wait(ctx); err != nil {
					return false, nil
				}
				if err := e.send(ctx, &it); err != nil {
					return false, err
				}
				if it.action == "" && it.fut == nil {
					return false, nil // cancelled before it was sent
				}
			}
		}
		e.inflight.Add(1)
		items <- it
		if atEnd(m.ID, last) || reachedEnd {
			// Everything up to the DLQ's last message was received. It is complete once the
			// broker agrees: acknowledgements lost with a connection leave messages that
			// moved in the backlog, and the broker redelivers them, to be acknowledged again.
			reachedEnd = true
			coming, err := e.settle(ctx)
			if err != nil || coming == 0 || e.crashed.Load() {
				return err == nil && !e.crashed.Load(), err
			}
		}
	}
}

// hold counts n more (or, negative, fewer) unacknowledged messages of id's entry.
func (e *engine) hold(id client.MessageID, n int) {
	key := entryOf(id)
	e.heldMu.Lock()
	defer e.heldMu.Unlock()
	if e.held[key] += n; e.held[key] <= 0 {
		delete(e.held, key)
	}
}

// holds reports whether the run holds id's entry unacknowledged.
func (e *engine) holds(id client.MessageID) bool {
	e.heldMu.Lock()
	defer e.heldMu.Unlock()
	return e.held[entryOf(id)] > 0
}

// entryOf is the id of the entry that holds id's message: the key of held.
func entryOf(id client.MessageID) client.MessageID {
	id.BatchIndex, id.BatchSize = -1, 0
	return id
}

// settle waits until the completer has finished every item handed to it (their receipts
// came, what moved is acknowledged), then asks the broker what is still to come. A cancelled
// ctx or a simulated crash ends the wait with nothing to come and no error.
func (e *engine) settle(ctx context.Context) (int64, error) {
	for e.inflight.Load() > 0 {
		if ctx.Err() != nil || e.crashed.Load() {
			return 0, nil
		}
		time.Sleep(time.Millisecond)
	}
	coming, err := e.stillToCome(ctx)
	if err != nil && ctx.Err() != nil {
		return 0, nil
	}
	return coming, err
}

// stillToCome asks the broker how many entries of the subscription's backlog this run has not
// received: its acknowledgements are flushed first, so that the backlog has them. An ack that
// leaves after the flush makes the answer too high once, never too low.
func (e *engine) stillToCome(ctx context.Context) (int64, error) {
	if !e.opts.DryRun {
		if err := e.cons.FlushAcks(ctx); err != nil {
			return 0, fmt.Errorf("replay: acknowledge in %s: %w", e.opts.DLQ, err)
		}
	}
	st, err := e.cons.BrokerStats(ctx)
	if err != nil {
		return 0, fmt.Errorf("replay: backlog of %s: %w", e.opts.DLQ, err)
	}
	e.heldMu.Lock()
	held := int64(len(e.held))
	e.heldMu.Unlock()
	return max(st.BacklogEntries-held, 0), nil
}

// decide classifies m: skipped (unselected, loop guard), failed (no destination), or to move
// (action left empty, dest set).
func (e *engine) decide(m *client.Message) item {
	it := item{m: m}
	if r := e.opts.Selection.reason(m); r != "" {
		it.action, it.reason = Skipped, r
		return it
	}
	if e.opts.Discard {
		return it
	}
	it.dest = e.destination(m)
	if n := replayCount(m); e.opts.MaxReplays >= 0 && n >= e.opts.MaxReplays {
		it.action, it.guarded = Skipped, true
		it.reason = fmt.Sprintf("loop guard: replayed %d times already (max %d)", n, e.opts.MaxReplays)
		return it
	}
	if it.dest == "" {
		it.action = Failed
		it.reason = "no destination: no REAL_TOPIC property and the DLQ name names no known topic; give one with --to"
	}
	return it
}

// destination is where m goes: Options.Destination, else REAL_TOPIC without a partition
// suffix, else the topic the DLQ name derives from, else Options.To.
func (e *engine) destination(m *client.Message) string {
	if e.opts.Destination != "" {
		return e.opts.Destination
	}
	if rt := m.Properties[client.PropertyRealTopic]; rt != "" {
		return partitionSuffix.ReplaceAllString(qualify(rt), "")
	}
	if e.derived != "" {
		return e.derived
	}
	return e.opts.To
}

// send republishes it.m, numbering it; it.fut is set when the message went out, it.action
// when it could not be sent. The error is fatal (the state could not be recorded).
func (e *engine) send(ctx context.Context, it *item) error {
	m := it.m
	n, isNew := e.st.ledgerNumber(m.ID.Ledger)
	seq, err := sequenceID(n, m.ID.Entry, m.ID.BatchIndex)
	if err != nil {
		it.action, it.reason = Failed, err.Error()
		return nil
	}
	if isNew {
		// Recorded before anything of the ledger is sent, so a resumed run numbers it alike.
		e.stMu.Lock()
		e.st.Ledgers = append(e.st.Ledgers, m.ID.Ledger)
		err := e.st.save(e.statePath)
		e.stMu.Unlock()
		if err != nil {
			return err
		}
	}
	p, err := e.producer(ctx, it.dest)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		it.action, it.reason = Failed, fmt.Sprintf("producer for %s: %v", it.dest, err)
		return nil
	}
	msg := republished(m, replayCount(m))
	if ed := e.opts.Edit; ed != nil {
		edited := maps.Clone(ed.Properties)
		if edited == nil {
			edited = map[string]string{}
		}
		edited[PropertyReplayedFrom] = msg.Properties[PropertyReplayedFrom]
		edited[PropertyReplayCount] = msg.Properties[PropertyReplayCount]
		msg.Payload, msg.Key, msg.Properties = ed.Payload, ed.Key, edited
		msg.OrderingKey = ""
		msg.SchemaVersion = nil // edited by hand: the writer's schema no longer vouches for it
	}
	msg.SequenceID = &seq
	fut := p.SendAsync(ctx, msg)
	select {
	case <-fut.Done():
		// Completed at once: refused before it was sent (ctx ended while the producer was
		// full, or the producer is closed). Nothing went out.
		if _, err := fut.Result(); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			it.action, it.reason = Failed, err.Error()
			return nil
		}
	default:
	}
	it.fut, it.seq = fut, seq
	return nil
}

func (e *engine) producer(ctx context.Context, dest string) (*client.Producer, error) {
	if pe := e.producers[dest]; pe != nil {
		return pe.p, pe.err
	}
	p, err := e.cl.CreateProducer(ctx, client.ProducerOptions{
		Topic: dest,
		Name:  e.st.Name,
		// A new run batches: its sequence ids ascend in read order and every batch carries
		// its highest, so the broker's high-water mark moves batch by batch and a batch
		// re-sent after a reconnect is dropped whole. A resumed run sends one message per
		// entry: it re-reads messages the interrupted run may have stored (up to the
		// broker's mark) and a batch mixing those with new ones would be stored whole, or
		// dropped whole; one by one, each is judged on its own sequence id.
		DisableBatching:    e.sum.Resumed,
		MaxPendingMessages: 1000,
	})
	if err != nil && ctx.Err() != nil {
		return nil, err // not cached: cancelled
	}
	e.producers[dest] = &producerEntry{p: p, err: err}
	return p, err
}

// complete takes items in read order, waits for their receipts, acknowledges what moved,
// counts, reports and records progress.
func (e *engine) complete(items <-chan item, stateErr chan<- error) {
	lastSave := time.Now()
	for it := range items {
		e.completeOne(it, stateErr, &lastSave)
		e.inflight.Add(-1)
	}
}

// completeOne waits for the receipt of it, acknowledges it if it moved, counts, reports and
// records progress.
func (e *engine) completeOne(it item, stateErr chan<- error, lastSave *time.Time) {
	if e.opts.crashAfter > 0 && e.sum.Moved >= e.opts.crashAfter {
		e.crashed.Store(true)
		return
	}
	if it.discard {
		if err := e.cons.Ack(it.m); err != nil {
			it.action, it.reason = Failed, "not acknowledged: "+err.Error()
		} else {
			it.action = Discarded
			e.hold(it.m.ID, -1)
		}
	}
	if it.fut != nil {
		if _, err := it.fut.Result(); err != nil {
			it.action, it.reason = Failed, err.Error()
			// Later messages of the run may be stored already, with higher sequence
			// ids: resending this one under the same name would be dropped as a
			// duplicate. The name is retired at once.
			e.stMu.Lock()
			e.st.Retired = true
			if err := e.st.save(e.statePath); err != nil {
				select {
				case stateErr <- err:
				default:
				}
			}
			e.stMu.Unlock()
		} else if err := e.cons.Ack(it.m); err != nil {
			it.action, it.reason = Failed, "republished, but not acknowledged in the DLQ: "+err.Error()
		} else {
			it.action = Moved
			e.hold(it.m.ID, -1)
			e.stMu.Lock()
			e.st.LastSequenceID = max(e.st.LastSequenceID, it.seq)
			e.stMu.Unlock()
		}
	}
	e.sum.Considered++
	switch it.action {
	case Moved:
		e.sum.Moved++
	case WouldMove, WouldDiscard:
		e.sum.WouldMove++
	case Discarded:
		e.sum.Discarded++
	case Skipped:
		e.sum.Skipped++
		if it.guarded {
			e.sum.Guarded++
		}
	case Failed:
		e.sum.Failed++
	}
	e.snapshot()
	if e.opts.Events != nil {
		e.opts.Events <- Event{ID: it.m.ID, Key: it.m.Key, Destination: it.dest, Action: it.action, Reason: it.reason, Progress: e.sum.Progress}
	}
	if e.republishes() && time.Since(*lastSave) > 250*time.Millisecond {
		*lastSave = time.Now()
		if err := e.saveState(); err != nil {
			select {
			case stateErr <- err:
			default:
			}
		}
	}
}

// snapshot refreshes the time-derived fields of the summary.
func (e *engine) snapshot() {
	s := &e.sum.Progress
	s.Elapsed = time.Since(e.started)
	if secs := s.Elapsed.Seconds(); secs > 0 {
		s.Rate = float64(s.Considered) / secs
	}
	s.ETA = 0
	if s.Total > s.Considered && s.Rate > 0 {
		s.ETA = time.Duration(float64(s.Total-s.Considered) / s.Rate * float64(time.Second))
	}
}

// saveState records the run's counts (cumulative over its resumptions).
func (e *engine) saveState() error {
	e.stMu.Lock()
	defer e.stMu.Unlock()
	st := e.st
	st.Moved += e.sum.Moved
	st.Skipped += e.sum.Skipped
	st.Failed += e.sum.Failed
	st.Guarded += e.sum.Guarded
	return st.save(e.statePath)
}

// entryCompare orders ids by entry only.
func entryCompare(a, b client.MessageID) int {
	a.BatchIndex, b.BatchIndex = -1, -1
	return a.Compare(b)
}

// atEnd reports whether id is the DLQ's last message as it was at the start.
func atEnd(id, last client.MessageID) bool {
	if entryCompare(id, last) != 0 {
		return false
	}
	switch {
	case id.BatchIndex < 0:
		return true
	case last.BatchIndex >= 0:
		return id.BatchIndex >= last.BatchIndex
	}
	return id.BatchIndex >= id.BatchSize-1
}

// limiter spaces sends to a rate: one every 1/rate seconds, never in a burst after a pause
// (time not used is not saved up).
type limiter struct {
	every time.Duration
	next  time.Time
	clock clock
}

// clock is the limiter's time: the wall clock, or a test's.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, returning ctx's error then.
	Sleep(ctx context.Context, d time.Duration) error
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *limiter) init(rate float64, c clock) {
	l.clock = c
	if l.clock == nil {
		l.clock = wallClock{}
	}
	if rate > 0 {
		l.every = time.Duration(float64(time.Second) / rate)
	}
}

func (l *limiter) wait(ctx context.Context) error {
	if l.every == 0 {
		return ctx.Err()
	}
	now := l.clock.Now()
	if l.next.Before(now) {
		l.next = now
	}
	d := l.next.Sub(now)
	l.next = l.next.Add(l.every)
	if d <= 0 {
		return ctx.Err()
	}
	return l.clock.Sleep(ctx, d)
}
