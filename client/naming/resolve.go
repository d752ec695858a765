package naming

import (
	"fmt"
	"slices"
	"strings"
)

// How a topic name typed by a person (a command's argument, the TUI's command line) finds the
// topic it means among those that exist. One rule for the command line and the TUI, so that
// "orders-billing-DLQ" is the same topic on both: a clients' rule would read it as
// public/default's, wherever the DLQ really is.

// NameError says a name given by hand matched no topic, or several.
type NameError struct {
	Name       string
	Candidates []string // full names: those that match (Ambiguous), or near ones
	Ambiguous  bool
}

func (e *NameError) Error() string {
	short := make([]string, 0, len(e.Candidates))
	for _, c := range e.Candidates {
		short = append(short, displayName(c))
	}
	switch {
	case e.Ambiguous:
		return fmt.Sprintf("%q names %d topics: %s", e.Name, len(e.Candidates), strings.Join(short, ", "))
	case len(short) > 0:
		return fmt.Sprintf("topic %q not found; did you mean %s?", e.Name, strings.Join(short, ", "))
	}
	return fmt.Sprintf("topic %q not found", e.Name)
}

// displayName is a full name without persistent://, as the error lists it.
func displayName(full string) string {
	t, err := ParseTopic(full)
	if err != nil || !t.Persistent {
		return full
	}
	return t.NamespaceName() + "/" + t.Local
}

// Qualified reports whether name says its namespace (domain://tenant/ns/x or tenant/ns/x):
// Resolve then needs only that namespace's topics.
func Qualified(name string) bool {
	name = strings.TrimSpace(name)
	return strings.Contains(name, "://") || strings.Count(name, "/") == 2
}

// Resolve finds the topic name means among existing, the full names of the topics that exist
// (a partitioned topic by its own name, partitions by theirs; nothing is created to find out):
// a qualified name (domain://tenant/ns/x, tenant/ns/x) when it exists; otherwise the one topic
// whose full name ends with /name, whatever its tenant and namespace ("orders-billing-DLQ",
// or "demo/orders-billing-DLQ"). A *NameError says when none matches (with near names) or
// several do (with all of them).
func Resolve(name string, existing []string) (string, error) {
	name = strings.TrimSpace(name)
	if Qualified(name) {
		t, err := ParseTopic(name)
		if err != nil {
			return "", &NameError{Name: name}
		}
		if full := t.String(); slices.Contains(existing, full) {
			return full, nil
		}
		return "", &NameError{Name: name, Candidates: near(existing, t.Local)}
	}
	var match []string
	for _, n := range existing {
		if strings.HasSuffix(n, "/"+name) && !slices.Contains(match, n) {
			match = append(match, n)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return "", &NameError{Name: name, Candidates: near(existing, name)}
	}
	slices.Sort(match)
	return "", &NameError{Name: name, Candidates: match, Ambiguous: true}
}

// near are up to five names whose local part holds what was typed, its letters in order
// ("ordrs" is near "orders"), ignoring case.
func near(names []string, typed string) []string {
	var out []string
	t := strings.ToLower(typed)
	if i := strings.LastIndex(t, "/"); i >= 0 {
		t = t[i+1:]
	}
	local := func(n string) string { return n[strings.LastIndex(n, "/")+1:] }
	for _, n := range names {
		if subsequence(t, strings.ToLower(local(n))) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	// The closest in length first: "ordrs" means orders more likely than orders-billing-DLQ.
	slices.SortStableFunc(out, func(x, y string) int {
		dx, dy := len(local(x))-len(t), len(local(y))-len(t)
		if dx != dy {
			return dx - dy
		}
		return strings.Compare(x, y)
	})
	if len(out) > 5 {
		out = out[:5]
	}
	return out
}

// subsequence reports whether the letters of a appear in b in order.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a) && a != ""
}
