package adminapi

// Upstream's TopicPolicies: what a topic sets over its namespace's policies.

// TopicPolicies is upstream's TopicPolicies JSON, the part letterbox keeps; nil is not set.
// A partitioned topic's policies are its partitions'.
type TopicPolicies struct {
	MessageTTLInSeconds              *int                              `json:"messageTTLInSeconds,omitempty"`
	RetentionPolicies                *RetentionPolicies                `json:"retentionPolicies,omitempty"`
	MaxProducerPerTopic              *int                              `json:"maxProducerPerTopic,omitempty"`
	MaxConsumerPerTopic              *int                              `json:"maxConsumerPerTopic,omitempty"`
	MaxConsumersPerSubscription      *int                              `json:"maxConsumersPerSubscription,omitempty"`
	MaxSubscriptionsPerTopic         *int                              `json:"maxSubscriptionsPerTopic,omitempty"`
	DeduplicationEnabled             *bool                             `json:"deduplicationEnabled,omitempty"`
	CompactionThreshold              *int64                            `json:"compactionThreshold,omitempty"`
	BackLogQuotaMap                  map[string]BacklogQuota           `json:"backLogQuotaMap,omitempty"`
	AutoSubscriptionCreationOverride *AutoSubscriptionCreationOverride `json:"autoSubscriptionCreationOverride,omitempty"`
	SchemaCompatibilityStrategy      *string                           `json:"schemaCompatibilityStrategy,omitempty"`
	SchemaValidationEnforced         *bool                             `json:"schemaValidationEnforced,omitempty"`

	PublishRate                          *PublishRate           `json:"publishRate,omitempty"`
	DispatchRate                         *DispatchRate          `json:"dispatchRate,omitempty"`
	SubscriptionDispatchRate             *DispatchRate          `json:"subscriptionDispatchRate,omitempty"`
	SubscribeRate                        *SubscribeRate         `json:"subscribeRate,omitempty"`
	MaxMessageSize                       *int                   `json:"maxMessageSize,omitempty"`
	MaxUnackedMessagesOnConsumer         *int                   `json:"maxUnackedMessagesOnConsumer,omitempty"`
	MaxUnackedMessagesOnSubscription     *int                   `json:"maxUnackedMessagesOnSubscription,omitempty"`
	DelayedDeliveryEnabled               *bool                  `json:"delayedDeliveryEnabled,omitempty"`
	DelayedDeliveryTickTimeMillis        *int64                 `json:"delayedDeliveryTickTimeMillis,omitempty"`
	DelayedDeliveryMaxDelayInMillis      *int64                 `json:"delayedDeliveryMaxDelayInMillis,omitempty"`
	DeduplicationSnapshotIntervalSeconds *int                   `json:"deduplicationSnapshotIntervalSeconds,omitempty"`
	InactiveTopicPolicies                *InactiveTopicPolicies `json:"inactiveTopicPolicies,omitempty"`
	// SubscriptionTypesEnabled is unset when empty, as upstream's.
	SubscriptionTypesEnabled                   []string `json:"subscriptionTypesEnabled,omitempty"`
	DispatcherPauseOnAckStatePersistentEnabled *bool    `json:"dispatcherPauseOnAckStatePersistentEnabled,omitempty"`
	// ReplicationClusters is unset when empty; on a single cluster only that cluster can be
	// named.
	ReplicationClusters []string `json:"replicationClusters,omitempty"`
	// SubscriptionPolicies are the policies of single subscriptions, by name; an entry that
	// sets nothing is removed.
	SubscriptionPolicies map[string]SubscriptionPolicies `json:"subscriptionPolicies,omitempty"`
}

// SubscriptionPolicies is upstream's SubscriptionPolicies: what one subscription of a topic
// sets over the topic's policies.
type SubscriptionPolicies struct {
	DispatchRate *DispatchRate `json:"dispatchRate,omitempty"`
}
