package replay

// Republishing: one producer per destination, under the run's name, with many sends in
// flight. The reader sends; the completer (complete.go) waits for the receipts.

import (
	"context"
	"fmt"

	"github.com/letterbox-dev/letterbox/client"
)

// sendWindow bounds what a run has on its way: republished and not yet receipted (each
// producer's MaxPendingMessages), and handed to the completer and not yet acknowledged (the
// channel between them, which bounds the total over all destinations). A durable broker
// receipts a batch only after the fsync that covers it: at 150,000 letters a second the
// producer's default of 1000 is gone in under 7 ms, and the run would wait on every group
// commit. 4096 letters of 1 KiB hold 4 MiB; what a crash without deduplication may send
// twice grows with it.
const sendWindow = 4096

// sendBytes bounds the same by payload bytes, and the DLQ consumer's prefetch with it: 4096
// letters of a megabyte would hold 4 GiB twice over. A letter larger than this goes alone.
const sendBytes = 32 << 20

// roomFor waits until n more payload bytes fit in sendBytes beside what is republished and
// not yet completed (or nothing is); false if ctx ended first.
func (e *engine) roomFor(ctx context.Context, n int64) bool {
	for {
		cur := e.inflightBytes.Load()
		if cur == 0 || cur+n <= sendBytes {
			return true
		}
		select {
		case <-e.freed:
		case <-ctx.Done():
			return false
		}
	}
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
	var edited map[string]string
	if ed := e.opts.Edit; ed != nil {
		edited = EditedProperties(m, *ed) // before republished takes m's properties
	}
	msg := republished(&e.out, m, it.count)
	if ed := e.opts.Edit; ed != nil {
		msg.Payload, msg.Key, msg.Properties = ed.Payload, ed.Key, edited
		msg.OrderingKey = ""
		msg.SchemaVersion = nil // edited by hand: the writer's schema no longer vouches for it
	}
	msg.SequenceID = &seq
	size := int64(len(msg.Payload))
	if !e.roomFor(ctx, size) {
		return nil // cancelled: nothing sent
	}
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
	it.fut, it.seq, it.bytes = fut, seq, size
	e.inflightBytes.Add(size)
	return nil
}

func (e *engine) producer(ctx context.Context, dest string) (*client.Producer, error) {
	if pe := e.producers[dest]; pe != nil {
		return pe.p, pe.err
	}
	p, err := e.cl.CreateProducer(ctx, client.ProducerOptions{
		Topic: dest,
		Name:  e.st.Name,
		// The run batches: its sequence ids ascend in read order and every batch carries its
		// highest, so the broker's mark moves batch by batch and a batch re-sent after a
		// reconnect is dropped whole. A resumed run first re-reads letters the interrupted one
		// may have stored, numbered at or below the mark PRODUCER_SUCCESS reports for the
		// name: the producer sends each of those alone (a batch mixing them with new ones
		// would be dropped whole by upstream, which judges it by its lowest id, or stored
		// whole by letterbox, by its highest), and batches from the first letter after it.
		MaxPendingMessages: sendWindow,
	})
	if err != nil && ctx.Err() != nil {
		return nil, err // not cached: cancelled
	}
	e.producers[dest] = &producerEntry{p: p, err: err}
	return p, err
}

// flush sends the producers' partial batches now rather than after the batching delay, and
// waits for their receipts (or ctx). Failures are the completer's to report, letter by letter.
func (e *engine) flush(ctx context.Context) {
	for _, pe := range e.producers {
		if pe.p != nil {
			_ = pe.p.Flush(ctx)
		}
	}
}
