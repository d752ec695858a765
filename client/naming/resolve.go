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
		short = append(short, ShortName(c, ""))
	}
	switch {
	case e.Ambiguous:
		return fmt.Sprintf("%q names %d topics: %s", e.Name, len(e.Candidates), strings.Join(short, ", "))
	case len(short) > 0:
		return fmt.Sprintf("topic %q not found; did you mean %s?", e.Name, strings.Join(short, ", "))
	}
	return fmt.Sprintf("topic %q not found", e.Name)
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

// near are up to five names that come close to what was typed: whose local part is within two
// edits of it ("ordres" is orders), or holds its letters in order ("ordrs" is near orders and
// orders-billing-DLQ), ignoring case. The fewest edits first, then the closest in length:
// "ordrs" means orders more likely than orders-billing-DLQ.
func near(names []string, typed string) []string {
	t := strings.ToLower(typed)
	if i := strings.LastIndex(t, "/"); i >= 0 {
		t = t[i+1:]
	}
	if t == "" {
		return nil
	}
	local := func(n string) string { return strings.ToLower(n[strings.LastIndex(n, "/")+1:]) }
	edits := map[string]int{}
	var out []string
	for _, n := range names {
		if slices.Contains(out, n) {
			continue
		}
		d := Distance(t, local(n))
		if d <= 2 || subsequence(t, local(n)) {
			out = append(out, n)
			edits[n] = min(d, 3) // a subsequence farther than two edits ranks after every near one
		}
	}
	slices.SortStableFunc(out, func(x, y string) int {
		if edits[x] != edits[y] {
			return edits[x] - edits[y]
		}
		dx, dy := abs(len(local(x))-len(t)), abs(len(local(y))-len(t))
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

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Distance is how many single-character edits turn a into b: inserting, deleting or replacing
// a character, or swapping two neighbours (the optimal string alignment distance), so that a
// typo's distance to what was meant is small: "ordres" is 1 from "orders", "dql" 1 from "dlq".
func Distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j] is the distance between x[:i] and y[:j]; three rows are all it needs.
	prev2, prev, cur := make([]int, len(y)+1), make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
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
