package policy

// The values upstream accepts in the policies' fields.

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
