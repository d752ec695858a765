package data

import (
	"context"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// ParseTopic reads a topic name by client/naming's rules (upstream's TopicName):
// "persistent://t/ns/x", "t/ns/x" or a bare "x" (public/default). A screen never refuses a
// name here: one that is no topic name (a typo, "ns/x", an unknown domain) is kept whole as the
// local name of a topic in public/default, so that whatever uses it fails on the cluster's
// answer (no such topic, invalid name) and naming.ShortName shows it as typed.
func ParseTopic(s string) naming.Topic {
	t, err := naming.ParseTopic(s)
	if err != nil {
		return naming.Topic{Persistent: true, Tenant: naming.DefaultTenant, Namespace: naming.DefaultNamespace, Local: s, Partition: -1}
	}
	return t
}

// Resolve finds the topic a name given by hand means, among the topics that exist (nothing is
// created to find out), by the command line's rule (client/dlqops.ResolveWith). A
// *naming.NameError says when none or several match.
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
