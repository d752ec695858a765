package replay

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/expr"
)

// Selection picks the dead letters a replay moves. The zero Selection moves all of them.
// Messages it does not pick stay in the DLQ, unacknowledged.
type Selection struct {
	// IDs, when set, restrict the replay to these messages: "ledger:entry" names every
	// message of the entry, "ledger:entry:partition:batch" one message of a batch.
	IDs []client.MessageID
	// Filters must all match (AND).
	Filters []Filter
	// Limit stops the replay after this many selected messages (0: no limit). On a resumed
	// run it counts what the interrupted run moved too.
	Limit int64
}

// Filter is a condition on a dead letter: an expression of client/expr, parsed by
// ParseFilter.
type Filter struct {
	e *expr.Expr
	// skipped is why a letter it does not select is skipped, made once: a run says it of
	// every such letter.
	skipped string
}

// String is the expression in canonical form.
func (f Filter) String() string { return f.e.String() }

// Match reports whether m surely satisfies the filter: without a schema decoder, a
// "payload decodes" the rest does not settle selects nothing (see expr.Expr.Eval).
func (f Filter) Match(m *client.Message) bool {
	ok, _ := f.eval(m, nil, nil)
	return ok
}

// eval is Match with the answer "cannot tell" as an error; decode is the decode verdict
// "payload decodes" asks for (nil: none at hand), letters what reads the letter fields it
// asks for (nil: deadletter.Read).
func (f Filter) eval(m *client.Message, decode func() error, letters *deadletter.Reader) (bool, error) {
	s := expr.FromClient(m)
	s.Decode, s.Letters = decode, letters
	return f.e.Eval(&s, nil)
}

// Properties are the property names f names (expr.Expr.Properties).
func (f Filter) Properties() []string { return f.e.Properties() }

// usesDecode reports whether f has a "payload decodes".
func (f Filter) usesDecode() bool { return f.e.UsesDecode() }

// ParseFilter parses a filter expression (the grammar of client/expr: key=, property.NAME=,
// payload is json, size>, … joined by and/or, negated by not). A syntax error is an
// *expr.SyntaxError naming the column.
func ParseFilter(s string) (Filter, error) {
	e, err := expr.Parse(s, time.Now())
	if err != nil {
		return Filter{}, fmt.Errorf("replay: filter %q: %w", s, err)
	}
	return Filter{e: e, skipped: "not selected: " + e.String()}, nil
}

// ParseIDs parses a comma-separated list of message ids (ledger:entry or
// ledger:entry:partition:batch). A list that names nothing — empty, blank, or with an empty
// item (",", "1:2,,1:3", a trailing comma) — is an error: a selection is never wider than
// what was written, and an empty list of ids must not read as "every letter".
func ParseIDs(list string) ([]client.MessageID, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("replay: --ids: no id in %q: name letters as ledger:entry, comma-separated", list)
	}
	var out []client.MessageID
	for i, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("replay: --ids: item %d of %q is empty", i+1, list)
		}
		id, err := client.ParseMessageID(s)
		if err != nil {
			return nil, fmt.Errorf("replay: --ids: %w", err)
		}
		out = append(out, id)
	}
	return out, nil
}

// reason says why m is not selected, or "" when it is; decode gives the decode verdict of
// "payload decodes" (nil: none at hand), letters reads the letter fields filters ask for. The
// error says why whether m is selected cannot be told.
func (s *Selection) reason(m *client.Message, decode func() error, letters *deadletter.Reader) (string, error) {
	if len(s.IDs) > 0 && !slices.ContainsFunc(s.IDs, func(id client.MessageID) bool { return idNames(id, m.ID) }) {
		return "not selected: id not listed", nil
	}
	for _, f := range s.Filters {
		ok, err := f.eval(m, decode, letters)
		if err != nil {
			return "", err
		}
		if !ok {
			if f.skipped == "" {
				return "not selected: " + f.String(), nil
			}
			return f.skipped, nil
		}
	}
	return "", nil
}

// usesDecode reports whether a filter of s has a "payload decodes".
func (s *Selection) usesDecode() bool {
	return slices.ContainsFunc(s.Filters, Filter.usesDecode)
}

// idNames reports whether the selected id sel names the message id got.
func idNames(sel, got client.MessageID) bool {
	if sel.Ledger != got.Ledger || sel.Entry != got.Entry {
		return false
	}
	return sel.BatchIndex < 0 || sel.BatchIndex == max(got.BatchIndex, 0)
}

// canonical is the selection as a stable string: two runs with the same canonical selection
// (and DLQ, subscription and destination) are the same replay.
func (s *Selection) canonical() string {
	ids := make([]string, len(s.IDs))
	for i, id := range s.IDs {
		ids[i] = fmt.Sprintf("%d:%d:%d", id.Ledger, id.Entry, id.BatchIndex)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	fs := make([]string, len(s.Filters))
	for i, f := range s.Filters {
		fs[i] = f.String()
	}
	slices.Sort(fs)
	fs = slices.Compact(fs)
	var b strings.Builder
	fmt.Fprintf(&b, "ids=%s", strings.Join(ids, ","))
	for _, f := range fs {
		fmt.Fprintf(&b, "\x00filter=%s", f)
	}
	fmt.Fprintf(&b, "\x00limit=%d", s.Limit)
	return b.String()
}
