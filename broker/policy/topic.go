package policy

import "encoding/json"

// TopicPolicies is upstream's TopicPolicies JSON, the part this broker keeps; nil is not set.
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

// Empty reports whether tp sets nothing (nil sets nothing): every field is omitted from its
// JSON when unset.
func (tp *TopicPolicies) Empty() bool {
	if tp == nil {
		return true
	}
	data, err := json.Marshal(tp)
	return err == nil && string(data) == "{}"
}

// Clone returns a deep copy of tp (of nil: an empty one); see Policies.Clone.
func (tp *TopicPolicies) Clone() *TopicPolicies {
	out := &TopicPolicies{}
	if tp == nil {
		return out
	}
	data, _ := json.Marshal(tp)
	json.Unmarshal(data, out)
	return out
}
