package client

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client/names"
)

// topicName is a parsed, fully qualified topic name.
type topicName struct {
	Domain    string // persistent or non-persistent
	Namespace string // tenant/ns (or tenant/cluster/ns for V1 names)
	Local     string // local name, partition suffix included
	Partition int    // -1 unless the name ends in -partition-N
}

func (t topicName) String() string { return t.Domain + "://" + t.Namespace + "/" + t.Local }

// Base is the name without a -partition-N suffix.
func (t topicName) Base() string {
	if t.Partition < 0 {
		return t.String()
	}
	return strings.TrimSuffix(t.String(), "-partition-"+strconv.Itoa(t.Partition))
}

// parseTopic accepts the short forms upstream's clients accept: "x", "tenant/ns/x", and
// fully qualified "domain://tenant/ns/x" (or a V1 four-segment name).
func parseTopic(name string) (topicName, error) {
	if name == "" {
		return topicName{}, fmt.Errorf("%w: empty", ErrInvalidTopic)
	}
	full := name
	if !strings.Contains(name, "://") {
		switch parts := strings.Split(name, "/"); len(parts) {
		case 1:
			full = "persistent://public/default/" + name
		case 3, 4:
			full = "persistent://" + name
		default:
			return topicName{}, fmt.Errorf("%w: %q: use <tenant>/<namespace>/<topic> or <topic>", ErrInvalidTopic, name)
		}
	}
	domain, rest, _ := strings.Cut(full, "://")
	if domain != "persistent" && domain != "non-persistent" {
		return topicName{}, fmt.Errorf("%w: %q: unknown domain %q", ErrInvalidTopic, name, domain)
	}
	parts := strings.SplitN(rest, "/", 4)
	var t topicName
	switch len(parts) {
	case 3:
		t = topicName{Domain: domain, Namespace: parts[0] + "/" + parts[1], Local: parts[2]}
	case 4:
		t = topicName{Domain: domain, Namespace: parts[0] + "/" + parts[1] + "/" + parts[2], Local: parts[3]}
	default:
		return topicName{}, fmt.Errorf("%w: %q", ErrInvalidTopic, name)
	}
	for _, p := range parts {
		if p == "" {
			return topicName{}, fmt.Errorf("%w: %q: empty segment", ErrInvalidTopic, name)
		}
	}
	t.Partition = names.PartitionIndex(t.Local)
	return t, nil
}

// partitionName is the name of partition i of a partitioned topic.
func partitionName(base string, i int) string { return base + "-partition-" + strconv.Itoa(i) }
