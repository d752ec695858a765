package replay

// The reader: the one goroutine (Run's own) that receives dead letters in order, decides
// what becomes of each, republishes the selected ones and hands everything, in read order,
// to the completer (complete.go). It waits for receipts only to settle (at the DLQ's end, or
// when no letter comes): otherwise the window of sends in flight is bounded by the producers
// and by the channel to the completer (sendWindow).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
)

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
	rl.init(e.opts.Rate, e.clock)
	var prev client.MessageID
	seen := false
	reachedEnd := false
	lastMsg := time.Now()
	for {
		if e.crashed.Load() || ctx.Err() != nil {
			return false, nil
		}
		if (sel.Limit > 0 && selected >= sel.Limit) || (len(sel.IDs) > 0 && len(found) == len(sel.IDs)) {
			e.lastRead, e.stoppedAt = prev, seen
			return true, nil
		}
		m, err := e.receive(ctx)
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
			if !e.opts.DryRun && !e.held.holds(m.ID) {
				_ = e.cons.Ack(m)
			}
			continue
		}
		if entryCompare(m.ID, last) > 0 {
			return true, nil // published after the replay started
		}
		prev, seen = m.ID, true
		e.opts.Names.Add(m.Properties)
		it := e.decide(ctx, m)
		if it.action == "" {
			if len(sel.IDs) > 0 {
				for _, id := range sel.IDs {
					if idNames(id, m.ID) {
						found[id] = true
					}
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

// receive returns the next dead letter, waiting at most IdleTimeout for one. A letter already
// in the consumer's queue (most of them, while a backlog streams in) is taken without arming
// a timer: a context and a timer per letter were a tenth of the reader's work.
func (e *engine) receive(ctx context.Context) (*client.Message, error) {
	if m, err := e.cons.ReceiveQueued(); m != nil || err != nil {
		return m, err
	}
	rctx, cancel := context.WithTimeout(ctx, e.opts.IdleTimeout)
	defer cancel()
	return e.cons.Receive(rctx)
}

// settle waits until the completer has finished every item handed to it (their receipts
// came, what moved is acknowledged), then asks the broker what is still to come. A cancelled
// ctx or a simulated crash ends the wait with nothing to come and no error.
func (e *engine) settle(ctx context.Context) (int64, error) {
	e.flush(ctx)
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
//
// A consumer that lost its connection is waited for, up to StallTimeout: the acknowledgements
// that went with the connection leave what moved in the backlog, so the answer after the
// reconnect counts it, the broker redelivers it and the reader acknowledges it again.
func (e *engine) stillToCome(ctx context.Context) (int64, error) {
	deadline := time.Now().Add(e.opts.StallTimeout)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		coming, err := e.askStillToCome(ctx)
		if err == nil || !errors.Is(err, client.ErrServiceNotReadyClient) || time.Now().Add(pause).After(deadline) {
			return coming, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(pause):
		}
	}
}

func (e *engine) askStillToCome(ctx context.Context) (int64, error) {
	if !e.opts.DryRun {
		if err := e.cons.FlushAcks(ctx); err != nil {
			return 0, fmt.Errorf("replay: acknowledge in %s: %w", e.opts.DLQ, err)
		}
	}
	st, err := e.cons.BrokerStats(ctx)
	if err != nil {
		return 0, fmt.Errorf("replay: backlog of %s: %w", e.opts.DLQ, err)
	}
	return max(st.BacklogEntries-e.held.entries(), 0), nil
}

// decide classifies m: skipped (unselected, loop guard), failed (no destination, or whether
// it is selected cannot be told), or to move (action left empty, dest and count set).
func (e *engine) decide(ctx context.Context, m *client.Message) item {
	it := item{m: m}
	var decode func() error
	if e.decoder != nil {
		decode = func() error { return e.decoder.DecodeLetter(ctx, m) }
	}
	r, err := e.opts.Selection.reason(m, decode, e.letters)
	switch {
	case err != nil:
		// Neither moved nor skipped as unselected: it stays, and the run says why.
		it.action, it.reason = Failed, "cannot tell whether it is selected: "+err.Error()
		return it
	case r != "":
		it.action, it.reason = Skipped, r
		return it
	}
	if e.opts.Discard {
		return it
	}
	it.dest = e.destination(m)
	if r := e.crossTenant(it.dest); r != "" {
		it.action, it.reason = Failed, r
		return it
	}
	it.count = replayCount(m)
	if e.opts.MaxReplays >= 0 && it.count >= e.opts.MaxReplays {
		it.action, it.guarded = Skipped, true
		it.reason = fmt.Sprintf("loop guard: replayed %d times already (max %d)", it.count, e.opts.MaxReplays)
		return it
	}
	if it.dest == "" {
		it.action = Failed
		it.reason = "no destination: no REAL_TOPIC property and the DLQ name names no known topic; give one with --to"
	}
	return it
}

// maxOrigins bounds the reader's memory of REAL_TOPIC values and where they lead.
const maxOrigins = 1024

// destination is where m goes: Options.Destination, else REAL_TOPIC without a partition
// suffix, else the topic the DLQ name derives from, else Options.To.
func (e *engine) destination(m *client.Message) string {
	if e.opts.Destination != "" {
		return e.opts.Destination
	}
	if rt := m.Properties[client.PropertyRealTopic]; rt != "" {
		// A DLQ's letters come from a few topics: each is worked out once, not per letter.
		if d, ok := e.origins[rt]; ok {
			return d
		}
		d := naming.BaseName(qualify(rt))
		if len(e.origins) < maxOrigins {
			e.origins[rt] = d
		}
		return d
	}
	if e.derived != "" {
		return e.derived
	}
	return e.opts.To
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
