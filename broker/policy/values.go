package policy

// The values policies hold, as upstream's JSON.

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

// Upstream's BacklogQuotaType values, the keys of a backlog quota map.
const (
	QuotaDestinationStorage = "destination_storage"
	QuotaMessageAge         = "message_age"
)

// Upstream's BacklogQuota.RetentionPolicy values.
const (
	QuotaProducerRequestHold     = "producer_request_hold"
	QuotaProducerException       = "producer_exception"
	QuotaConsumerBacklogEviction = "consumer_backlog_eviction"
)

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

// Enabled reports whether r limits anything, as upstream's isDispatchRateEnabled.
func (r DispatchRate) Enabled() bool {
	return r.DispatchThrottlingRateInMsg > 0 || r.DispatchThrottlingRateInByte > 0
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

// Upstream's InactiveTopicDeleteMode values.
const (
	DeleteWhenNoSubscriptions       = "delete_when_no_subscriptions"
	DeleteWhenSubscriptionsCaughtUp = "delete_when_subscriptions_caught_up"
)

// SubscriptionTypes are upstream's subscription type names, in the order of its enum.
var SubscriptionTypes = []string{"Exclusive", "Shared", "Failover", "Key_Shared"}

// Upstream's SubscriptionAuthMode values: with Prefix, a role may subscribe only with names
// starting with "<role>-".
const (
	SubscriptionAuthNone   = "None"
	SubscriptionAuthPrefix = "Prefix"
)

// SchemaAutoUpdateStrategies are upstream's (deprecated) SchemaAutoUpdateCompatibilityStrategy
// values with the compatibility strategy each stands for when a namespace sets no
// schema_compatibility_strategy.
var SchemaAutoUpdateStrategies = map[string]string{
	"AutoUpdateDisabled": "ALWAYS_INCOMPATIBLE",
	"Backward":           "BACKWARD",
	"Forward":            "FORWARD",
	"Full":               "FULL",
	"AlwaysCompatible":   "ALWAYS_COMPATIBLE",
	"BackwardTransitive": "BACKWARD_TRANSITIVE",
	"ForwardTransitive":  "FORWARD_TRANSITIVE",
	"FullTransitive":     "FULL_TRANSITIVE",
}
