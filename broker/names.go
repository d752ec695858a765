package broker

import (
	"fmt"
	"strings"

	"github.com/letterbox-dev/letterbox/client/naming"
)

// topicName is a parsed topic name, read by client/naming (upstream's TopicName rules); the
// methods are the broker's shorthand for what it asks of one.
type topicName struct{ naming.Topic }

// partitionSuffix joins a partitioned topic's name and a partition's index.
const partitionSuffix = naming.PartitionSuffix

// parseTopicName accepts the forms the official clients send: a full
// "persistent://tenant/ns/local" (or non-persistent://), "tenant/ns/local" and the bare "local"
// (both in public/default). V1 names with a cluster (domain://tenant/cluster/ns/local), which
// upstream still reads, are refused: letterbox has no V1 namespaces.
func parseTopicName(s string) (topicName, error) {
	t, err := naming.ParseTopic(s)
	if err != nil {
		return topicName{t}, err
	}
	if !t.V2() {
		return topicName{t}, fmt.Errorf("invalid topic name %q: V1 names (with a cluster) are not served", s)
	}
	return topicName{t}, nil
}

func (t topicName) domain() string { return t.Domain() }

// namespace is "tenant/ns".
func (t topicName) namespace() string { return t.NamespaceName() }

// base is the partitioned topic a partition belongs to (itself when not a partition).
func (t topicName) base() topicName { return topicName{t.Base()} }

// partition returns the name of partition i of t.
func (t topicName) partition(i int) topicName { return topicName{t.PartitionTopic(i)} }

// isDLQOrRetryName reports the upstream name rule (3.0.5+): such topics are always
// auto-created non-partitioned.
func (t topicName) isDLQOrRetryName() bool { return naming.IsLetterName(t.Local) }

// parseAdminTopic parses a fully qualified (or short) topic name, as the admin API takes it.
func parseAdminTopic(name string) (topicName, error) {
	t, err := parseTopicName(name)
	if err != nil {
		return t, adminErr(ErrInvalidName, "Invalid topic name %s: %v", name, err)
	}
	return t, nil
}

// validNamePart reports whether s is a valid tenant or namespace name.
func validNamePart(s string) bool { return naming.ValidNamePart(s) }

// splitNamespace checks "tenant/ns".
func splitNamespace(ns string) (tenant, local string, err error) {
	tenant, local, ok := strings.Cut(ns, "/")
	if !ok || !validNamePart(tenant) || !validNamePart(local) {
		return "", "", adminErr(ErrInvalidName, "Invalid namespace name %s", ns)
	}
	return tenant, local, nil
}
