package data

import (
	"context"

	"github.com/letterbox-dev/letterbox/client/dlqops"
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

// NameError says a name given by hand matched no topic, or several (client/naming's).
type NameError = naming.NameError

// Resolve finds the topic a name given by hand means, among the topics that exist (nothing is
// created to find out), by the command line's rule (client/dlqops.ResolveWith). A
// *NameError says when none or several match.
func Resolve(ctx context.Context, s Source, name string) (string, error) {
	return dlqops.ResolveWith(ctx, func(ctx context.Context, ns string) ([]string, error) {
		rows, err := s.Topics(ctx, ns)
		names := make([]string, 0, len(rows))
		for _, r := range rows {
			names = append(names, r.Name)
		}
		return names, err
	}, name)
}
