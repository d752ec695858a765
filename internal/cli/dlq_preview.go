package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// The selection flags of an action, and what the command line says of the preview
// (client/dlqops's Target.Preview) of what the action will take.

// selection is the selection flags of an action, parsed.
type selection struct {
	filterText []string
	filter     *expr.Expr // for the preview
	filters    []dlqops.Filter
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
		rf, err := dlqops.ParseFilter(f)
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

// preview reads what the action on t will take, selected as s selects, up to until (nil: the
// DLQ's last message now).
func (s selection) preview(ctx context.Context, t *dlqops.Target, until *client.MessageID, stderr io.Writer) (*dlqops.Preview, error) {
	return t.Preview(ctx, dlqops.PreviewRequest{IDs: s.ids, Filter: s.filter, Limit: s.limit, Names: s.names, Until: until,
		Progress: scanProgress(stderr)})
}

// notes writes what the preview could not take: listed ids it did not find, and why its count
// may be off.
func previewNotes(p *dlqops.Preview, cmd, sub string, stderr io.Writer) {
	for _, id := range p.Missing {
		fmt.Fprintf(stderr, "%s: %s: no letter of %s up to %s (acknowledged already, gone, or never there)\n",
			cmd, positionOf(id), termtext.Line(sub), positionOf(p.Until))
	}
	if p.Approx != "" {
		fmt.Fprintf(stderr, "%s: ≈ %s\n", cmd, p.Approx)
	}
}
