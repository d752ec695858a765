package broker

import (
	"slices"
	"time"
)

// The policies that limit topics, as upstream layers them: a topic-level policy
// (admin_topic_policies.go) overrides its namespace's, which overrides the broker's
// configuration. Each getter reads the layers under the admin lock (a leaf lock), so it is
// safe with topics.mu or a topic's mutex held.
//
// Where each is enforced: max producers, consumers and subscriptions in limits.go, message TTL
// in ttl.go, retention in retention.go, deduplication in dedup.go, backlog quotas in
// backlog_quota.go, subscription expiry in sub_expiry.go, the topic count of a namespace in
// maxTopicsRefusal (below). The compaction threshold is read by compaction (CompactionThreshold).

// BacklogQuota is upstream's BacklogQuota: a limit on a topic's backlog, in bytes
// (destination_storage) or in the age of its oldest unacknowledged message in seconds
// (message_age), and what happens past it. -1 is no limit.
type BacklogQuota struct {
	Limit     int64  `json:"limit"` // upstream's deprecated alias of limitSize
	LimitSize int64  `json:"limitSize"`
	LimitTime int    `json:"limitTime"`
	Policy    string `json:"policy"`
}

// Upstream's BacklogQuotaType values, the keys of a backlog quota map.
const (
	QuotaDestinationStorage = "destination_storage"
	QuotaMessageAge         = "message_age"
)

// checkBacklogQuota validates one backlog quota of type kind and fills in its limits.
func checkBacklogQuota(kind string, q *BacklogQuota) error {
	switch kind {
	case QuotaDestinationStorage, QuotaMessageAge:
	default:
		return adminErr(ErrPreconditionFailed, "Invalid backlog quota type %q: want %s or %s", kind, QuotaDestinationStorage, QuotaMessageAge)
	}
	switch q.Policy {
	case QuotaProducerRequestHold, QuotaProducerException, QuotaConsumerBacklogEviction:
	default:
		return adminErr(ErrInvalidArgument, "Invalid backlog quota policy %q: want %s, %s or %s", q.Policy,
			QuotaProducerRequestHold, QuotaProducerException, QuotaConsumerBacklogEviction)
	}
	if q.LimitSize == 0 && q.Limit != 0 {
		q.LimitSize = q.Limit // a client that sends only the deprecated field
	}
	q.Limit = q.LimitSize
	return nil
}

// checkQuotaWithinRetention refuses a backlog quota larger than the retention it would be held
// to, as upstream does: data past retention is gone, so such a quota could never trigger.
func checkQuotaWithinRetention(q BacklogQuota, r *RetentionPolicies, scope string) error {
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
func checkLimitPolicies(p *Policies) error {
	for _, l := range []struct {
		v      *int
		reason string
	}{
		{p.MaxTopicsPerNamespace, "maxTopicsPerNamespace must be 0 or more"},
		{p.SubscriptionExpirationTimeMinutes, "Invalid value for subscription expiration time"},
		{p.MaxConsumersPerSubscription, "maxConsumersPerSubscription must be 0 or more"},
		{p.MaxConsumersPerTopic, "maxConsumersPerTopic must be 0 or more"},
		{p.MaxProducersPerTopic, "maxProducersPerTopic must be 0 or more"},
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
	return nil
}

// layers runs fn with name's topic-level policies and its namespace's policies (either may be
// nil: not set), under the admin lock.
func (b *Broker) layers(name topicName, fn func(tp *TopicPolicies, np *Policies)) {
	a, unlock := b.adminLocked()
	defer unlock()
	var tp *TopicPolicies
	if len(a.topicPolicies) > 0 { // most brokers have none: no name to build on every SEND
		tp = a.topicPolicies[name.base().String()]
	}
	fn(tp, a.policies[name.namespace()])
}

// firstSet returns the first non-nil value, else def.
func firstSet[T any](def T, vals ...*T) T {
	for _, v := range vals {
		if v != nil {
			return *v
		}
	}
	return def
}

// maxProducers is the effective limit on a topic's producers (0: none).
func (b *Broker) maxProducers(name topicName) (n int) {
	b.layers(name, func(tp *TopicPolicies, np *Policies) {
		n = firstSet(b.cfg.MaxProducersPerTopic, tp.maxProducers(), np.maxProducers())
	})
	return n
}

// maxConsumers is the effective limit on a topic's consumers (0: none).
func (b *Broker) maxConsumers(name topicName) (n int) {
	b.layers(name, func(tp *TopicPolicies, np *Policies) {
		n = firstSet(b.cfg.MaxConsumersPerTopic, tp.maxConsumers(), np.maxConsumers())
	})
	return n
}

// maxConsumersPerSubscription is the effective limit on one subscription's consumers (0: none).
func (b *Broker) maxConsumersPerSubscription(name topicName) (n int) {
	b.layers(name, func(tp *TopicPolicies, np *Policies) {
		n = firstSet(b.cfg.MaxConsumersPerSubscription, tp.maxConsumersPerSub(), np.maxConsumersPerSub())
	})
	return n
}

// maxSubscriptions is the effective limit on a topic's subscriptions (0: none). Upstream has no
// namespace-level endpoint for it in pulsaradmin; the topic's policy overrides the broker's.
func (b *Broker) maxSubscriptions(name topicName) (n int) {
	b.layers(name, func(tp *TopicPolicies, _ *Policies) {
		n = firstSet(b.cfg.MaxSubscriptionsPerTopic, tp.maxSubscriptions())
	})
	return n
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
	return b.compactionThreshold(name), nil
}

func (b *Broker) compactionThreshold(name topicName) (n int64) {
	b.layers(name, func(tp *TopicPolicies, np *Policies) {
		var t, ns *int64
		if tp != nil {
			t = tp.CompactionThreshold
		}
		if np != nil {
			ns = np.CompactionThreshold
		}
		n = firstSet(b.cfg.BrokerServiceCompactionThreshold, t, ns)
	})
	return n
}

// subscriptionExpiry is how long a subscription of ns may stay without consumers before it is
// deleted (0: never), the namespace's subscription_expiration_time_minutes, else the broker's
// subscriptionExpirationTimeMinutes.
func (b *Broker) subscriptionExpiry(ns string) time.Duration {
	a, unlock := b.adminLocked()
	defer unlock()
	minutes := b.cfg.SubscriptionExpirationTimeMinutes
	if p := a.policies[ns]; p != nil && p.SubscriptionExpirationTimeMinutes != nil {
		minutes = *p.SubscriptionExpirationTimeMinutes
	}
	return time.Duration(minutes) * time.Minute
}

// maxTopicsRefusal says why ns may not hold n more topics (a partitioned topic counts its
// partitions), or "" (maxTopicsPerNamespace, the namespace's policy else the broker's; 0: no
// limit). Called with topics.mu held.
func (r *topicRegistry) maxTopicsRefusal(ns string, n int) string {
	b := r.b
	limit := b.cfg.MaxTopicsPerNamespace
	func() {
		a, unlock := b.adminLocked()
		defer unlock()
		if p := a.policies[ns]; p != nil && p.MaxTopicsPerNamespace != nil && *p.MaxTopicsPerNamespace > 0 {
			limit = *p.MaxTopicsPerNamespace
		}
	}()
	if limit <= 0 {
		return ""
	}
	// As list counts them: partitions, open topics and stored ones not opened yet.
	seen := map[string]bool{}
	for full, parts := range r.partitioned {
		if name, err := parseTopicName(full); err == nil && name.namespace() == ns {
			for i := range parts {
				seen[name.partition(i).String()] = true
			}
		}
	}
	for full, t := range r.topics {
		if t.name.namespace() == ns {
			seen[full] = true
		}
	}
	for full, name := range r.stored {
		if name.namespace() == ns {
			seen[full] = true
		}
	}
	if len(seen)+n > limit {
		return "Exceed maximum number of topics in namespace."
	}
	return ""
}

// The namespace policies' getters, nil-safe.
func (p *Policies) maxProducers() *int {
	if p == nil {
		return nil
	}
	return p.MaxProducersPerTopic
}

func (p *Policies) maxConsumers() *int {
	if p == nil {
		return nil
	}
	return p.MaxConsumersPerTopic
}

func (p *Policies) maxConsumersPerSub() *int {
	if p == nil {
		return nil
	}
	return p.MaxConsumersPerSubscription
}

// GrantSubscriptionPermission lets roles use subscription sub of ns's topics: once a
// subscription has roles, only they (and superusers) may consume through it.
func (b *Broker) GrantSubscriptionPermission(ns, sub string, roles []string) error {
	return b.UpdateNamespacePolicies(ns, func(p *Policies) error {
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
	return b.UpdateNamespacePolicies(ns, func(p *Policies) error {
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
func SetNamespaceBacklogQuota(p *Policies, kind string, q BacklogQuota) error {
	if err := checkBacklogQuota(kind, &q); err != nil {
		return err
	}
	if err := checkQuotaWithinRetention(q, p.RetentionPolicies, "namespace"); err != nil {
		return err
	}
	if p.BacklogQuotaMap == nil {
		p.BacklogQuotaMap = map[string]BacklogQuota{}
	}
	p.BacklogQuotaMap[kind] = q
	return nil
}
