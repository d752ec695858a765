package admin

// Upstream's JSON documents, with upstream's field names. Only fields a real Pulsar sends are
// relied on; SchemaType on consumers is letterbox's extension and empty elsewhere.

// TenantInfo is a tenant's configuration.
type TenantInfo struct {
	AdminRoles      []string `json:"adminRoles"`
	AllowedClusters []string `json:"allowedClusters"`
}

// RetentionPolicies is a namespace's retention.
type RetentionPolicies struct {
	RetentionTimeInMinutes int   `json:"retentionTimeInMinutes"`
	RetentionSizeInMB      int64 `json:"retentionSizeInMB"`
}

// AutoTopicCreation is a namespace's autoTopicCreationOverride.
type AutoTopicCreation struct {
	Allow                bool   `json:"allowAutoTopicCreation"`
	TopicType            string `json:"topicType"`
	DefaultNumPartitions *int   `json:"defaultNumPartitions,omitempty"`
}

// AutoSubscriptionCreation is a namespace's autoSubscriptionCreationOverride.
type AutoSubscriptionCreation struct {
	Allow bool `json:"allowAutoSubscriptionCreation"`
}

// Policies is the part of a namespace's policies the TUI shows.
type Policies struct {
	RetentionPolicies           *RetentionPolicies        `json:"retention_policies"`
	DeduplicationEnabled        *bool                     `json:"deduplicationEnabled"`
	AutoTopicCreation           *AutoTopicCreation        `json:"autoTopicCreationOverride"`
	AutoSubscriptionCreation    *AutoSubscriptionCreation `json:"autoSubscriptionCreationOverride"`
	SchemaCompatibilityStrategy string                    `json:"schema_compatibility_strategy"`
	MessageTTLInSeconds         *int                      `json:"message_ttl_in_seconds"`
	ReplicationClusters         []string                  `json:"replication_clusters"`
	AuthPolicies                struct {
		NamespaceAuth map[string][]string `json:"namespace_auth"`
	} `json:"auth_policies"`
}

// MessageID is a position: {"ledgerId","entryId","partitionIndex"}.
type MessageID struct {
	LedgerID       int64 `json:"ledgerId"`
	EntryID        int64 `json:"entryId"`
	PartitionIndex int   `json:"partitionIndex"`
	// BatchIndex is the message's index in a batch (−1 or 0 when not batched); not sent.
	BatchIndex int `json:"-"`
}

// Earliest and Latest as the admin API encodes them.
var (
	Earliest = MessageID{LedgerID: -1, EntryID: -1, PartitionIndex: -1}
	Latest   = MessageID{LedgerID: 1<<63 - 1, EntryID: 1<<63 - 1, PartitionIndex: -1}
)

// TopicStats is a topic's (or partition's) stats.
type TopicStats struct {
	MsgRateIn              float64                      `json:"msgRateIn"`
	MsgThroughputIn        float64                      `json:"msgThroughputIn"`
	MsgRateOut             float64                      `json:"msgRateOut"`
	MsgThroughputOut       float64                      `json:"msgThroughputOut"`
	MsgInCounter           int64                        `json:"msgInCounter"`
	BytesInCounter         int64                        `json:"bytesInCounter"`
	MsgOutCounter          int64                        `json:"msgOutCounter"`
	BytesOutCounter        int64                        `json:"bytesOutCounter"`
	AverageMsgSize         float64                      `json:"averageMsgSize"`
	StorageSize            int64                        `json:"storageSize"`
	BacklogSize            int64                        `json:"backlogSize"`
	Publishers             []PublisherStats             `json:"publishers"`
	Subscriptions          map[string]SubscriptionStats `json:"subscriptions"`
	DeduplicationStatus    string                       `json:"deduplicationStatus"`
	TopicCreationTimeStamp int64                        `json:"topicCreationTimeStamp"`
	LastPublishTimeStamp   int64                        `json:"lastPublishTimeStamp"`
}

// PublisherStats is one producer's stats.
type PublisherStats struct {
	AccessMode      string            `json:"accessMode"`
	ProducerID      int64             `json:"producerId"`
	ProducerName    string            `json:"producerName"`
	MsgRateIn       float64           `json:"msgRateIn"`
	MsgThroughputIn float64           `json:"msgThroughputIn"`
	AverageMsgSize  float64           `json:"averageMsgSize"`
	Address         string            `json:"address"`
	ConnectedSince  string            `json:"connectedSince"`
	ClientVersion   string            `json:"clientVersion"`
	Metadata        map[string]string `json:"metadata"`
}

// SubscriptionStats is one subscription's stats; MsgBacklog counts entries, as upstream.
// MsgBacklogMessages is letterbox's extension (docs/protocol.md, "Admin JSON extensions"): the
// backlog in messages, each message of a batch one; nil when the broker does not say (a real
// cluster, or letterbox's broker with --compat upstream), which is not 0.
type SubscriptionStats struct {
	Type                            string            `json:"type"`
	MsgRateOut                      float64           `json:"msgRateOut"`
	MsgThroughputOut                float64           `json:"msgThroughputOut"`
	MsgRateRedeliver                float64           `json:"msgRateRedeliver"`
	MsgRateExpired                  float64           `json:"msgRateExpired"`
	MessageAckRate                  float64           `json:"messageAckRate"`
	MsgOutCounter                   int64             `json:"msgOutCounter"`
	BytesOutCounter                 int64             `json:"bytesOutCounter"`
	MsgBacklog                      int64             `json:"msgBacklog"`
	MsgBacklogMessages              *int64            `json:"msgBacklogMessages,omitempty"`
	MsgBacklogNoDelayed             int64             `json:"msgBacklogNoDelayed"`
	MsgDelayed                      int64             `json:"msgDelayed"`
	BacklogSize                     int64             `json:"backlogSize"`
	EarliestMsgPublishTimeInBacklog int64             `json:"earliestMsgPublishTimeInBacklog"`
	UnackedMessages                 int64             `json:"unackedMessages"`
	ActiveConsumerName              string            `json:"activeConsumerName"`
	IsDurable                       bool              `json:"isDurable"`
	LastConsumedTimestamp           int64             `json:"lastConsumedTimestamp"`
	LastAckedTimestamp              int64             `json:"lastAckedTimestamp"`
	SubscriptionProperties          map[string]string `json:"subscriptionProperties"`
	Consumers                       []ConsumerStats   `json:"consumers"`
}

// ConsumerStats is one consumer's stats. SchemaType is letterbox's extension ("" elsewhere).
type ConsumerStats struct {
	ConsumerName                 string            `json:"consumerName"`
	MsgRateOut                   float64           `json:"msgRateOut"`
	MsgThroughputOut             float64           `json:"msgThroughputOut"`
	MsgRateRedeliver             float64           `json:"msgRateRedeliver"`
	MsgOutCounter                int64             `json:"msgOutCounter"`
	AvailablePermits             int64             `json:"availablePermits"`
	UnackedMessages              int64             `json:"unackedMessages"`
	BlockedConsumerOnUnackedMsgs bool              `json:"blockedConsumerOnUnackedMsgs"`
	Address                      string            `json:"address"`
	ConnectedSince               string            `json:"connectedSince"`
	ClientVersion                string            `json:"clientVersion"`
	LastAckedTimestamp           int64             `json:"lastAckedTimestamp"`
	LastConsumedTimestamp        int64             `json:"lastConsumedTimestamp"`
	Metadata                     map[string]string `json:"metadata"`
	SchemaType                   string            `json:"schemaType,omitempty"`
}

// PartitionedTopicStats aggregates a partitioned topic's partitions.
type PartitionedTopicStats struct {
	TopicStats
	Metadata struct {
		Partitions int `json:"partitions"`
	} `json:"metadata"`
	Partitions map[string]TopicStats `json:"partitions"`
}

// Schema is one version of a topic's schema.
type Schema struct {
	Version    int64             `json:"version"`
	Type       string            `json:"type"`
	Timestamp  int64             `json:"timestamp"`
	Data       string            `json:"data"`
	Properties map[string]string `json:"properties"`
}

// Lookup is where a topic is served.
type Lookup struct {
	BrokerURL    string `json:"brokerUrl"`
	BrokerURLTLS string `json:"brokerUrlTls"`
	HTTPURL      string `json:"httpUrl"`
	HTTPURLTLS   string `json:"httpUrlTls"`
	NativeURL    string `json:"nativeUrl"`
}

// SchemaCompatibility is the answer of a compatibility check: whether the schema could be
// registered, and the strategy that decided.
type SchemaCompatibility struct {
	Compatible bool   `json:"compatibility"`
	Strategy   string `json:"schemaCompatibilityStrategy"`
}

// InternalStats is a persistent topic's storage-level stats (upstream's
// PersistentTopicInternalStats). Positions are "ledger:entry" text, as upstream sends them.
type InternalStats struct {
	EntriesAddedCounter                int64                  `json:"entriesAddedCounter"`
	NumberOfEntries                    int64                  `json:"numberOfEntries"`
	TotalSize                          int64                  `json:"totalSize"`
	CurrentLedgerEntries               int64                  `json:"currentLedgerEntries"`
	CurrentLedgerSize                  int64                  `json:"currentLedgerSize"`
	LastLedgerCreatedTimestamp         string                 `json:"lastLedgerCreatedTimestamp"`
	LastLedgerCreationFailureTimestamp string                 `json:"lastLedgerCreationFailureTimestamp"`
	WaitingCursorsCount                int                    `json:"waitingCursorsCount"`
	PendingAddEntriesCount             int                    `json:"pendingAddEntriesCount"`
	LastConfirmedEntry                 string                 `json:"lastConfirmedEntry"`
	State                              string                 `json:"state"`
	Ledgers                            []LedgerInfo           `json:"ledgers"`
	Cursors                            map[string]CursorStats `json:"cursors"`
	SchemaLedgers                      []LedgerInfo           `json:"schemaLedgers"`
	CompactedLedger                    LedgerInfo             `json:"compactedLedger"`
}

// LedgerInfo is one ledger of a topic (or of its schema, or its compacted ledger).
type LedgerInfo struct {
	LedgerID        int64  `json:"ledgerId"`
	Entries         int64  `json:"entries"`
	Size            int64  `json:"size"`
	Timestamp       int64  `json:"timestamp"`
	Offloaded       bool   `json:"offloaded"`
	Metadata        string `json:"metadata"`
	UnderReplicated bool   `json:"underReplicated"`
}

// CursorStats is one subscription's cursor in InternalStats. BatchDeletedIndexes is
// letterbox's extension: the acknowledged indexes of each batch acknowledged in part
// ("ledger:entry" → indexes, ascending); nil when the broker does not say, which is not "none".
type CursorStats struct {
	MarkDeletePosition                       string              `json:"markDeletePosition"`
	ReadPosition                             string              `json:"readPosition"`
	WaitingReadOp                            bool                `json:"waitingReadOp"`
	PendingReadOps                           int                 `json:"pendingReadOps"`
	MessagesConsumedCounter                  int64               `json:"messagesConsumedCounter"`
	CursorLedger                             int64               `json:"cursorLedger"`
	CursorLedgerLastEntry                    int64               `json:"cursorLedgerLastEntry"`
	IndividuallyDeletedMessages              string              `json:"individuallyDeletedMessages"`
	LastLedgerSwitchTimestamp                string              `json:"lastLedgerSwitchTimestamp"`
	State                                    string              `json:"state"`
	Active                                   bool                `json:"active"`
	NumberOfEntriesSinceFirstNotAckedMessage int64               `json:"numberOfEntriesSinceFirstNotAckedMessage"`
	TotalNonContiguousDeletedMessagesRange   int                 `json:"totalNonContiguousDeletedMessagesRange"`
	Properties                               map[string]int64    `json:"properties"`
	BatchDeletedIndexes                      *map[string][]int32 `json:"batchDeletedIndexes,omitempty"`
}

// Message is a message read without consuming it (peek or by id).
type Message struct {
	Topic       string
	ID          MessageID
	Payload     []byte
	Properties  map[string]string
	PublishTime string // as the server formats it (ISO-8601)
	// Key is the partition key ("" when none); EventTime the application's time, formatted
	// as PublishTime ("" when unset). For a batch, both are the message's own.
	Key       string
	EventTime string
	// Headers holds the X-Pulsar-* headers of the entry it came from.
	Headers map[string]string
}
