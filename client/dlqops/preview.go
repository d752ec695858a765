package dlqops

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// The preview of an action on selected letters: a read of the letters the target's
// subscription has not acknowledged (a scan of its view), without consuming, restricted as the
// engine will restrict the run — to the listed ids, the filter, the first Limit — so that what
// the asker is told is what the action takes. Its Until, the DLQ's last message when the
// preview was made, bounds the run: what dies while the question waits is left. It also notes
// the batches the selection takes only part of, which a broker that acknowledges whole entries
// only cannot discard (CheckBatches).

// PreviewRequest is the selection a preview makes, as the run will make it.
type PreviewRequest struct {
	IDs    []client.MessageID // listed ids: ledger:entry names every letter of the entry
	Filter *expr.Expr         // nil: every letter
	Limit  int64              // the first Limit selected letters; 0: no limit
	// Names notes the property names of every letter read, for a warning about a filter that
	// names a property no letter has.
	Names *deadletter.PropertyNames
	// Until is the last message to read (nil: the DLQ's last message now).
	Until *client.MessageID
	// Progress is told how the read goes (from the reading goroutine; nil: not told).
	Progress func(ScanProgress)
}

// PreviewLetter is one letter the action will take.
type PreviewLetter struct {
	Pos    Position
	Key    string
	Reason string
}

// BatchShare is one batch (an entry of several letters) the selection takes letters of.
type BatchShare struct {
	Entry    LedgerEntry
	Letters  int64 // not acknowledged
	Selected int64
}

// Preview is what an action will take, read without consuming.
type Preview struct {
	Letters []PreviewLetter
	Until   client.MessageID   // the last message the action takes
	Missing []client.MessageID // listed ids the preview did not find
	// Batches are the selected letters' batches, in read order: how many letters of each the
	// subscription has not acknowledged, and how many of those are selected.
	Batches []BatchShare
	// Approx says why the preview may count letters the subscription acknowledged already.
	Approx string
	// Cut says the read stopped at the limit, before the last letter the action could take.
	Cut bool
}

// errPreviewDone ends a preview's read once the limit is reached and its last batch is read.
var errPreviewDone = errors.New("preview done")

// Preview reads t's subscription's letters up to r.Until and selects as the run will.
func (t *Target) Preview(ctx context.Context, r PreviewRequest) (*Preview, error) {
	sel := newPreviewer(ctx, t, r)
	o := ScanOptions{Topic: t.Topic, Subscription: t.Sub, Admin: t.Admin, NoIndex: true, Names: r.Names,
		Progress: r.Progress, Visit: sel.visit}
	if r.Until != nil {
		o.Until = map[int32]client.MessageID{r.Until.Partition: *r.Until}
	}
	res, err := triage.Scan(ctx, t.Client, o)
	if err != nil && !errors.Is(err, errPreviewDone) {
		return nil, err
	}
	p := sel.p
	// A read the limit ended early did not see every letter's property names.
	p.Cut = errors.Is(err, errPreviewDone)
	p.Approx = res.Approx
	if r.Until != nil {
		p.Until = *r.Until
	} else {
		p.Until = client.MessageID{Ledger: -1, Entry: -1, Partition: -1, BatchIndex: -1}
		for _, id := range res.Until { // one, on the non-partitioned topic a DLQ is
			p.Until = id
		}
	}
	p.Batches = slices.DeleteFunc(p.Batches, func(b BatchShare) bool { return b.Selected == 0 })
	for i, id := range r.IDs {
		if !sel.seen[i] {
			p.Missing = append(p.Missing, id)
		}
	}
	return p, nil
}

// previewer selects the letters of a scan as a run will, one at a time.
type previewer struct {
	ctx     context.Context
	r       PreviewRequest
	p       *Preview
	seen    []bool      // of r.IDs
	last    *BatchShare // the batch of the letter read last
	decoder *client.PayloadDecoder
}

func newPreviewer(ctx context.Context, t *Target, r PreviewRequest) *previewer {
	sel := &previewer{ctx: ctx, r: r, p: &Preview{}, seen: make([]bool, len(r.IDs))}
	if r.Filter.UsesDecode() {
		sel.decoder = t.Client.NewPayloadDecoder()
	}
	return sel
}

// visit is the scan's visit of one letter.
func (s *previewer) visit(m *client.Message, l *deadletter.Letter, _ bool) error {
	pos := triage.PositionOf(m.ID)
	e := LedgerEntry{Ledger: pos.Ledger, Entry: pos.Entry}
	full := s.r.Limit > 0 && int64(len(s.p.Letters)) >= s.r.Limit
	if s.last == nil || s.last.Entry != e {
		if full {
			return errPreviewDone // the last selected letter's batch is read whole
		}
		s.p.Batches = append(s.p.Batches, BatchShare{Entry: e})
		s.last = &s.p.Batches[len(s.p.Batches)-1]
	}
	s.last.Letters++
	if full {
		return nil
	}
	if len(s.r.IDs) > 0 {
		i := slices.IndexFunc(s.r.IDs, func(id client.MessageID) bool { return names(id, pos) })
		if i < 0 {
			return nil
		}
		s.seen[i] = true
	}
	if s.r.Filter != nil {
		subject := expr.FromClient(m)
		if s.decoder != nil {
			subject.Decode = func() error { return s.decoder.DecodeLetter(s.ctx, m) }
		}
		ok, err := s.r.Filter.Eval(&subject, l)
		if err != nil {
			// As the run will: a letter whose selection cannot be told is not guessed at.
			return fmt.Errorf("letter %s: %w", pos, err)
		}
		if !ok {
			return nil
		}
	}
	s.last.Selected++
	s.p.Letters = append(s.p.Letters, PreviewLetter{Pos: pos, Key: m.Key, Reason: l.Reason})
	return nil
}

// names reports whether the listed id sel names the letter at p, as the engine decides it:
// ledger:entry names every letter of the entry, a batch index one of them.
func names(sel client.MessageID, p Position) bool {
	return sel.Ledger == p.Ledger && sel.Entry == p.Entry && (sel.BatchIndex < 0 || sel.BatchIndex == max(p.Batch, 0))
}

// Split are the batches the selection takes some letters of, not all.
func (p *Preview) Split() []BatchShare {
	var out []BatchShare
	for _, b := range p.Batches {
		if b.Letters > 1 && b.Selected < b.Letters {
			out = append(out, b)
		}
	}
	return out
}
