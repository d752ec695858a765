package policy

import "time"

// Layers are the policies that apply to one topic, as upstream layers them: the topic's own
// (nil: none set), its namespace's (nil: none set) and the broker's. Each method resolves one
// policy: the topic's value if set, else the namespace's, else the broker's.
type Layers struct {
	Topic     *TopicPolicies
	Namespace *Policies
	Defaults  *Defaults
}

// First returns the first of vals that is set, else def.
func First[T any](def T, vals ...*T) T {
	for _, v := range vals {
		if v != nil {
			return *v
		}
	}
	return def
}

// set returns the first of vals that is set, or nil.
func set[T any](vals ...*T) *T {
	for _, v := range vals {
		if v != nil {
			return v
		}
	}
	return nil
}

// topic and ns return the layers, empty when unset, so that resolution reads fields plainly.
func (l Layers) topic() *TopicPolicies {
	if l.Topic == nil {
		return &TopicPolicies{}
	}
	return l.Topic
}

func (l Layers) ns() *Policies {
	if l.Namespace == nil {
		return &Policies{}
	}
	return l.Namespace
}

// MaxProducers is the limit on a topic's producers (0: none).
func (l Layers) MaxProducers() int {
	return First(l.Defaults.MaxProducersPerTopic, l.topic().MaxProducerPerTopic, l.ns().MaxProducersPerTopic)
}

// MaxConsumers is the limit on a topic's consumers (0: none).
func (l Layers) MaxConsumers() int {
	return First(l.Defaults.MaxConsumersPerTopic, l.topic().MaxConsumerPerTopic, l.ns().MaxConsumersPerTopic)
}

// MaxConsumersPerSubscription is the limit on one subscription's consumers (0: none).
func (l Layers) MaxConsumersPerSubscription() int {
	return First(l.Defaults.MaxConsumersPerSubscription, l.topic().MaxConsumersPerSubscription, l.ns().MaxConsumersPerSubscription)
}

// MaxSubscriptions is the limit on a topic's subscriptions (0: none).
func (l Layers) MaxSubscriptions() int {
	return First(l.Defaults.MaxSubscriptionsPerTopic, l.topic().MaxSubscriptionsPerTopic)
}

// MaxTopics is the limit on a namespace's topics, partitions counted (0: none). A namespace's
// 0 means the broker's, as upstream.
func (l Layers) MaxTopics() int {
	if n := l.ns().MaxTopicsPerNamespace; n != nil && *n > 0 {
		return *n
	}
	return l.Defaults.MaxTopicsPerNamespace
}

// SubscriptionExpiry is how long a subscription may stay without consumers before it is
// deleted (0: never).
func (l Layers) SubscriptionExpiry() time.Duration {
	return time.Duration(First(l.Defaults.SubscriptionExpirationTimeMinutes, l.ns().SubscriptionExpirationTimeMinutes)) * time.Minute
}

// Deduplication reports whether a topic deduplicates.
func (l Layers) Deduplication() bool {
	return First(l.Defaults.BrokerDeduplicationEnabled, l.topic().DeduplicationEnabled, l.ns().DeduplicationEnabled)
}

// MessageTTL is how long a topic's messages live (0: for ever).
func (l Layers) MessageTTL() time.Duration {
	if s := set(l.topic().MessageTTLInSeconds, l.ns().MessageTTLInSeconds); s != nil {
		return time.Duration(*s) * time.Second
	}
	return l.Defaults.TTLDurationDefault
}

// Retention is how long and how much acknowledged data a topic keeps (0: none; −1: no limit).
func (l Layers) Retention() RetentionPolicies {
	if r := set(l.topic().RetentionPolicies, l.ns().RetentionPolicies); r != nil {
		return *r
	}
	return RetentionPolicies{RetentionTimeInMinutes: l.Defaults.DefaultRetentionMinutes, RetentionSizeInMB: l.Defaults.DefaultRetentionSizeMB}
}

// CompactionThreshold is the backlog, in bytes, past which a topic is compacted (0: never).
func (l Layers) CompactionThreshold() int64 {
	return First(l.Defaults.BrokerServiceCompactionThreshold, l.topic().CompactionThreshold, l.ns().CompactionThreshold)
}

// BacklogQuota is the quota of kind (QuotaDestinationStorage or QuotaMessageAge) in effect;
// ok is false when there is none (a limit of -1 is none).
func (l Layers) BacklogQuota(kind string) (q BacklogQuota, ok bool) {
	if q, ok = l.topic().BackLogQuotaMap[kind]; !ok {
		q, ok = l.ns().BacklogQuotaMap[kind]
	}
	if !ok {
		d := l.Defaults
		q = BacklogQuota{LimitSize: -1, LimitTime: -1, Policy: d.BacklogQuotaDefaultRetentionPolicy}
		switch {
		case kind == QuotaDestinationStorage && d.BacklogQuotaDefaultLimitBytes > 0:
			q.LimitSize, q.Limit, ok = d.BacklogQuotaDefaultLimitBytes, d.BacklogQuotaDefaultLimitBytes, true
		case kind == QuotaMessageAge && d.BacklogQuotaDefaultLimitSecond > 0:
			q.LimitTime, ok = d.BacklogQuotaDefaultLimitSecond, true
		}
	}
	if ok && ((kind == QuotaDestinationStorage && q.LimitSize < 0) || (kind == QuotaMessageAge && q.LimitTime < 0)) {
		ok = false
	}
	return q, ok
}

// AutoSubscriptionCreation reports whether a topic's subscriptions may be created on
// subscribe; broker is the broker's allowAutoSubscriptionCreation, which may change at run
// time (dynamic configuration).
func (l Layers) AutoSubscriptionCreation(broker bool) bool {
	if o := set(l.topic().AutoSubscriptionCreationOverride, l.ns().AutoSubscriptionCreationOverride); o != nil {
		return o.AllowAutoSubscriptionCreation
	}
	return broker
}

// SchemaCompatibilityStrategy is the strategy set on the topic, else on its namespace, else
// UNDEFINED (which the schema registry reads as the broker's default).
func (l Layers) SchemaCompatibilityStrategy() string {
	if s := l.topic().SchemaCompatibilityStrategy; s != nil && *s != "" && *s != "UNDEFINED" {
		return *s
	}
	if s := l.ns().SchemaCompatibilityStrategy; s != "" {
		return s
	}
	return "UNDEFINED"
}
