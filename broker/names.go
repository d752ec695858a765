package broker

import (
	"fmt"

	"github.com/letterbox-dev/letterbox/client/naming"
)

// parseTopicName accepts the forms the official clients send: a full
// "persistent://tenant/ns/local" (or non-persistent://), "tenant/ns/local" and the bare "local"
// (both in public/default), by client/naming's rules. V1 names with a cluster
// (domain://tenant/cluster/ns/local), which upstream still reads, are refused: letterbox has no
// V1 namespaces.
func parseTopicName(s string) (naming.Topic, error) {
	t, err := naming.ParseTopic(s)
	if err != nil {
		return t, err
	}
	if !t.V2() {
		return t, fmt.Errorf("invalid topic name %q: V1 names (with a cluster) are not served", s)
	}
	return t, nil
}

// parseAdminTopic parses a fully qualified (or short) topic name, as the admin API takes it,
// failing with upstream's reason.
func parseAdminTopic(name string) (naming.Topic, error) {
	t, err := parseTopicName(name)
	if err != nil {
		return t, adminErr(ErrInvalidName, "Invalid topic name %s: %v", name, err)
	}
	return t, nil
}

// splitNamespace checks "tenant/ns", failing with upstream's reason.
func splitNamespace(ns string) (tenant, local string, err error) {
	tenant, local, err = naming.ParseNamespace(ns)
	if err != nil {
		return "", "", adminErr(ErrInvalidName, "Invalid namespace name %s", ns)
	}
	return tenant, local, nil
}
