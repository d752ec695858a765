package broker

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client/names"
)

// topicName is a parsed, fully qualified topic name.
type topicName struct {
	Persistent bool
	Tenant     string
	Namespace  string
	Local      string // includes any -partition-N suffix
	// Partition is N for a name ending in -partition-N, else −1.
	Partition int
}

var nsPartRE = regexp.MustCompile(`^[-=:.\w]+$`)

const partitionSuffix = "-partition-"

// parseTopicName accepts the forms the official clients send: a full
// "persistent://tenant/ns/local" (or non-persistent://), "tenant/ns/local" and the bare "local"
// (both in public/default). Four-segment V1 names with a cluster are refused.
func parseTopicName(s string) (topicName, error) {
	t := topicName{Persistent: true, Partition: -1}
	rest := s
	switch {
	case strings.HasPrefix(s, "persistent://"):
		rest = strings.TrimPrefix(s, "persistent://")
	case strings.HasPrefix(s, "non-persistent://"):
		t.Persistent = false
		rest = strings.TrimPrefix(s, "non-persistent://")
	case strings.Contains(s, "://"):
		return t, fmt.Errorf("invalid topic domain in %q", s)
	default:
		switch strings.Count(s, "/") {
		case 0:
			rest = "public/default/" + s
		case 2:
		default:
			return t, fmt.Errorf("invalid short topic name %q: want <tenant>/<namespace>/<topic> or <topic>", s)
		}
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return t, fmt.Errorf("invalid topic name %q: want <domain>://<tenant>/<namespace>/<topic>", s)
	}
	t.Tenant, t.Namespace, t.Local = parts[0], parts[1], parts[2]
	if !nsPartRE.MatchString(t.Tenant) || !nsPartRE.MatchString(t.Namespace) {
		return t, fmt.Errorf("invalid tenant or namespace in topic name %q", s)
	}
	if t.Local == "" || strings.Contains(t.Local, "/") {
		return t, fmt.Errorf("invalid local name in topic name %q", s)
	}
	t.Partition = names.PartitionIndex(t.Local)
	return t, nil
}

func (t topicName) domain() string {
	if t.Persistent {
		return "persistent"
	}
	return "non-persistent"
}

// String is the fully qualified name.
func (t topicName) String() string {
	return t.domain() + "://" + t.Tenant + "/" + t.Namespace + "/" + t.Local
}

// namespace is "tenant/ns".
func (t topicName) namespace() string { return t.Tenant + "/" + t.Namespace }

// base is the partitioned topic a partition belongs to (itself when not a partition).
func (t topicName) base() topicName {
	if t.Partition < 0 {
		return t
	}
	b := t
	b.Local = t.Local[:strings.LastIndex(t.Local, partitionSuffix)]
	b.Partition = -1
	return b
}

// partition returns the name of partition i of t.
func (t topicName) partition(i int) topicName {
	p := t
	p.Local = t.Local + partitionSuffix + strconv.Itoa(i)
	p.Partition = i
	return p
}

// isDLQOrRetryName reports the upstream name rule (3.0.5+): such topics are always
// auto-created non-partitioned.
func (t topicName) isDLQOrRetryName() bool {
	l := t.base().Local
	return strings.HasSuffix(l, "-DLQ") || strings.HasSuffix(l, "-RETRY")
}
