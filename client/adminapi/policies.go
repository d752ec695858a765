package adminapi

// Upstream's namespace Policies and the documents it holds.

// Policies is upstream's namespace Policies JSON, the part letterbox knows.
type Policies struct {
	AuthPolicies        AuthPolicies `json:"auth_policies"`
	ReplicationClusters []string     `json:"replication_clusters"`
	// AllowedClusters (PIP-321) are the clusters the namespace may use; empty: its tenant's.
	AllowedClusters                  []string                          `json:"allowed_clusters"`
	Bundles                          *BundlesData                      `json:"bundles,omitempty"`
	RetentionPolicies                *RetentionPolicies                `json:"retention_policies,omitempty"`
	DeduplicationEnabled             *bool                             `json:"deduplicationEnabled,omitempty"`
	AutoTopicCreationOverride        *AutoTopicCreationOverride        `json:"autoTopicCreationOverride,omitempty"`
	AutoSubscriptionCreationOverride *AutoSubscriptionCreationOverride `json:"autoSubscriptionCreationOverride,omitempty"`
	SchemaCompatibilityStrategy      string                            `json:"schema_compatibility_strategy"`
	MessageTTLInSeconds              *int                              `json:"message_ttl_in_seconds,omitempty"`
	Deleted                          bool                              `json:"deleted"`
	// The limits.
	BacklogQuotaMap                   map[string]BacklogQuota `json:"backlog_quota_map"`
	CompactionThreshold               *int64                  `json:"compaction_threshold,omitempty"`
	MaxTopicsPerNamespace             *int                    `json:"max_topics_per_namespace,omitempty"`
	SubscriptionExpirationTimeMinutes *int                    `json:"subscription_expiration_time_minutes,omitempty"`
	MaxConsumersPerSubscription       *int                    `json:"max_consumers_per_subscription,omitempty"`
	MaxConsumersPerTopic              *int                    `json:"max_consumers_per_topic,omitempty"`
	MaxProducersPerTopic              *int                    `json:"max_producers_per_topic,omitempty"`
	MaxSubscriptionsPerTopic          *int                    `json:"max_subscriptions_per_topic,omitempty"`
	MaxUnackedMessagesPerConsumer     *int                    `json:"max_unacked_messages_per_consumer,omitempty"`
	MaxUnackedMessagesPerSubscription *int                    `json:"max_unacked_messages_per_subscription,omitempty"`
	Properties                        map[string]string       `json:"properties"`

	// Rates, by cluster name as upstream keeps them (a single broker reads its own cluster's).
	// clusterDispatchRate is upstream's deprecated copy of topicDispatchRate, kept in step.
	PublishMaxMessageRate    map[string]PublishRate   `json:"publishMaxMessageRate"`
	TopicDispatchRate        map[string]DispatchRate  `json:"topicDispatchRate"`
	ClusterDispatchRate      map[string]DispatchRate  `json:"clusterDispatchRate"`
	SubscriptionDispatchRate map[string]DispatchRate  `json:"subscriptionDispatchRate"`
	ClusterSubscribeRate     map[string]SubscribeRate `json:"clusterSubscribeRate"`

	DelayedDeliveryPolicies              *DelayedDeliveryPolicies `json:"delayed_delivery_policies,omitempty"`
	InactiveTopicPolicies                *InactiveTopicPolicies   `json:"inactive_topic_policies,omitempty"`
	DeduplicationSnapshotIntervalSeconds *int                     `json:"deduplicationSnapshotIntervalSeconds,omitempty"`
	EncryptionRequired                   bool                     `json:"encryption_required"`
	SubscriptionAuthMode                 string                   `json:"subscription_auth_mode"`
	// SubscriptionTypesEnabled is unset when empty, as upstream's.
	SubscriptionTypesEnabled                   []string `json:"subscription_types_enabled"`
	SchemaAutoUpdateCompatibilityStrategy      *string  `json:"schema_auto_update_compatibility_strategy"`
	IsAllowAutoUpdateSchema                    *bool    `json:"is_allow_auto_update_schema,omitempty"`
	SchemaValidationEnforced                   bool     `json:"schema_validation_enforced"`
	DispatcherPauseOnAckStatePersistentEnabled bool     `json:"dispatcher_pause_on_ack_state_persistent_enabled"`
	// ResourceGroupName is the resource group whose rates the namespace's topics share.
	ResourceGroupName string `json:"resource_group_name,omitempty"`
}

// AuthPolicies is upstream's auth_policies.
type AuthPolicies struct {
	NamespaceAuth         map[string][]string            `json:"namespace_auth"`
	DestinationAuth       map[string]map[string][]string `json:"destination_auth"`
	SubscriptionAuthRoles map[string][]string            `json:"subscription_auth_roles"`
}

// BundlesData is upstream's bundles; a single broker has one bundle.
type BundlesData struct {
	Boundaries []string `json:"boundaries"`
	NumBundles int      `json:"numBundles"`
}

// AutoTopicCreationOverride is upstream's per-namespace auto topic creation.
type AutoTopicCreationOverride struct {
	AllowAutoTopicCreation bool   `json:"allowAutoTopicCreation"`
	TopicType              string `json:"topicType"`
	DefaultNumPartitions   *int   `json:"defaultNumPartitions,omitempty"`
}

// AutoSubscriptionCreationOverride is upstream's per-namespace (and per-topic) auto
// subscription creation.
type AutoSubscriptionCreationOverride struct {
	AllowAutoSubscriptionCreation bool `json:"allowAutoSubscriptionCreation"`
}

// RetentionPolicies is upstream's retention policy: how long, and how much, acknowledged data
// is kept (0: none; −1: no limit).
type RetentionPolicies struct {
	RetentionTimeInMinutes int   `json:"retentionTimeInMinutes"`
	RetentionSizeInMB      int64 `json:"retentionSizeInMB"`
}

// BacklogQuota is upstream's BacklogQuota: a limit on a topic's backlog, in bytes
// (destination_storage) or in the age of its oldest unacknowledged message in seconds
// (message_age), and what happens past it. -1 is no limit.
type BacklogQuota struct {
	Limit     int64  `json:"limit"` // upstream's deprecated alias of limitSize
	LimitSize int64  `json:"limitSize"`
	LimitTime int    `json:"limitTime"`
	Policy    string `json:"policy"`
}

// PublishRate is upstream's PublishRate: a topic takes at most PublishThrottlingRateInMsg
// messages and PublishThrottlingRateInByte bytes a second from its producers (≤ 0: no limit).
type PublishRate struct {
	PublishThrottlingRateInMsg  int   `json:"publishThrottlingRateInMsg"`
	PublishThrottlingRateInByte int64 `json:"publishThrottlingRateInByte"`
}

// DispatchRate is upstream's DispatchRate: a topic (or each subscription) delivers at most
// DispatchThrottlingRateInMsg messages and DispatchThrottlingRateInByte bytes every
// RatePeriodInSecond seconds (≤ 0: no limit; a period under 1 is 1). With
// RelativeToPublishRate the limits are added to the topic's current publish rate.
type DispatchRate struct {
	DispatchThrottlingRateInMsg  int   `json:"dispatchThrottlingRateInMsg"`
	DispatchThrottlingRateInByte int64 `json:"dispatchThrottlingRateInByte"`
	RelativeToPublishRate        bool  `json:"relativeToPublishRate"`
	RatePeriodInSecond           int   `json:"ratePeriodInSecond"`
}

// SubscribeRate is upstream's SubscribeRate: each consumer (by client address and consumer
// name) may subscribe at most SubscribeThrottlingRatePerConsumer times every
// RatePeriodInSecond seconds (≤ 0: no limit).
type SubscribeRate struct {
	SubscribeThrottlingRatePerConsumer int `json:"subscribeThrottlingRatePerConsumer"`
	RatePeriodInSecond                 int `json:"ratePeriodInSecond"`
}

// DelayedDeliveryPolicies is upstream's DelayedDeliveryPolicies: whether messages with a
// deliver-at time wait for it (Active), how finely (TickTime, milliseconds: a message due
// within a tick goes at once) and how far ahead a producer may ask (MaxDeliveryDelayInMillis;
// 0: no limit).
type DelayedDeliveryPolicies struct {
	TickTime                 int64 `json:"tickTime"`
	Active                   bool  `json:"active"`
	MaxDeliveryDelayInMillis int64 `json:"maxDeliveryDelayInMillis"`
}

// InactiveTopicPolicies is upstream's InactiveTopicPolicies: with DeleteWhileInactive, a topic
// without producers and consumers for MaxInactiveDurationSeconds is deleted when it has no
// subscriptions (delete_when_no_subscriptions) or when they have all caught up
// (delete_when_subscriptions_caught_up).
type InactiveTopicPolicies struct {
	InactiveTopicDeleteMode    string `json:"inactiveTopicDeleteMode"`
	MaxInactiveDurationSeconds int    `json:"maxInactiveDurationSeconds"`
	DeleteWhileInactive        bool   `json:"deleteWhileInactive"`
}
