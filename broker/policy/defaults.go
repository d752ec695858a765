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
	// DelayedDeliveryMaxDelay is upstream's delayedDeliveryMaxDelayInMillis: how far ahead a
	// producer may ask a message to be delivered (0: no limit).
	DelayedDeliveryMaxDelay time.Duration
	// MaxUnackedMessagesPerConsumer and MaxUnackedMessagesPerSubscription are upstream's keys
	// of the same names: a consumer (of a Shared or Key_Shared subscription), or a whole
	// subscription, given that many messages it has not acknowledged gets no more until it
	// has acknowledged half of them (0: no limit).
	MaxUnackedMessagesPerConsumer     int
	MaxUnackedMessagesPerSubscription int

	// MaxPublishRatePerTopicInMessages and MaxPublishRatePerTopicInBytes are upstream's keys
	// of the same names: what a topic takes from its producers a second (0: no limit).
	MaxPublishRatePerTopicInMessages int
	MaxPublishRatePerTopicInBytes    int64
	// DispatchThrottlingRatePerTopicInMsg, …InByte, DispatchThrottlingRatePerSubscriptionInMsg
	// and …InByte are upstream's keys of the same names: what a topic, or each subscription,
	// delivers a second (0: no limit); DispatchThrottlingRateRelativeToPublishRate
	// (dispatchThrottlingRateRelativeToPublishRate) adds the topic's publish rate to them.
	DispatchThrottlingRatePerTopicInMsg         int
	DispatchThrottlingRatePerTopicInByte        int64
	DispatchThrottlingRatePerSubscriptionInMsg  int
	DispatchThrottlingRatePerSubscriptionInByte int64
	DispatchThrottlingRateRelativeToPublishRate bool
	// SubscribeThrottlingRatePerConsumer and SubscribeRatePeriodPerConsumerInSecond are
	// upstream's keys of the same names: how often one consumer may subscribe (0: no limit).
	SubscribeThrottlingRatePerConsumer     int
	SubscribeRatePeriodPerConsumerInSecond int

	// BrokerDeduplicationSnapshotIntervalSeconds is upstream's key of the same name: how
	// often a deduplicating topic stores its producers' sequence ids when they changed (0:
	// only every brokerDeduplicationEntriesInterval entries).
	BrokerDeduplicationSnapshotIntervalSeconds int

	// BrokerDeleteInactiveTopicsEnabled, BrokerDeleteInactiveTopicsMode and
	// BrokerDeleteInactiveTopicsMaxInactiveDurationSeconds are upstream's keys of the same
	// names: the inactive topic policy of topics whose namespace and topic set none.
	BrokerDeleteInactiveTopicsEnabled                    bool
	BrokerDeleteInactiveTopicsMode                       string
	BrokerDeleteInactiveTopicsMaxInactiveDurationSeconds int

	// IsSchemaValidationEnforced (isSchemaValidationEnforced) refuses producers without a
	// schema on topics that have one; IsAllowAutoUpdateSchemaEnabled
	// (isAllowAutoUpdateSchemaEnabled) lets producers and consumers register new schema
	// versions.
	IsSchemaValidationEnforced     bool
	IsAllowAutoUpdateSchemaEnabled bool
	// SubscriptionTypesEnabled is upstream's subscriptionTypesEnabled: the subscription types
	// topics accept.
	SubscriptionTypesEnabled []string
	// DispatcherPauseOnAckStatePersistentEnabled is upstream's key of the same name: a
	// subscription whose acknowledgement holes are more than its cursor can store stops
	// getting messages until they close.
	DispatcherPauseOnAckStatePersistentEnabled bool
}
