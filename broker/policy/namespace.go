package policy

import "encoding/json"

// Policies is upstream's namespace Policies JSON, the part this broker knows.
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

// SchemaCompatibilityStrategies are the strategy names upstream accepts.
var SchemaCompatibilityStrategies = []string{"UNDEFINED", "ALWAYS_INCOMPATIBLE", "ALWAYS_COMPATIBLE",
	"BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE"}

// Clone returns a deep copy of p, its maps made empty rather than null as upstream answers them.
// Stored policies are never changed in place: an update clones, edits the clone and stores it,
// so a *Policies read from the store may be used after the lock that guards the store.
func (p *Policies) Clone() *Policies {
	data, _ := json.Marshal(p)
	out := &Policies{}
	json.Unmarshal(data, out)
	if out.BacklogQuotaMap == nil {
		out.BacklogQuotaMap = map[string]BacklogQuota{}
	}
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	mapOf(&out.PublishMaxMessageRate)
	mapOf(&out.TopicDispatchRate)
	mapOf(&out.ClusterDispatchRate)
	mapOf(&out.SubscriptionDispatchRate)
	mapOf(&out.ClusterSubscribeRate)
	if out.SubscriptionTypesEnabled == nil {
		out.SubscriptionTypesEnabled = []string{}
	}
	if out.AllowedClusters == nil {
		out.AllowedClusters = []string{}
	}
	// Policies stored before these fields existed read as upstream's defaults.
	if out.SubscriptionAuthMode == "" {
		out.SubscriptionAuthMode = SubscriptionAuthNone
	}
	return out
}

func mapOf[V any](m *map[string]V) {
	if *m == nil {
		*m = map[string]V{}
	}
}
