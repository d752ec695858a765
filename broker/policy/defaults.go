package policy

import "time"

// Defaults are the broker's values of the policies namespaces and topics may override, under
// upstream's broker.conf names (the broker's Config embeds them and reads them from
// broker.conf). A zero value means what upstream's default means: no limit, no expiry, no
// automatic compaction.
type Defaults struct {
	// MaxProducersPerTopic, MaxConsumersPerTopic, MaxConsumersPerSubscription and
	// MaxSubscriptionsPerTopic limit what clients may open on a topic (0: no limit).
	MaxProducersPerTopic        int
	MaxConsumersPerTopic        int
	MaxConsumersPerSubscription int
	MaxSubscriptionsPerTopic    int
	// MaxTopicsPerNamespace is upstream's maxTopicsPerNamespace (0: no limit).
	MaxTopicsPerNamespace int
	// SubscriptionExpirationTimeMinutes is upstream's subscriptionExpirationTimeMinutes: a
	// subscription without consumers for that long is deleted (0: never).
	SubscriptionExpirationTimeMinutes int

	// BrokerDeduplicationEnabled turns deduplication on for namespaces without a policy.
	BrokerDeduplicationEnabled bool
	// TTLDurationDefault is the message TTL of namespaces without a message_ttl_in_seconds
	// policy (0: messages never expire).
	TTLDurationDefault time.Duration
	// DefaultRetentionMinutes and DefaultRetentionSizeMB are upstream's
	// defaultRetentionTimeInMinutes and defaultRetentionSizeInMB: the retention of topics whose
	// namespace and topic set none; 0 keeps nothing acknowledged, −1 keeps it without limit.
	DefaultRetentionMinutes int
	DefaultRetentionSizeMB  int64

	// BacklogQuotaDefaultLimitBytes and BacklogQuotaDefaultLimitSecond are upstream's
	// backlogQuotaDefaultLimitBytes / backlogQuotaDefaultLimitSecond, the backlog quota of
	// topics whose namespace sets none (≤ 0: none, upstream's -1), with
	// BacklogQuotaDefaultRetentionPolicy (backlogQuotaDefaultRetentionPolicy:
	// producer_request_hold, producer_exception or consumer_backlog_eviction).
	BacklogQuotaDefaultLimitBytes      int64
	BacklogQuotaDefaultLimitSecond     int
	BacklogQuotaDefaultRetentionPolicy string
	// BrokerServiceCompactionThreshold is upstream's brokerServiceCompactionThresholdInBytes,
	// the compaction threshold of topics whose namespace and topic set none (0: none).
	BrokerServiceCompactionThreshold int64

	// DelayedDeliveryEnabled and DelayedDeliveryTick are upstream's delayedDeliveryEnabled and
	// delayedDeliveryTickTimeMillis.
	DelayedDeliveryEnabled bool
	DelayedDeliveryTick    time.Duration
	// MaxUnackedMessagesPerConsumer is upstream's maxUnackedMessagesPerConsumer (0: no limit).
	MaxUnackedMessagesPerConsumer int
}
