package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// The preview of an action on selected letters: a scan of the DLQ with the filter, without
// consuming (triage.Scan), restricted as the engine will restrict the run — to the listed ids,
// to letters the subscription has not acknowledged, to the first --limit — so that what the
// question counts is what the action takes. Its Until, the DLQ's last message when the
// preview was made, bounds the run: what dies while the question waits is left.

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

// engine is the selection as the replay engine takes it.
func (s selection) engine() replay.Selection {
	return replay.Selection{IDs: s.ids, Filters: s.filters, Limit: s.limit}
}

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
	until   client.MessageID // the last message the action takes
	// acked counts retained letters the filter selects that the subscription acknowledged
	// already; cursorKnown is false when the admin API did not say (acked is then 0).
	acked       int64
	cursorKnown bool
	missing     []client.MessageID // listed ids the preview did not find
}

// makePreview scans t's DLQ up to until (nil: its last message now) and restricts what the
// filter selects as the run will.
func makePreview(ctx context.Context, t *target, s selection, until *client.MessageID, stderr io.Writer) (*preview, error) {
	var found []previewLetter
	res, err := triage.Scan(ctx, t.cl, triage.ScanOptions{Topic: t.topic, Filter: s.filter, NoIndex: true, Admin: t.ad, Names: s.names,
		Progress: scanProgress(stderr),
		Visit: func(m *client.Message, l *deadletter.Letter) error {
			found = append(found, previewLetter{pos: triage.PositionOf(m.ID), key: m.Key, reason: l.Reason})
			return nil
		}})
	if err != nil {
		return nil, err
	}
	p := &preview{}
	if until != nil {
		p.until = *until
	} else {
		p.until = client.MessageID{Ledger: -1, Entry: -1, Partition: -1, BatchIndex: -1}
		for _, id := range res.Until { // one, on the non-partitioned topic a DLQ is
			p.until = id
		}
	}
	cur := readCursor(ctx, t.ad, t.topic, t.sub)
	p.cursorKnown = cur.known
	seen := make([]bool, len(s.ids))
	for _, l := range found {
		if after(l.pos, p.until) {
			break
		}
		if len(s.ids) > 0 {
			i := slices.IndexFunc(s.ids, func(id client.MessageID) bool { return names(id, l.pos) })
			if i < 0 {
				continue
			}
			seen[i] = true
		}
		if cur.acked(l.pos) {
			p.acked++
			continue
		}
		if s.limit > 0 && int64(len(p.letters)) >= s.limit {
			continue
		}
		p.letters = append(p.letters, l)
	}
	for i, id := range s.ids {
		if !seen[i] {
			p.missing = append(p.missing, id)
		}
	}
	return p, nil
}

// after reports whether p comes after until, the last message an action takes.
func after(p triage.Position, until client.MessageID) bool {
	switch {
	case p.Ledger != until.Ledger:
		return p.Ledger > until.Ledger
	case p.Entry != until.Entry:
		return p.Entry > until.Entry
	}
	return until.BatchIndex >= 0 && p.Batch > until.BatchIndex
}

// notes writes what the preview could not take: listed ids it did not find, and letters
// the subscription acknowledged already.
func (p *preview) notes(cmd, sub string, stderr io.Writer) {
	for _, id := range p.missing {
		fmt.Fprintf(stderr, "%s: %s: no such letter up to %s (acknowledged and gone, or never there)\n", cmd, positionOf(id), positionOf(p.until))
	}
	if p.acked > 0 {
		fmt.Fprintf(stderr, "%s: %d selected letters are retained but acknowledged on %s already: left alone\n", cmd, p.acked, termtext.Line(sub))
	}
	if !p.cursorKnown {
		fmt.Fprintf(stderr, "%s: the admin API does not show %s's cursor: the count may include letters it acknowledged already\n", cmd, termtext.Line(sub))
	}
}
