package data

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/client/naming"
)

// TopicName is a parsed topic name (client/naming's).
type TopicName = naming.Topic

// ParseTopic reads a topic name by client/naming's rules (upstream's TopicName):
// "persistent://t/ns/x", "t/ns/x" or a bare "x" (public/default). A screen never refuses a
// name here: one that is no topic name (a typo, "ns/x", an unknown domain) is kept whole as the
// local name of a topic in public/default, so that whatever uses it fails on the cluster's
// answer (no such topic, invalid name) and ShortName shows it as typed.
func ParseTopic(s string) TopicName {
	t, err := naming.ParseTopic(s)
	if err != nil {
		return TopicName{Persistent: true, Tenant: naming.DefaultTenant, Namespace: naming.DefaultNamespace, Local: s, Partition: -1}
	}
	return t
}

// PartitionOf splits "x-partition-3" into ("x", 3); ok is false for other names.
func PartitionOf(name string) (parent string, index int, ok bool) {
	idx := naming.PartitionIndex(name)
	if idx < 0 {
		return "", 0, false
	}
	return naming.BaseName(name), idx, true
}

// ShortName drops "persistent://" and, when it is ns, the namespace: what a screen shows. A
// name that is no topic name is shown as it is.
func ShortName(full, ns string) string {
	t, err := naming.ParseTopic(full)
	switch {
	case err != nil:
		return full
	case ns != "" && t.NamespaceName() == ns && t.Persistent:
		return t.Local
	case t.Persistent:
		return t.NamespaceName() + "/" + t.Local
	}
	return t.String()
}

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

// Resolve finds the topic a name given by hand means, among the topics that exist (nothing is
// created to find out): a full name (domain://tenant/ns/x) or tenant/ns/x when it exists, else
// the one topic whose name ends with /name ("orders", or "demo/orders"). A *NameError says
// when none or several match.
func Resolve(ctx context.Context, s Source, name string) (string, error) {
	name = strings.TrimSpace(name)
	ns := ""
	if strings.Contains(name, "://") || strings.Count(name, "/") == 2 {
		ns = ParseTopic(name).NamespaceName()
	}
	rows, err := s.Topics(ctx, ns)
	if err != nil {
		if ns != "" && IsNotFound(err) {
			return "", &NameError{Name: name}
		}
		return "", err
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	if ns != "" {
		full := ParseTopic(name).String()
		if slices.Contains(names, full) {
			return full, nil
		}
		return "", &NameError{Name: name, Candidates: near(names, ParseTopic(name).Local)}
	}
	var match []string
	for _, n := range names {
		if strings.HasSuffix(n, "/"+name) {
			match = append(match, n)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return "", &NameError{Name: name, Candidates: near(names, name)}
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
	for _, n := range names {
		if subsequence(t, strings.ToLower(ParseTopic(n).Local)) {
			out = append(out, n)
		}
	}
	// The closest in length first: "ordrs" means orders more likely than orders-billing-DLQ.
	slices.SortStableFunc(out, func(x, y string) int {
		dx, dy := len(ParseTopic(x).Local)-len(t), len(ParseTopic(y).Local)-len(t)
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
