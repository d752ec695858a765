package policy

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Layers are the policies that apply to one topic, as upstream layers them: the topic's own
// (nil: none set), its namespace's (nil: none set) and the broker's. Each method resolves one
// policy: the topic's value if set, else the namespace's, else the broker's.
type Layers struct {
	Topic     *adminapi.TopicPolicies
	Namespace *adminapi.Policies
	Defaults  *Defaults
	// Cluster is the broker's cluster, whose entries namespaces' per-cluster rates hold.
	Cluster string
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
func (l Layers) topic() *adminapi.TopicPolicies {
	if l.Topic == nil {
		return &adminapi.TopicPolicies{}
	}
	return l.Topic
}

func (l Layers) ns() *adminapi.Policies {
	if l.Namespace == nil {
		return &adminapi.Policies{}
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
	return First(l.Defaults.MaxSubscriptionsPerTopic, l.topic().MaxSubscriptionsPerTopic, l.ns().MaxSubscriptionsPerTopic)
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
func (l Layers) Retention() adminapi.RetentionPolicies {
	if r := set(l.topic().RetentionPolicies, l.ns().RetentionPolicies); r != nil {
		return *r
	}
	return adminapi.RetentionPolicies{RetentionTimeInMinutes: l.Defaults.DefaultRetentionMinutes, RetentionSizeInMB: l.Defaults.DefaultRetentionSizeMB}
}

// CompactionThreshold is the backlog, in bytes, past which a topic is compacted (0: never).
func (l Layers) CompactionThreshold() int64 {
	return First(l.Defaults.BrokerServiceCompactionThreshold, l.topic().CompactionThreshold, l.ns().CompactionThreshold)
}

// BacklogQuota is the quota of kind (QuotaDestinationStorage or QuotaMessageAge) in effect;
// ok is false when there is none (a limit of -1 is none).
func (l Layers) BacklogQuota(kind string) (q adminapi.BacklogQuota, ok bool) {
	if q, ok = l.topic().BackLogQuotaMap[kind]; !ok {
		q, ok = l.ns().BacklogQuotaMap[kind]
	}
	if !ok {
		d := l.Defaults
		q = adminapi.BacklogQuota{LimitSize: -1, LimitTime: -1, Policy: d.BacklogQuotaDefaultRetentionPolicy}
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

// AutoTopicCreation says whether topics may be auto-created, partitioned or not, and with how
// many partitions: the namespace's override if set (its partitions when it gives more than 0),
// else the broker's values (dynamic configuration), as upstream, which has no topic-level one.
func (l Layers) AutoTopicCreation(allow, partitioned bool, partitions int) (bool, bool, int) {
	o := l.ns().AutoTopicCreationOverride
	if o == nil {
		return allow, partitioned, partitions
	}
	if o.DefaultNumPartitions != nil && *o.DefaultNumPartitions > 0 {
		partitions = *o.DefaultNumPartitions
	}
	return o.AllowAutoTopicCreation, o.TopicType == "partitioned", partitions
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
// the one its namespace's deprecated schema_auto_update_compatibility_strategy stands for,
// else UNDEFINED (which the schema registry reads as the broker's default), as upstream.
func (l Layers) SchemaCompatibilityStrategy() string {
	if s := l.topic().SchemaCompatibilityStrategy; s != nil && *s != "" && *s != "UNDEFINED" {
		return *s
	}
	if s := l.ns().SchemaCompatibilityStrategy; s != "" && s != "UNDEFINED" {
		return s
	}
	if a := l.ns().SchemaAutoUpdateCompatibilityStrategy; a != nil {
		if s, ok := SchemaAutoUpdateStrategies[*a]; ok {
			return s
		}
	}
	return "UNDEFINED"
}

// clusterEntry returns the cluster's entry of a namespace's per-cluster map, or nil.
func clusterEntry[V any](m map[string]V, cluster string) *V {
	if v, ok := m[cluster]; ok {
		return &v
	}
	return nil
}

// PublishRate is what a topic takes from its producers a second (≤ 0: no limit).
func (l Layers) PublishRate() adminapi.PublishRate {
	if r := set(l.topic().PublishRate, clusterEntry(l.ns().PublishMaxMessageRate, l.Cluster)); r != nil {
		return *r
	}
	return adminapi.PublishRate{PublishThrottlingRateInMsg: l.Defaults.MaxPublishRatePerTopicInMessages,
		PublishThrottlingRateInByte: l.Defaults.MaxPublishRatePerTopicInBytes}
}

// DispatchRate is what a topic delivers to all its subscriptions together.
func (l Layers) DispatchRate() adminapi.DispatchRate {
	if r := set(l.topic().DispatchRate, clusterEntry(l.ns().TopicDispatchRate, l.Cluster)); r != nil {
		return *r
	}
	return adminapi.DispatchRate{DispatchThrottlingRateInMsg: l.Defaults.DispatchThrottlingRatePerTopicInMsg,
		DispatchThrottlingRateInByte: l.Defaults.DispatchThrottlingRatePerTopicInByte,
		RelativeToPublishRate:        l.Defaults.DispatchThrottlingRateRelativeToPublishRate, RatePeriodInSecond: 1}
}

// SubscriptionDispatchRate is what each subscription of a topic delivers.
func (l Layers) SubscriptionDispatchRate() adminapi.DispatchRate {
	if r := set(l.topic().SubscriptionDispatchRate, clusterEntry(l.ns().SubscriptionDispatchRate, l.Cluster)); r != nil {
		return *r
	}
	return adminapi.DispatchRate{DispatchThrottlingRateInMsg: l.Defaults.DispatchThrottlingRatePerSubscriptionInMsg,
		DispatchThrottlingRateInByte: l.Defaults.DispatchThrottlingRatePerSubscriptionInByte,
		RelativeToPublishRate:        l.Defaults.DispatchThrottlingRateRelativeToPublishRate, RatePeriodInSecond: 1}
}

// SubscriptionDispatchRateOf is what subscription sub of a topic delivers: its own dispatch
// rate (the topic's subscriptionPolicies), else SubscriptionDispatchRate.
func (l Layers) SubscriptionDispatchRateOf(sub string) adminapi.DispatchRate {
	if r := l.topic().SubscriptionPolicies[sub].DispatchRate; r != nil {
		return *r
	}
	return l.SubscriptionDispatchRate()
}

// SubscriptionDispatchRates are the dispatch rates single subscriptions of a topic set, by name.
func (l Layers) SubscriptionDispatchRates() map[string]adminapi.DispatchRate {
	rates := map[string]adminapi.DispatchRate{}
	for sub, p := range l.topic().SubscriptionPolicies {
		if p.DispatchRate != nil {
			rates[sub] = *p.DispatchRate
		}
	}
	return rates
}

// SubscribeRate is how often one consumer may subscribe to a topic.
func (l Layers) SubscribeRate() adminapi.SubscribeRate {
	if r := set(l.topic().SubscribeRate, clusterEntry(l.ns().ClusterSubscribeRate, l.Cluster)); r != nil {
		return *r
	}
	return adminapi.SubscribeRate{SubscribeThrottlingRatePerConsumer: l.Defaults.SubscribeThrottlingRatePerConsumer,
		RatePeriodInSecond: l.Defaults.SubscribeRatePeriodPerConsumerInSecond}
}

// MaxMessageSize is the topic's own limit on a message's size, in bytes, when it is below
// broker, the broker's maxMessageSize (which the frame reader enforces); 0: none of its own.
// Upstream has no namespace-level form.
func (l Layers) MaxMessageSize(broker int) int {
	if n := l.topic().MaxMessageSize; n != nil && *n > 0 && *n < broker {
		return *n
	}
	return 0
}

// MaxUnackedPerConsumer is the limit on the messages a consumer holds unacknowledged (0: none).
func (l Layers) MaxUnackedPerConsumer() int {
	return First(l.Defaults.MaxUnackedMessagesPerConsumer, l.topic().MaxUnackedMessagesOnConsumer, l.ns().MaxUnackedMessagesPerConsumer)
}

// MaxUnackedPerSubscription is the limit on the messages a subscription's consumers hold
// unacknowledged together (0: none).
func (l Layers) MaxUnackedPerSubscription() int {
	return First(l.Defaults.MaxUnackedMessagesPerSubscription, l.topic().MaxUnackedMessagesOnSubscription,
		l.ns().MaxUnackedMessagesPerSubscription)
}

// DelayedDelivery is whether a topic holds messages until their deliver-at time, how finely,
// and how far ahead they may be.
func (l Layers) DelayedDelivery() adminapi.DelayedDeliveryPolicies {
	d := adminapi.DelayedDeliveryPolicies{Active: l.Defaults.DelayedDeliveryEnabled, TickTime: l.Defaults.DelayedDeliveryTick.Milliseconds(),
		MaxDeliveryDelayInMillis: l.Defaults.DelayedDeliveryMaxDelay.Milliseconds()}
	if ns := l.ns().DelayedDeliveryPolicies; ns != nil {
		d = *ns
	}
	tp := l.topic()
	d.Active = First(d.Active, tp.DelayedDeliveryEnabled)
	d.TickTime = First(d.TickTime, tp.DelayedDeliveryTickTimeMillis)
	d.MaxDeliveryDelayInMillis = First(d.MaxDeliveryDelayInMillis, tp.DelayedDeliveryMaxDelayInMillis)
	return d
}

// DeduplicationSnapshotInterval is how often, in seconds, a deduplicating topic stores its
// producers' sequence ids (0: only by entry count).
func (l Layers) DeduplicationSnapshotInterval() int {
	return First(l.Defaults.BrokerDeduplicationSnapshotIntervalSeconds, l.topic().DeduplicationSnapshotIntervalSeconds,
		l.ns().DeduplicationSnapshotIntervalSeconds)
}

// InactiveTopic is when a topic nobody uses is deleted.
func (l Layers) InactiveTopic() adminapi.InactiveTopicPolicies {
	if p := set(l.topic().InactiveTopicPolicies, l.ns().InactiveTopicPolicies); p != nil {
		return *p
	}
	return adminapi.InactiveTopicPolicies{InactiveTopicDeleteMode: l.Defaults.BrokerDeleteInactiveTopicsMode,
		MaxInactiveDurationSeconds: l.Defaults.BrokerDeleteInactiveTopicsMaxInactiveDurationSeconds,
		DeleteWhileInactive:        l.Defaults.BrokerDeleteInactiveTopicsEnabled}
}

// SchemaValidationEnforced reports whether producers without a schema are refused on a topic
// that has one: the topic's setting, else the namespace's or the broker's, either enforcing,
// as upstream.
func (l Layers) SchemaValidationEnforced() bool {
	return First(l.ns().SchemaValidationEnforced || l.Defaults.IsSchemaValidationEnforced, l.topic().SchemaValidationEnforced)
}

// AllowAutoUpdateSchema reports whether producers and consumers may register new schema
// versions (a namespace-level policy).
func (l Layers) AllowAutoUpdateSchema() bool {
	return First(l.Defaults.IsAllowAutoUpdateSchemaEnabled, l.ns().IsAllowAutoUpdateSchema)
}

// SubscriptionTypesEnabled are the subscription types a topic accepts.
func (l Layers) SubscriptionTypesEnabled() []string {
	if t := l.topic().SubscriptionTypesEnabled; len(t) > 0 {
		return t
	}
	if t := l.ns().SubscriptionTypesEnabled; len(t) > 0 {
		return t
	}
	return l.Defaults.SubscriptionTypesEnabled
}

// EncryptionRequired reports whether a topic's producers must encrypt (a namespace-level
// policy).
func (l Layers) EncryptionRequired() bool { return l.ns().EncryptionRequired }

// SubscriptionAuthMode is None or Prefix (a namespace-level policy).
func (l Layers) SubscriptionAuthMode() string {
	if m := l.ns().SubscriptionAuthMode; m != "" {
		return m
	}
	return SubscriptionAuthNone
}

// DispatcherPauseOnAckStatePersistent reports whether a subscription whose acknowledgement
// holes are more than its cursor can store stops getting messages: the topic's setting, else
// the namespace's or the broker's, either on.
func (l Layers) DispatcherPauseOnAckStatePersistent() bool {
	return First(l.ns().DispatcherPauseOnAckStatePersistentEnabled || l.Defaults.DispatcherPauseOnAckStatePersistentEnabled,
		l.topic().DispatcherPauseOnAckStatePersistentEnabled)
}

// ReplicationClusters are the clusters a topic's messages go to: the topic's, else its
// namespace's.
func (l Layers) ReplicationClusters() []string {
	if c := l.topic().ReplicationClusters; len(c) > 0 {
		return c
	}
	return l.ns().ReplicationClusters
}
