package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// The preview of an action on selected letters: a read of the letters the action's
// subscription has not acknowledged (triage.Scan of its view), without consuming, restricted as
// the engine will restrict the run — to the listed ids, the filter, the first --limit — so that
// what the question counts is what the action takes. Its Until, the DLQ's last message when the
// preview was made, bounds the run: what dies while the question waits is left. It also notes
// the batches the selection takes only part of, which a broker that acknowledges whole entries
// only cannot discard (dlq_batches.go).

// selection is the selection flags of an action, parsed.
type selection struct {
	filterText []string
	filter     *expr.Expr // for the preview
	filters    []replay.Filter
	ids        []client.MessageID
	limit      int64
	names      *deadletter.PropertyNames // the property names the filters give, watched
}

// parseSelection parses --filter and --limit, beside the --ids read already; a bad one is
// reported (exit 2).
func parseSelection(cmd string, filters []string, ids []client.MessageID, limit int64, stderr io.Writer) (selection, int) {
	s := selection{filterText: filters, ids: ids, limit: limit}
	var err error
	if s.filter, err = parseFilters(filters, time.Now()); err != nil {
		return s, filterError(stderr, cmd, err)
	}
	for _, f := range filters {
		rf, err := replay.ParseFilter(f)
		if err != nil {
			return s, filterError(stderr, cmd, err)
		}
		s.filters = append(s.filters, rf)
	}
	if limit < 0 {
		return s, usageError(stderr, cmd, fmt.Errorf("--limit must not be negative"))
	}
	s.names = propertyNames(s.filters)
	return s, ExitOK
}

func (s selection) empty() bool { return len(s.filters) == 0 && len(s.ids) == 0 && s.limit == 0 }

// words is the selection as the history and the messages say it: "3 listed ids,
// reason=fraud, first 10".
func (s selection) words() string {
	var parts []string
	if len(s.ids) > 0 {
		parts = append(parts, fmt.Sprintf("%d listed ids", len(s.ids)))
	}
	if !s.filter.Empty() {
		parts = append(parts, s.filter.String())
	}
	if s.limit > 0 {
		parts = append(parts, fmt.Sprintf("first %d", s.limit))
	}
	if len(parts) == 0 {
		return "everything"
	}
	return strings.Join(parts, ", ")
}

// names reports whether the listed id sel names the letter at p, as the engine decides it:
// ledger:entry names every letter of the entry, a batch index one of them.
func names(sel client.MessageID, p triage.Position) bool {
	return sel.Ledger == p.Ledger && sel.Entry == p.Entry && (sel.BatchIndex < 0 || sel.BatchIndex == max(p.Batch, 0))
}

// previewLetter is one letter the action will take.
type previewLetter struct {
	pos    triage.Position
	key    string
	reason string
}

// preview is what the action will take, read without consuming.
type preview struct {
	letters []previewLetter
	until   client.MessageID   // the last message the action takes
	missing []client.MessageID // listed ids the preview did not find
	// batches are the selected letters' batches, in read order: how many letters of each the
	// subscription has not acknowledged, and how many of those are selected.
	batches []batchShare
	// approx says why the preview may count letters the subscription acknowledged already.
	approx string
	// cut says the read stopped at the limit, before the last letter the action could take.
	cut bool
}

// batchShare is one batch (an entry of several letters) the selection takes letters of.
type batchShare struct {
	entry    triage.Entry
	letters  int64 // not acknowledged
	selected int64
}

// errPreviewDone ends a preview's read once the limit is reached and its last batch is read.
var errPreviewDone = errors.New("preview done")

// makePreview reads t's subscription's letters up to until (nil: the DLQ's last message now)
// and selects as the run will.
func makePreview(ctx context.Context, t *dlqops.Target, s selection, until *client.MessageID, stderr io.Writer) (*preview, error) {
	p := &preview{}
	seen := make([]bool, len(s.ids))
	var last *batchShare // the batch of the letter read last
	var decoder *client.PayloadDecoder
	if s.filter.UsesDecode() {
		decoder = t.Client.NewPayloadDecoder()
	}
	visit := func(m *client.Message, l *deadletter.Letter, _ bool) error {
		pos := triage.PositionOf(m.ID)
		e := triage.Entry{Ledger: pos.Ledger, Entry: pos.Entry}
		full := s.limit > 0 && int64(len(p.letters)) >= s.limit
		if last == nil || last.entry != e {
			if full {
				return errPreviewDone // the last selected letter's batch is read whole
			}
			p.batches = append(p.batches, batchShare{entry: e})
			last = &p.batches[len(p.batches)-1]
		}
		last.letters++
		if full {
			return nil
		}
		if len(s.ids) > 0 {
			i := slices.IndexFunc(s.ids, func(id client.MessageID) bool { return names(id, pos) })
			if i < 0 {
				return nil
			}
			seen[i] = true
		}
		if s.filter != nil {
			subject := expr.FromClient(m)
			if decoder != nil {
				subject.Decode = func() error { return decoder.DecodeLetter(ctx, m) }
			}
			ok, err := s.filter.Eval(&subject, l)
			if err != nil {
				// As the run will: a letter whose selection cannot be told is not guessed at.
				return fmt.Errorf("letter %s: %w", pos, err)
			}
			if !ok {
				return nil
			}
		}
		last.selected++
		p.letters = append(p.letters, previewLetter{pos: pos, key: m.Key, reason: l.Reason})
		return nil
	}
	o := triage.ScanOptions{Topic: t.Topic, Subscription: t.Sub, Admin: t.Admin, NoIndex: true, Names: s.names,
		Progress: scanProgress(stderr), Visit: visit}
	if until != nil {
		o.Until = map[int32]client.MessageID{until.Partition: *until}
	}
	res, err := triage.Scan(ctx, t.Client, o)
	if err != nil && !errors.Is(err, errPreviewDone) {
		return nil, err
	}
	// A read the limit ended early did not see every letter's property names.
	p.cut = errors.Is(err, errPreviewDone)
	p.approx = res.Approx
	if until != nil {
		p.until = *until
	} else {
		p.until = client.MessageID{Ledger: -1, Entry: -1, Partition: -1, BatchIndex: -1}
		for _, id := range res.Until { // one, on the non-partitioned topic a DLQ is
			p.until = id
		}
	}
	p.batches = slices.DeleteFunc(p.batches, func(b batchShare) bool { return b.selected == 0 })
	for i, id := range s.ids {
		if !seen[i] {
			p.missing = append(p.missing, id)
		}
	}
	return p, nil
}

// split are the batches the selection takes some letters of, not all.
func (p *preview) split() []batchShare {
	var out []batchShare
	for _, b := range p.batches {
		if b.letters > 1 && b.selected < b.letters {
			out = append(out, b)
		}
	}
	return out
}

// notes writes what the preview could not take: listed ids it did not find, and why its count
// may be off.
func (p *preview) notes(cmd, sub string, stderr io.Writer) {
	for _, id := range p.missing {
		fmt.Fprintf(stderr, "%s: %s: no letter of %s up to %s (acknowledged already, gone, or never there)\n",
			cmd, positionOf(id), termtext.Line(sub), positionOf(p.until))
	}
	if p.approx != "" {
		fmt.Fprintf(stderr, "%s: ≈ %s\n", cmd, p.approx)
	}
}
