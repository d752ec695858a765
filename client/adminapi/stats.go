package adminapi

// Upstream's stats documents: …/stats, …/partitioned-stats and broker-stats/topics.

// TopicStats is upstream's TopicStats JSON.
type TopicStats struct {
	MsgRateIn              float64                      `json:"msgRateIn"`
	MsgThroughputIn        float64                      `json:"msgThroughputIn"`
	MsgRateOut             float64                      `json:"msgRateOut"`
	MsgThroughputOut       float64                      `json:"msgThroughputOut"`
	BytesInCounter         int64                        `json:"bytesInCounter"`
	MsgInCounter           int64                        `json:"msgInCounter"`
	BytesOutCounter        int64                        `json:"bytesOutCounter"`
	MsgOutCounter          int64                        `json:"msgOutCounter"`
	AverageMsgSize         float64                      `json:"averageMsgSize"`
	MsgChunkPublished      bool                         `json:"msgChunkPublished"`
	StorageSize            int64                        `json:"storageSize"`
	BacklogSize            int64                        `json:"backlogSize"`
	EarliestMsgPublishTime int64                        `json:"earliestMsgPublishTimeInBacklogs"`
	Publishers             []PublisherStats             `json:"publishers"`
	WaitingPublishers      int                          `json:"waitingPublishers"`
	Subscriptions          map[string]SubscriptionStats `json:"subscriptions"`
	Replication            map[string]any               `json:"replication"`
	DeduplicationStatus    string                       `json:"deduplicationStatus"`
	NonContiguousDeleted   int                          `json:"nonContiguousDeletedMessagesRanges"`
	TopicCreationTimeStamp int64                        `json:"topicCreationTimeStamp"`
	LastPublishTimeStamp   int64                        `json:"lastPublishTimeStamp"`
	// LastPublishTimestamp is the same, under the spelling pulsaradmin reads.
	LastPublishTimestamp int64 `json:"lastPublishTimestamp"`
}

// PublisherStats is upstream's PublisherStats JSON.
type PublisherStats struct {
	AccessMode              string            `json:"accessMode"`
	ProducerID              uint64            `json:"producerId"`
	ProducerName            string            `json:"producerName"`
	MsgRateIn               float64           `json:"msgRateIn"`
	MsgThroughputIn         float64           `json:"msgThroughputIn"`
	AverageMsgSize          float64           `json:"averageMsgSize"`
	ChunkedMessageRate      float64           `json:"chunkedMessageRate"`
	SupportsPartialProducer bool              `json:"supportsPartialProducer"`
	Address                 string            `json:"address"`
	ConnectedSince          string            `json:"connectedSince"`
	ClientVersion           string            `json:"clientVersion"`
	Metadata                map[string]string `json:"metadata"`
}

// SubscriptionStats is upstream's SubscriptionStats JSON plus letterbox's extension
// msgBacklogMessages (left out in upstream-compat mode). MsgBacklog counts entries, as
// upstream.
type SubscriptionStats struct {
	MsgRateOut                       float64           `json:"msgRateOut"`
	MsgThroughputOut                 float64           `json:"msgThroughputOut"`
	BytesOutCounter                  int64             `json:"bytesOutCounter"`
	MsgOutCounter                    int64             `json:"msgOutCounter"`
	MsgRateRedeliver                 float64           `json:"msgRateRedeliver"`
	MessageAckRate                   float64           `json:"messageAckRate"`
	ChunkedMessageRate               float64           `json:"chunkedMessageRate"`
	MsgBacklog                       int64             `json:"msgBacklog"`
	BacklogSize                      int64             `json:"backlogSize"`
	EarliestMsgPublishTimeInBacklog  int64             `json:"earliestMsgPublishTimeInBacklog"`
	MsgBacklogNoDelayed              int64             `json:"msgBacklogNoDelayed"`
	BlockedSubscriptionOnUnackedMsgs bool              `json:"blockedSubscriptionOnUnackedMsgs"`
	MsgDelayed                       int64             `json:"msgDelayed"`
	UnackedMessages                  int64             `json:"unackedMessages"`
	Type                             string            `json:"type"`
	ActiveConsumerName               string            `json:"activeConsumerName,omitempty"`
	MsgRateExpired                   float64           `json:"msgRateExpired"`
	TotalMsgExpired                  int64             `json:"totalMsgExpired"`
	LastExpireTimestamp              int64             `json:"lastExpireTimestamp"`
	LastConsumedFlowTimestamp        int64             `json:"lastConsumedFlowTimestamp"`
	LastConsumedTimestamp            int64             `json:"lastConsumedTimestamp"`
	LastAckedTimestamp               int64             `json:"lastAckedTimestamp"`
	LastMarkDeleteAdvancedTimestamp  int64             `json:"lastMarkDeleteAdvancedTimestamp"`
	Consumers                        []ConsumerStats   `json:"consumers"`
	IsDurable                        bool              `json:"isDurable"`
	IsReplicated                     bool              `json:"isReplicated"`
	AllowOutOfOrderDelivery          bool              `json:"allowOutOfOrderDelivery"`
	ConsumersAfterMarkDeletePosition map[string]string `json:"consumersAfterMarkDeletePosition"`
	NonContiguousDeletedRanges       int               `json:"nonContiguousDeletedMessagesRanges"`
	NonContiguousDeletedRangesSize   int               `json:"nonContiguousDeletedMessagesRangesSerializedSize"`
	DelayedMessageIndexSizeInBytes   int64             `json:"delayedMessageIndexSizeInBytes"`
	SubscriptionProperties           map[string]string `json:"subscriptionProperties"`
	FilterProcessedMsgCount          int64             `json:"filterProcessedMsgCount"`
	FilterAcceptedMsgCount           int64             `json:"filterAcceptedMsgCount"`
	FilterRejectedMsgCount           int64             `json:"filterRejectedMsgCount"`
	FilterRescheduledMsgCount        int64             `json:"filterRescheduledMsgCount"`
	// MsgBacklogMessages is the backlog in messages, each message of a batch one: what
	// msgBacklog counts in entries. nil when the broker does not say (a real cluster, or
	// letterbox's broker in upstream-compat mode), which is not 0.
	MsgBacklogMessages *int64 `json:"msgBacklogMessages,omitempty"`
}

// ConsumerStats is upstream's ConsumerStats JSON plus letterbox's extension schemaType (left
// out in upstream-compat mode, "" from a real cluster).
type ConsumerStats struct {
	ConsumerName                 string            `json:"consumerName"`
	MsgRateOut                   float64           `json:"msgRateOut"`
	MsgThroughputOut             float64           `json:"msgThroughputOut"`
	BytesOutCounter              int64             `json:"bytesOutCounter"`
	MsgOutCounter                int64             `json:"msgOutCounter"`
	MsgRateRedeliver             float64           `json:"msgRateRedeliver"`
	MessageAckRate               float64           `json:"messageAckRate"`
	ChunkedMessageRate           float64           `json:"chunkedMessageRate"`
	AvailablePermits             int64             `json:"availablePermits"`
	UnackedMessages              int64             `json:"unackedMessages"`
	AvgMessagesPerEntry          int               `json:"avgMessagesPerEntry"`
	BlockedConsumerOnUnackedMsgs bool              `json:"blockedConsumerOnUnackedMsgs"`
	LastAckedTimestamp           int64             `json:"lastAckedTimestamp"`
	LastConsumedTimestamp        int64             `json:"lastConsumedTimestamp"`
	LastConsumedFlowTimestamp    int64             `json:"lastConsumedFlowTimestamp"`
	Address                      string            `json:"address"`
	ConnectedSince               string            `json:"connectedSince"`
	ClientVersion                string            `json:"clientVersion"`
	Metadata                     map[string]string `json:"metadata"`
	SchemaType                   string            `json:"schemaType,omitempty"`
	// A Key_Shared consumer's hash ranges, in upstream 4's form and in its
	// classic form ("[start, end]"; 3.x brokers report only this one).
	KeyHashRangeArrays [][2]int32 `json:"keyHashRangeArrays,omitempty"`
	KeyHashRanges      []string   `json:"keyHashRanges,omitempty"`
}

// PartitionedTopicStats is upstream's PartitionedTopicStats JSON: the aggregate of the
// partitions, their count, and each partition's stats when asked.
type PartitionedTopicStats struct {
	TopicStats
	Metadata   PartitionedTopicMetadata `json:"metadata"`
	Partitions map[string]TopicStats    `json:"partitions"`
}

// PartitionedTopicMetadata is upstream's PartitionedTopicMetadata: a partitioned topic's
// partition count (0: not partitioned) and, when it is created, its properties.
type PartitionedTopicMetadata struct {
	Partitions int               `json:"partitions"`
	Properties map[string]string `json:"properties,omitempty"`
}
