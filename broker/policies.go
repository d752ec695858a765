package broker

import (
	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// The policies in effect on a topic or namespace, as the core and the background jobs read
// them: the stored policies put in layers (broker/policy resolves them).

// layers returns the policies that apply to name: its topic-level policies (a partition's are
// its partitioned topic's) and its namespace's, as stored (never changed in place: an update
// stores a new copy, so they may be read after the lock), over the broker's. It takes the admin
// lock, a leaf, so it is safe with topics.mu or a topic's mutex held.
func (b *Broker) layers(name naming.Topic) policy.Layers {
	a, unlock := b.adminLocked()
	defer unlock()
	l := policy.Layers{Namespace: a.policies[name.NamespaceName()], Defaults: &b.cfg.Defaults, Cluster: b.cfg.ClusterName}
	if len(a.topicPolicies) > 0 { // most brokers have none: no name to build on every SEND
		l.Topic = a.topicPolicies[name.Base().String()]
	}
	return l
}

// namespaceLayers returns the policies of namespace ns over the broker's.
func (b *Broker) namespaceLayers(ns string) policy.Layers {
	a, unlock := b.adminLocked()
	defer unlock()
	return policy.Layers{Namespace: a.policies[ns], Defaults: &b.cfg.Defaults, Cluster: b.cfg.ClusterName}
}

// CompactionThreshold is the effective compaction threshold of a topic, in bytes of backlog
// (0: no automatic compaction): its topic-level compactionThreshold, else its namespace's
// compaction_threshold, else the broker's brokerServiceCompactionThresholdInBytes. Compaction
// reads it; the admin API only stores and validates the policies.
func (b *Broker) CompactionThreshold(tname string) (int64, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return 0, err
	}
	return b.layers(name).CompactionThreshold(), nil
}

// maxTopicsRefusal says why ns may not hold n more topics (a partitioned topic counts its
// partitions), or "" (maxTopicsPerNamespace, the namespace's policy else the broker's; 0: no
// limit). Called with topics.mu held.
func (r *topicRegistry) maxTopicsRefusal(ns string, n int) string {
	b := r.b
	limit := b.namespaceLayers(ns).MaxTopics()
	if limit <= 0 {
		return ""
	}
	// As list counts them: partitions, open topics and stored ones not opened yet.
	seen := map[string]bool{}
	for full, parts := range r.partitioned {
		if name, err := parseTopicName(full); err == nil && name.InNamespace(ns) {
			for i := range parts {
				seen[name.PartitionTopic(i).String()] = true
			}
		}
	}
	for full := range r.byNS[ns] {
		seen[full] = true
	}
	if len(seen)+n > limit {
		return "Exceed maximum number of topics in namespace."
	}
	return ""
}

// autoTopicCreation is the auto topic creation policy for ns: the namespace override if set,
// else the broker's configuration. Safe with topics.mu or a topic's mutex held.
func (b *Broker) autoTopicCreation(ns string) (allow, partitioned bool, partitions int) {
	d := b.dynamic() // the configuration, dynamic overrides applied (dynamic_config.go)
	allow, partitioned, partitions = d.allowAutoTopicCreation, d.allowAutoTopicCreationType == "partitioned", d.defaultNumPartitions
	return b.namespaceLayers(ns).AutoTopicCreation(allow, partitioned, partitions)
}

// autoSubscriptionCreation is a topic's auto subscription creation policy: its topic-level
// override, else its namespace's, else the broker's (dynamic configuration). Safe with
// topics.mu or a topic's mutex held.
func (b *Broker) autoSubscriptionCreation(name naming.Topic) bool {
	return b.layers(name).AutoSubscriptionCreation(b.dynamic().allowAutoSubscriptionCreation) // dynamic_config.go
}

// autoTopicAllowed reports whether topics may be auto-created in ns.
func (b *Broker) autoTopicAllowed(ns string) bool {
	allow, _, _ := b.autoTopicCreation(ns)
	return allow
}
