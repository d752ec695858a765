package replay

// The completer: one goroutine, started and waited for by run, that takes the reader's items
// in read order, waits for each republish's receipt, acknowledges in the DLQ only what was
// receipted, counts, reports and records progress. Acknowledgements are individual (batch-index
// ones inside a batch), grouped by the consumer into few ACK commands: the letters a run
// leaves in the DLQ sit between those it moved, which a cumulative acknowledgement would take
// with it.

import (
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// complete takes items in read order, waits for their receipts, acknowledges what moved,
// counts, reports and records progress.
func (e *engine) complete(items <-chan item, stateErr chan<- error) {
	lastSave := time.Now()
	defer e.batch.close(&e.sum)
	for it := range items {
		e.completeOne(it, stateErr, &lastSave)
		e.batch.add(it, &e.sum)
		e.inflight.Add(-1)
		if it.bytes > 0 {
			e.inflightBytes.Add(-it.bytes)
			select {
			case e.freed <- struct{}{}:
			default:
			}
		}
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
			e.lastSeq = max(e.lastSeq, it.seq)
		}
	}
	e.held.finish(it)
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
	if e.opts.Events != nil {
		e.snapshot()
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

// snapshot refreshes the time-derived fields of the summary: the rate of letters acted on
// (never of letters only looked at: a filter that skips nine in ten must not make a run at
// two letters a second look twenty times as fast) and the time the rest takes at it.
func (e *engine) snapshot() {
	s := &e.sum.Progress
	s.Elapsed = e.clock.Now().Sub(e.started)
	acted := s.Acted()
	if secs := s.Elapsed.Seconds(); secs > 0 {
		s.Rate = float64(acted) / secs
	}
	var rest float64
	switch {
	case e.opts.Selected > 0:
		rest = float64(max(e.opts.Selected-acted, 0))
	case s.Total > s.Considered && s.Considered > 0:
		rest = float64(s.Total-s.Considered) * float64(acted) / float64(s.Considered)
	}
	s.ETA = 0
	if rest > 0 && s.Rate > 0 {
		s.ETA = time.Duration(rest / s.Rate * float64(time.Second))
	}
}

// saveState records the run's counts (cumulative over its resumptions) and the highest
// sequence id it has seen receipted.
func (e *engine) saveState() error {
	e.stMu.Lock()
	defer e.stMu.Unlock()
	e.st.LastSequenceID = max(e.st.LastSequenceID, e.lastSeq)
	st := e.st
	st.Moved += e.sum.Moved
	st.Skipped += e.sum.Skipped
	st.Failed += e.sum.Failed
	st.Guarded += e.sum.Guarded
	return st.save(e.statePath)
}

// batchShare follows the batch (an entry of several letters) the completer is in, to count the
// batches a run takes only part of (Summary.SplitBatches): acknowledged letter by letter, on a
// broker that keeps no batch-index acknowledgements they come back with the rest of it.
type batchShare struct {
	entry             client.MessageID
	size              int32
	considered, acted int32
}

// add counts it, closing the previous batch when it is of another entry.
func (b *batchShare) add(it item, sum *Summary) {
	if e := entryOf(it.m.ID); e != b.entry {
		b.close(sum)
		*b = batchShare{entry: e, size: it.m.ID.BatchSize}
	}
	b.considered++
	switch it.action {
	case Moved, Discarded, WouldMove, WouldDiscard:
		b.acted++
	}
}

// close counts the batch just left: taken in part when some of its letters were acted on and
// not all of it (some letters skipped or failed, or not read before the run was done).
func (b *batchShare) close(sum *Summary) {
	if b.size > 1 && b.acted > 0 && (b.acted < b.considered || b.considered < b.size) {
		sum.SplitBatches++
	}
	*b = batchShare{}
}
