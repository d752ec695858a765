package deadletter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/client/termtext"
)

// maxNamesListed bounds the property names a PropertyNames keeps for its listing; the names it
// watches are told exactly whatever their number.
const maxNamesListed = 1000

// PropertyNames tallies the property names of the letters a read goes through, for the warning
// a filter that names a property no letter has deserves: property.regoin=eu selects nothing,
// and the user should learn that it is the name that is wrong, not the value. The names it
// watches (an expression's, expr.Expr.Properties) are told exactly; the others are kept, up to
// a bound, for the listing. Not safe for concurrent use: one reader adds.
type PropertyNames struct {
	watched map[string]bool // name → seen
	seen    map[string]struct{}
	more    bool // names past maxNamesListed were not kept
}

// NewPropertyNames watches names; nil names give a nil *PropertyNames, whose methods do
// nothing, so that a read without a property in its filter pays nothing.
func NewPropertyNames(names []string) *PropertyNames {
	if len(names) == 0 {
		return nil
	}
	n := &PropertyNames{watched: map[string]bool{}, seen: map[string]struct{}{}}
	for _, name := range names {
		n.watched[name] = false
	}
	return n
}

// Add notes the names of one letter's properties.
func (n *PropertyNames) Add(props map[string]string) {
	if n == nil {
		return
	}
	for k := range props {
		if seen, ok := n.watched[k]; ok && !seen {
			n.watched[k] = true
		}
		if _, ok := n.seen[k]; !ok {
			if len(n.seen) < maxNamesListed {
				n.seen[k] = struct{}{}
			} else {
				n.more = true
			}
		}
	}
}

// Unseen are the watched names no letter carried, sorted.
func (n *PropertyNames) Unseen() []string {
	if n == nil {
		return nil
	}
	var out []string
	for name, seen := range n.watched {
		if !seen {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Warning words what Unseen found for a terminal, "" when every watched name was seen: "no
// letter has property regoin; properties seen: region, tenant". Names are letters' data:
// control characters are written visibly.
func (n *PropertyNames) Warning() string {
	unseen := n.Unseen()
	if len(unseen) == 0 {
		return ""
	}
	quote := func(names []string) string {
		out := make([]string, len(names))
		for i, s := range names {
			out[i] = termtext.Line(s)
		}
		return strings.Join(out, ", ")
	}
	what := "property"
	if len(unseen) > 1 {
		what = "properties"
	}
	seen := make([]string, 0, len(n.seen))
	for k := range n.seen {
		seen = append(seen, k)
	}
	slices.Sort(seen)
	const listed = 30
	switch {
	case len(seen) == 0:
		return fmt.Sprintf("no letter has %s %s; the letters read carry no properties", what, quote(unseen))
	case len(seen) > listed || n.more:
		rest := len(seen) - min(len(seen), listed)
		tail := fmt.Sprintf(", … (%d more", rest)
		if n.more {
			tail += " and others"
		}
		return fmt.Sprintf("no letter has %s %s; properties seen: %s%s)", what, quote(unseen), quote(seen[:min(len(seen), listed)]), tail)
	}
	return fmt.Sprintf("no letter has %s %s; properties seen: %s", what, quote(unseen), quote(seen))
}
