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
