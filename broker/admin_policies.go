package broker

import (
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
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
func checkBacklogQuota(kind string, q *adminapi.BacklogQuota) error {
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
func checkQuotaWithinRetention(q adminapi.BacklogQuota, r *adminapi.RetentionPolicies, scope string) error {
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
func checkLimitPolicies(p *adminapi.Policies) error {
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
func checkInactiveTopicPolicies(p *adminapi.InactiveTopicPolicies) error {
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
	return b.UpdateNamespacePolicies(ns, func(p *adminapi.Policies) error {
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

// GrantSubscriptionPermission lets roles use subscription sub of ns's topics: once a
// subscription has roles, only they (and superusers) may consume through it.
func (b *Broker) GrantSubscriptionPermission(ns, sub string, roles []string) error {
	return b.UpdateNamespacePolicies(ns, func(p *adminapi.Policies) error {
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
	return b.UpdateNamespacePolicies(ns, func(p *adminapi.Policies) error {
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
func SetNamespaceBacklogQuota(p *adminapi.Policies, kind string, q adminapi.BacklogQuota) error {
	if err := checkBacklogQuota(kind, &q); err != nil {
		return err
	}
	if err := checkQuotaWithinRetention(q, p.RetentionPolicies, "namespace"); err != nil {
		return err
	}
	if p.BacklogQuotaMap == nil {
		p.BacklogQuotaMap = map[string]adminapi.BacklogQuota{}
	}
	p.BacklogQuotaMap[kind] = q
	return nil
}
