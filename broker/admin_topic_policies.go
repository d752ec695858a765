package broker

import (
	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Topic-level policies, as upstream with topicLevelPoliciesEnabled=true (its default): a
// policy set on a topic overrides its namespace's, which overrides the broker's. A partitioned
// topic's policies apply to every partition; a partition has none of its own. They are stored
// in the metadata store (bucket topicPolicies, by topic name) where upstream keeps them in a
// system topic, and deleted with their topic.
//
// The policies kept are the ones this broker enforces: message TTL (ttl.go), retention
// (retention.go), max producers, consumers, consumers per subscription and subscriptions
// (limits.go), deduplication (dedup.go), backlog quotas (backlog_quota.go), automatic
// subscription creation (policies.go), the schema compatibility strategy (schema.go) and
// the compaction threshold (read by compaction). broker/web answers the others 405.

// policyTopic resolves the topic whose policies an admin call reads or edits: it must exist
// (a partitioned topic by its base name), and may not be a partition.
func (b *Broker) policyTopic(tname string) (naming.Topic, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return name, err
	}
	if name.Partition >= 0 {
		if _, ok := b.partitionCount(name.Base()); ok {
			return name, adminErr(ErrPreconditionFailed, "Not allowed to set/get topic policy for a partition")
		}
	}
	if err := b.checkTenant(name.NamespaceName()); err != nil {
		return name, err
	}
	if !b.topics.hasNamespace(name.NamespaceName()) {
		return name, adminErr(ErrNotFound, "Namespace does not exist")
	}
	if _, err := b.PartitionedMetadata(tname); err != nil {
		return name, adminErr(ErrNotFound, "Topic not found")
	}
	return name, nil
}

// TopicPolicies returns a copy of the policies set on a topic (none set: all nil).
func (b *Broker) TopicPolicies(tname string) (*adminapi.TopicPolicies, error) {
	name, err := b.policyTopic(tname)
	if err != nil {
		return nil, err
	}
	a, unlock := b.adminLocked()
	defer unlock()
	return policy.CloneTopic(a.topicPolicies[name.String()]), nil
}

// UpdateTopicPolicies applies fn to a copy of a topic's policies, validates and stores them.
func (b *Broker) UpdateTopicPolicies(tname string, fn func(*adminapi.TopicPolicies) error) error {
	name, err := b.policyTopic(tname)
	if err != nil {
		return err
	}
	a, unlock := b.adminLocked()
	defer unlock()
	tp := policy.CloneTopic(a.topicPolicies[name.String()])
	if err := fn(tp); err != nil {
		return err
	}
	if err := b.checkTopicPolicies(tp); err != nil {
		return err
	}
	var v any = tp
	if policy.EmptyTopic(tp) {
		v = nil
	}
	if err := b.persistAdmin(bucketTopicPolicies, name.String(), v); err != nil {
		return err
	}
	if v == nil {
		delete(a.topicPolicies, name.String())
		a.version.Add(1)
	} else {
		a.topicPolicies[name.String()] = tp
		a.version.Add(1)
	}
	return nil
}

// checkTopicPolicies validates topic-level policies with upstream's reasons.
func (b *Broker) checkTopicPolicies(tp *adminapi.TopicPolicies) error {
	for _, l := range []struct {
		v      *int
		reason string
	}{
		{tp.MessageTTLInSeconds, "Invalid value for message TTL"},
		{tp.MaxProducerPerTopic, "maxProducers must be 0 or more"},
		{tp.MaxConsumerPerTopic, "maxConsumers must be 0 or more"},
		{tp.MaxConsumersPerSubscription, "Invalid value for maxConsumersPerSubscription"},
		{tp.MaxSubscriptionsPerTopic, "maxSubscriptionsPerTopic must be 0 or more"},
		{tp.MaxUnackedMessagesOnConsumer, "maxUnackedNum must be 0 or more"},
		{tp.MaxUnackedMessagesOnSubscription, "maxUnackedNum must be 0 or more"},
		{tp.DeduplicationSnapshotIntervalSeconds, "interval must be 0 or more"},
	} {
		if l.v != nil && *l.v < 0 {
			return adminErr(ErrPreconditionFailed, "%s", l.reason)
		}
	}
	if tp.CompactionThreshold != nil && *tp.CompactionThreshold < 0 {
		return adminErr(ErrPreconditionFailed, "compactionThreshold must be 0 or more")
	}
	if s := tp.SchemaCompatibilityStrategy; s != nil && !validStrategy(*s) {
		return adminErr(ErrInvalidArgument, "Invalid schema compatibility strategy %q", *s)
	}
	if n := tp.MaxMessageSize; n != nil && (*n < 0 || *n > b.cfg.MaxMessageSize) {
		return adminErr(ErrPreconditionFailed, "topic-level maxMessageSize must be greater than or equal to 0 and must be smaller than that in the broker-level")
	}
	if err := checkSubscriptionTypes(tp.SubscriptionTypesEnabled); err != nil {
		return err
	}
	if err := checkInactiveTopicPolicies(tp.InactiveTopicPolicies); err != nil {
		return err
	}
	if err := b.checkReplicationClusters(tp.ReplicationClusters); err != nil {
		return err
	}
	for kind, q := range tp.BackLogQuotaMap {
		if err := checkBacklogQuota(kind, &q); err != nil {
			return err
		}
		if err := checkQuotaWithinRetention(q, tp.RetentionPolicies, "topic"); err != nil {
			return err
		}
		tp.BackLogQuotaMap[kind] = q
	}
	return nil
}

// AppliedTopicPolicies are the layers of policies that apply to a topic, from which the admin
// API answers ?applied=true: each policy in effect is the topic's own, else its namespace's,
// else the broker's (policy.Layers resolves it).
type AppliedTopicPolicies struct {
	policy.Layers
	// AllowAutoSubscriptionCreation is the broker's, which the dynamic configuration may change.
	AllowAutoSubscriptionCreation bool
	// BrokerMaxMessageSize is the broker's maxMessageSize.
	BrokerMaxMessageSize int
}

// MaxMessageSizeInEffect is the largest message a topic takes: its own limit when below the
// broker's, else the broker's.
func (a AppliedTopicPolicies) MaxMessageSizeInEffect() int {
	if n := a.MaxMessageSize(a.BrokerMaxMessageSize); n > 0 {
		return n
	}
	return a.BrokerMaxMessageSize
}

// AppliedTopicPolicies returns the policies that apply to a topic.
func (b *Broker) AppliedTopicPolicies(tname string) (AppliedTopicPolicies, error) {
	name, err := b.policyTopic(tname)
	if err != nil {
		return AppliedTopicPolicies{}, err
	}
	return AppliedTopicPolicies{Layers: b.layers(name), AllowAutoSubscriptionCreation: b.dynamic().allowAutoSubscriptionCreation,
		BrokerMaxMessageSize: b.cfg.MaxMessageSize}, nil
}
