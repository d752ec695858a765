package broker

import (
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/broker/policy"
)

// Unloading topics and namespaces on request (unload.go does the unloading).

// UnloadTopic unloads a topic, or every partition of a partitioned one.
func (b *Broker) UnloadTopic(tname string) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	ts, err := b.targets(name)
	if err != nil {
		return err
	}
	for _, t := range ts {
		b.unload(t)
	}
	return nil
}

// UnloadNamespace unloads every open topic of namespace ns ("tenant/ns"), or, when bundle is not
// "", those of that bundle of the namespace ("0x00000000_0x40000000").
func (b *Broker) UnloadNamespace(ns, bundle string) error {
	p, err := b.NamespacePolicies(ns)
	if err != nil {
		return err
	}
	if bundle != "" && !slices.Contains(policy.BundleRanges(p.Bundles), bundle) {
		return adminErr(ErrNotFound, "Namespace bundle %s/%s not found: its bundles are %s", ns, bundle,
			strings.Join(policy.BundleRanges(p.Bundles), ", "))
	}
	for _, t := range b.topics.all() {
		if t.name.InNamespace(ns) && (bundle == "" || policy.BundleOf(p.Bundles, t.full) == bundle) {
			b.unload(t)
		}
	}
	return nil
}
