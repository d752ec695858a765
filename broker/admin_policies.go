package broker

import (
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/broker/policy"
)

// The policies in effect on a topic, as upstream layers them: a topic-level policy
// (admin_topic_policies.go) overrides its namespace's, which overrides the broker's
// configuration. broker/policy resolves them over the layers that layers returns; this file
// validates the namespace policies that limit topics, with upstream's reasons.
//
// Where each is enforced: max producers, consumers and subscriptions in limits.go, message TTL
// in ttl.go, retention in retention.go, deduplication in dedup.go, backlog quotas in
// backlog_quota.go, subscription expiry in sub_expiry.go, the topic count of a namespace in
// maxTopicsRefusal (below). The compaction threshold is read by compaction (CompactionThreshold).

// checkBacklogQuota validates one backlog quota of type kind and fills in its limits.
func checkBacklogQuota(kind string, q *policy.BacklogQuota) error {
	switch kind {
	case policy.QuotaDestinationStorage, policy.QuotaMessageAge:
	default:
		return adminErr(ErrPreconditionFailed, "Invalid backlog quota type %q: want %s or %s", kind, policy.QuotaDestinationStorage, policy.QuotaMessageAge)
	}
	switch q.Policy {
	case policy.QuotaProducerRequestHold, policy.QuotaProducerException, policy.QuotaConsumerBacklogEviction:
	default:
		return adminErr(ErrInvalidArgument, "Invalid backlog quota policy %q: want %s, %s or %s", q.Policy,
			policy.QuotaProducerRequestHold, policy.QuotaProducerException, policy.QuotaConsumerBacklogEviction)
	}
	if q.LimitSize == 0 && q.Limit != 0 {
		q.LimitSize = q.Limit // a client that sends only the deprecated field
	}
	q.Limit = q.LimitSize
	return nil
}

// checkQuotaWithinRetention refuses a backlog quota larger than the retention it would be held
// to, as upstream does: data past retention is gone, so such a quota could never trigger.
func checkQuotaWithinRetention(q policy.BacklogQuota, r *policy.RetentionPolicies, scope string) error {
	if r == nil {
		return nil
	}
	if (r.RetentionSizeInMB > 0 && q.LimitSize > 0 && q.LimitSize >= r.RetentionSizeInMB<<20) ||
		(r.RetentionTimeInMinutes > 0 && q.LimitTime > 0 && q.LimitTime >= r.RetentionTimeInMinutes*60) {
		return adminErr(ErrPreconditionFailed, "Backlog Quota exceeds configured retention quota for %s. Please increase retention quota and retry", scope)
	}
	return nil
}

// checkLimitPolicies validates the namespace policies that are counts and thresholds, with
// upstream's reasons.
func checkLimitPolicies(p *policy.Policies) error {
	for _, l := range []struct {
		v      *int
		reason string
	}{
		{p.MaxTopicsPerNamespace, "maxTopicsPerNamespace must be 0 or more"},
		{p.SubscriptionExpirationTimeMinutes, "Invalid value for subscription expiration time"},
		{p.MaxConsumersPerSubscription, "maxConsumersPerSubscription must be 0 or more"},
		{p.MaxConsumersPerTopic, "maxConsumersPerTopic must be 0 or more"},
		{p.MaxProducersPerTopic, "maxProducersPerTopic must be 0 or more"},
		{p.MaxSubscriptionsPerTopic, "maxSubscriptionsPerTopic must be 0 or more"},
		{p.MaxUnackedMessagesPerConsumer, "maxUnackedMessagesPerConsumer must be 0 or more"},
		{p.MaxUnackedMessagesPerSubscription, "maxUnackedMessagesPerSubscription must be 0 or more"},
		{p.DeduplicationSnapshotIntervalSeconds, "interval must be 0 or more"},
	} {
		if l.v != nil && *l.v < 0 {
			return adminErr(ErrPreconditionFailed, "%s", l.reason)
		}
	}
	if p.CompactionThreshold != nil && *p.CompactionThreshold < 0 {
		return adminErr(ErrPreconditionFailed, "compactionThreshold must be 0 or more")
	}
	for kind, q := range p.BacklogQuotaMap {
		if err := checkBacklogQuota(kind, &q); err != nil {
			return err
		}
		p.BacklogQuotaMap[kind] = q
	}
	switch p.SubscriptionAuthMode {
	case "", policy.SubscriptionAuthNone, policy.SubscriptionAuthPrefix:
	default:
		return adminErr(ErrInvalidArgument, "Invalid subscription auth mode %q: want %s or %s", p.SubscriptionAuthMode,
			policy.SubscriptionAuthNone, policy.SubscriptionAuthPrefix)
	}
	if a := p.SchemaAutoUpdateCompatibilityStrategy; a != nil && *a == "" {
		p.SchemaAutoUpdateCompatibilityStrategy = nil // as upstream's JSON reads an empty enum
	} else if a != nil {
		if _, ok := policy.SchemaAutoUpdateStrategies[*a]; !ok {
			return adminErr(ErrInvalidArgument, "Invalid schema auto update compatibility strategy %q", *a)
		}
	}
	if err := checkSubscriptionTypes(p.SubscriptionTypesEnabled); err != nil {
		return err
	}
	return checkInactiveTopicPolicies(p.InactiveTopicPolicies)
}

// checkSubscriptionTypes refuses a name that is not a subscription type, as upstream's JSON
// reader refuses a value its enum does not have.
func checkSubscriptionTypes(types []string) error {
	for _, t := range types {
		if !slices.Contains(policy.SubscriptionTypes, t) {
			return adminErr(ErrInvalidArgument, "Invalid subscription type %q: want %s", t, strings.Join(policy.SubscriptionTypes, ", "))
		}
	}
	return nil
}

// checkInactiveTopicPolicies refuses a delete mode upstream does not have.
func checkInactiveTopicPolicies(p *policy.InactiveTopicPolicies) error {
	if p == nil {
		return nil
	}
	switch p.InactiveTopicDeleteMode {
	case policy.DeleteWhenNoSubscriptions, policy.DeleteWhenSubscriptionsCaughtUp:
		return nil
	}
	return adminErr(ErrInvalidArgument, "Invalid inactiveTopicDeleteMode %q: want %s or %s", p.InactiveTopicDeleteMode,
		policy.DeleteWhenNoSubscriptions, policy.DeleteWhenSubscriptionsCaughtUp)
}

// checkReplicationClusters refuses clusters other than the broker's own, with upstream's
// answers: a single broker is its cluster's only member and replicates to no other. A list that
// is set must not be empty (nil is unset).
func (b *Broker) checkReplicationClusters(clusters []string) error {
	if clusters != nil && len(clusters) == 0 {
		return adminErr(ErrPreconditionFailed, "ClusterIds should not be null or empty")
	}
	if slices.Contains(clusters, "global") {
		return adminErr(ErrPreconditionFailed, "Cannot specify global in the list of replication clusters")
	}
	for _, c := range clusters {
		if c != b.cfg.ClusterName {
			return adminErr(ErrForbidden, "Invalid cluster id: %s", c)
		}
	}
	return nil
}

// SetNamespaceAllowedClusters sets the clusters namespace ns may use (PIP-321) with upstream's
// checks: not "global", clusters that exist, and every cluster the namespace replicates to. On
// a single broker that is its own cluster.
func (b *Broker) SetNamespaceAllowedClusters(ns string, clusters []string) error {
	return b.UpdateNamespacePolicies(ns, func(p *policy.Policies) error {
		if slices.Contains(clusters, "global") {
			return adminErr(ErrPreconditionFailed, "Cannot specify global in the list of allowed clusters")
		}
		for _, c := range p.ReplicationClusters {
			if !slices.Contains(clusters, c) {
				return adminErr(ErrInvalidArgument, "Allowed clusters do not contain the replication cluster %s. "+
					"Please remove the replication cluster if the cluster is not allowed for this namespace", c)
			}
		}
		p.AllowedClusters = slices.Compact(slices.Sorted(slices.Values(clusters)))
		return nil
	})
}

// layers returns the policies that apply to name: its topic-level policies (a partition's are
// its partitioned topic's) and its namespace's, as stored (never changed in place: an update
// stores a new copy, so they may be read after the lock), over the broker's. It takes the admin
// lock, a leaf, so it is safe with topics.mu or a topic's mutex held.
func (b *Broker) layers(name topicName) policy.Layers {
	a, unlock := b.adminLocked()
	defer unlock()
	l := policy.Layers{Namespace: a.policies[name.namespace()], Defaults: &b.cfg.Defaults, Cluster: b.cfg.ClusterName}
	if len(a.topicPolicies) > 0 { // most brokers have none: no name to build on every SEND
		l.Topic = a.topicPolicies[name.base().String()]
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
				seen[name.partition(i).String()] = true
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

// GrantSubscriptionPermission lets roles use subscription sub of ns's topics: once a
// subscription has roles, only they (and superusers) may consume through it.
func (b *Broker) GrantSubscriptionPermission(ns, sub string, roles []string) error {
	return b.UpdateNamespacePolicies(ns, func(p *policy.Policies) error {
		if p.AuthPolicies.SubscriptionAuthRoles == nil {
			p.AuthPolicies.SubscriptionAuthRoles = map[string][]string{}
		}
		have := p.AuthPolicies.SubscriptionAuthRoles[sub]
		for _, r := range roles {
			if !slices.Contains(have, r) {
				have = append(have, r)
			}
		}
		p.AuthPolicies.SubscriptionAuthRoles[sub] = have
		return nil
	})
}

// RevokeSubscriptionPermission takes role off subscription sub of ns.
func (b *Broker) RevokeSubscriptionPermission(ns, sub, role string) error {
	return b.UpdateNamespacePolicies(ns, func(p *policy.Policies) error {
		have, ok := p.AuthPolicies.SubscriptionAuthRoles[sub]
		if !ok {
			return adminErr(ErrPreconditionFailed, "Permissions are not set at the subscription level")
		}
		have = slices.DeleteFunc(slices.Clone(have), func(r string) bool { return r == role })
		if len(have) == 0 {
			delete(p.AuthPolicies.SubscriptionAuthRoles, sub)
		} else {
			p.AuthPolicies.SubscriptionAuthRoles[sub] = have
		}
		return nil
	})
}

// SetNamespaceBacklogQuota sets the backlog quota of kind in namespace policies p, validated
// as upstream validates it (also against the namespace's retention).
func SetNamespaceBacklogQuota(p *policy.Policies, kind string, q policy.BacklogQuota) error {
	if err := checkBacklogQuota(kind, &q); err != nil {
		return err
	}
	if err := checkQuotaWithinRetention(q, p.RetentionPolicies, "namespace"); err != nil {
		return err
	}
	if p.BacklogQuotaMap == nil {
		p.BacklogQuotaMap = map[string]policy.BacklogQuota{}
	}
	p.BacklogQuotaMap[kind] = q
	return nil
}
