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
