package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
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

// Filter is one condition on a dead letter, parsed by ParseFilter.
type Filter struct {
	expr  string
	match func(m *client.Message) bool
}

// String is the expression the filter was parsed from.
func (f Filter) String() string { return f.expr }

// Match reports whether m satisfies the filter.
func (f Filter) Match(m *client.Message) bool { return f.match(m) }

// ParseFilter parses one filter expression:
//
//	key=VALUE            the message key equals VALUE
//	property.NAME=VALUE  property NAME equals VALUE
//	payload~REGEX        the payload matches the regular expression
//	json.PATH=VALUE      the payload is JSON and the value at the dotted PATH (object keys,
//	                     array indexes) equals VALUE (strings unquoted, other values as JSON)
//	published>=RFC3339   published at or after the time
//	published<RFC3339    published before the time
func ParseFilter(expr string) (Filter, error) {
	f := Filter{expr: expr}
	bad := func(format string, a ...any) (Filter, error) {
		return Filter{}, fmt.Errorf("replay: filter %q: %s", expr, fmt.Sprintf(format, a...))
	}
	switch {
	case strings.HasPrefix(expr, "published>="), strings.HasPrefix(expr, "published<"):
		before := !strings.HasPrefix(expr, "published>=")
		v := strings.TrimPrefix(strings.TrimPrefix(expr, "published>="), "published<")
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return bad("want an RFC 3339 time such as 2025-01-02T15:04:05Z")
		}
		f.match = func(m *client.Message) bool {
			if before {
				return m.PublishTime.Before(t)
			}
			return !m.PublishTime.Before(t)
		}
		return f, nil
	case strings.HasPrefix(expr, "payload~"):
		re, err := regexp.Compile(strings.TrimPrefix(expr, "payload~"))
		if err != nil {
			return bad("%v", err)
		}
		f.match = func(m *client.Message) bool { return re.Match(m.Payload) }
		return f, nil
	}
	name, value, ok := strings.Cut(expr, "=")
	if !ok {
		return bad("want key=VALUE, property.NAME=VALUE, payload~REGEX, json.PATH=VALUE, published>=TIME or published<TIME")
	}
	switch {
	case name == "key":
		f.match = func(m *client.Message) bool { return m.Key == value }
	case strings.HasPrefix(name, "property.") && len(name) > len("property."):
		prop := strings.TrimPrefix(name, "property.")
		f.match = func(m *client.Message) bool {
			v, ok := m.Properties[prop]
			return ok && v == value
		}
	case strings.HasPrefix(name, "json.") && len(name) > len("json."):
		path := strings.Split(strings.TrimPrefix(name, "json."), ".")
		f.match = func(m *client.Message) bool {
			v, ok := jsonAt(m.Payload, path)
			return ok && v == value
		}
	default:
		return bad("unknown field %q", name)
	}
	return f, nil
}

// jsonAt returns the value at path in the JSON document doc: a string as is, anything else
// as compact JSON.
func jsonAt(doc []byte, path []string) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return "", false
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// ParseIDs parses a comma-separated list of message ids (ledger:entry or
// ledger:entry:partition:batch).
func ParseIDs(list string) ([]client.MessageID, error) {
	var out []client.MessageID
	for s := range strings.SplitSeq(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		id, err := client.ParseMessageID(s)
		if err != nil {
			return nil, fmt.Errorf("replay: --ids: %w", err)
		}
		out = append(out, id)
	}
	return out, nil
}

// reason says why m is not selected, or "" when it is.
func (s *Selection) reason(m *client.Message) string {
	if len(s.IDs) > 0 && !slices.ContainsFunc(s.IDs, func(id client.MessageID) bool { return idNames(id, m.ID) }) {
		return "not selected: id not listed"
	}
	for _, f := range s.Filters {
		if !f.Match(m) {
			return "not selected: " + f.expr
		}
	}
	return ""
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
		fs[i] = f.expr
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
