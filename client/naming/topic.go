// Package naming is what a Pulsar name means, as pure functions over strings: topic names
// (domain, tenant, namespace, local name, partition; the short forms the clients accept:
// ParseTopic, ParseNamespace) and how a short name resolves (Resolve), the names the clients give
// dead-letter and retry topics and the -DLQ and -RETRY rule (DLQName, RetryName, LetterKind,
// FromName), and PIP-263's purpose property with the purpose an auto-created topic records
// (AutoCreatePurpose). It follows upstream's TopicName and NamespaceName, which the official
// clients and brokers share. It imports nothing of letterbox, so that the broker, the client,
// the admin client and the TUI read names by one rule. What a topic is for beyond its name (its
// purpose property, its newest message) is client/deadletter's Classify, which reads the name
// through this package.
package naming

import (
	"errors"
	"strconv"
	"strings"
)

// The domains of a topic name.
const (
	Persistent    = "persistent"
	NonPersistent = "non-persistent"
)

// The namespace a short topic name ("x") is in.
const (
	DefaultTenant    = "public"
	DefaultNamespace = "default"
)

// PartitionSuffix joins a partitioned topic's name and a partition's index.
const PartitionSuffix = "-partition-"

// ErrInvalid is what every parse error is (errors.Is).
var ErrInvalid = errors.New("invalid name")

// Error is a name that is not valid: what kind of name (topic, namespace), the name as given,
// and why.
type Error struct {
	Kind, Name, Why string
}

func (e *Error) Error() string {
	return "invalid " + e.Kind + " name " + strconv.Quote(e.Name) + ": " + e.Why
}

// Is makes every *Error an ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

func invalidTopic(name, why string) error { return &Error{Kind: "topic", Name: name, Why: why} }

// Topic is a parsed topic name.
type Topic struct {
	Persistent bool
	Tenant     string
	// Cluster is the cluster of a V1 name (domain://tenant/cluster/namespace/local), "" for the
	// V2 names everything letterbox creates uses.
	Cluster string
	// Namespace is the namespace's own name, without the tenant.
	Namespace string
	// Local is the topic's own name, a partition's -partition-N suffix included.
	Local string
	// Partition is N for a partition's name (Local ends in -partition-N), else −1.
	Partition int
}

// ValidNamePart reports whether s may be a tenant, cluster or namespace name: upstream's rule
// (NamedEntity), [-=:.\w]+ with \w the ASCII letters, digits and '_'. A loop, not a regular
// expression: every topic name parsed checks two, and the TUI parses a cluster's 100,000 names
// each time it lists them, where the expression was the larger part of the parsing.
func ValidNamePart(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '_', c == '-', c == '=', c == ':', c == '.':
		default:
			return false
		}
	}
	return true
}

// ParseTopic reads a topic name as upstream's TopicName does: a full name
// (persistent://tenant/ns/local, non-persistent://…, or the V1 domain://tenant/cluster/ns/local)
// or the short forms "tenant/ns/local" and "local" (in public/default, persistent). The tenant,
// cluster and namespace must be valid name parts and the local name non-empty.
func ParseTopic(s string) (Topic, error) {
	t := Topic{Partition: -1}
	full := s
	if !strings.Contains(s, "://") {
		switch strings.Count(s, "/") {
		case 0:
			full = Persistent + "://" + DefaultTenant + "/" + DefaultNamespace + "/" + s
		case 2:
			full = Persistent + "://" + s
		default:
			return t, invalidTopic(s, "a short name is <tenant>/<namespace>/<topic> or <topic>")
		}
	}
	domain, rest, _ := strings.Cut(full, "://")
	switch domain {
	case Persistent:
		t.Persistent = true
	case NonPersistent:
	default:
		return t, invalidTopic(s, "unknown domain "+strconv.Quote(domain))
	}
	parts := strings.SplitN(rest, "/", 4)
	switch len(parts) {
	case 3:
		t.Tenant, t.Namespace, t.Local = parts[0], parts[1], parts[2]
	case 4:
		t.Tenant, t.Cluster, t.Namespace, t.Local = parts[0], parts[1], parts[2], parts[3]
		if !ValidNamePart(t.Cluster) {
			return t, invalidTopic(s, "the cluster is no valid name")
		}
	default:
		return t, invalidTopic(s, "want <domain>://<tenant>/<namespace>/<topic>")
	}
	if !ValidNamePart(t.Tenant) || !ValidNamePart(t.Namespace) {
		return t, invalidTopic(s, "the tenant or namespace is no valid name ([-=:.\\w])")
	}
	if t.Local == "" {
		return t, invalidTopic(s, "empty local name")
	}
	t.Partition = PartitionIndex(t.Local)
	return t, nil
}

// V2 reports a name without a cluster.
func (t Topic) V2() bool { return t.Cluster == "" }

// Domain is "persistent" or "non-persistent".
func (t Topic) Domain() string {
	if t.Persistent {
		return Persistent
	}
	return NonPersistent
}

// NamespaceName is "tenant/namespace" ("tenant/cluster/namespace" for a V1 name).
func (t Topic) NamespaceName() string {
	if t.Cluster != "" {
		return t.Tenant + "/" + t.Cluster + "/" + t.Namespace
	}
	return t.Tenant + "/" + t.Namespace
}

// InNamespace reports NamespaceName() == ns without building the name: listings of a namespace
// ask it of every topic a broker holds.
func (t Topic) InNamespace(ns string) bool {
	rest, ok := cutSegment(ns, t.Tenant)
	if ok && t.Cluster != "" {
		rest, ok = cutSegment(rest, t.Cluster)
	}
	return ok && rest == t.Namespace
}

// cutSegment is s after its first path segment when that segment is seg.
func cutSegment(s, seg string) (string, bool) {
	rest, ok := strings.CutPrefix(s, seg)
	if !ok || !strings.HasPrefix(rest, "/") {
		return "", false
	}
	return rest[1:], true
}

// String is the full name.
func (t Topic) String() string { return t.Domain() + "://" + t.NamespaceName() + "/" + t.Local }

// Base is the partitioned topic a partition belongs to; t itself when it is no partition.
func (t Topic) Base() Topic {
	if t.Partition < 0 {
		return t
	}
	b := t
	b.Local = BaseName(t.Local)
	b.Partition = -1
	return b
}

// PartitionTopic is partition i of t.
func (t Topic) PartitionTopic(i int) Topic {
	p := t
	p.Local = PartitionName(t.Local, i)
	p.Partition = i
	return p
}

// PartitionIndex is upstream's reading of a partition's index: N for a name ending in
// -partition-N, where N is a non-negative integer written without a sign or leading zeros;
// −1 for any other name (x-partition-01 and x-partition-a are topics of their own).
func PartitionIndex(name string) int {
	i := strings.LastIndex(name, PartitionSuffix)
	if i < 0 {
		return -1
	}
	idx := name[i+len(PartitionSuffix):]
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 || strconv.Itoa(n) != idx {
		return -1
	}
	return n
}

// BaseName is name (full or local) without a partition's -partition-N suffix.
func BaseName(name string) string {
	if PartitionIndex(name) < 0 {
		return name
	}
	return name[:strings.LastIndex(name, PartitionSuffix)]
}

// PartitionName is the name of partition i of the topic named base (full or local).
func PartitionName(base string, i int) string { return base + PartitionSuffix + strconv.Itoa(i) }

// ParseNamespace reads "tenant/namespace" as upstream's NamespaceName does for V2 names.
func ParseNamespace(ns string) (tenant, local string, err error) {
	tenant, local, ok := strings.Cut(ns, "/")
	if !ok || !ValidNamePart(tenant) || !ValidNamePart(local) {
		return "", "", &Error{Kind: "namespace", Name: ns, Why: "want <tenant>/<namespace>, each [-=:.\\w]"}
	}
	return tenant, local, nil
}
