package data

// The admin API's JSON, as upstream's TopicStats and friends spell it. Only the fields the
// screens show are decoded; schemaType is letterbox's extension to consumer stats (absent on
// upstream brokers).

type topicStats struct {
	MsgRateIn        float64                      `json:"msgRateIn"`
	MsgRateOut       float64                      `json:"msgRateOut"`
	MsgThroughputIn  float64                      `json:"msgThroughputIn"`
	MsgThroughputOut float64                      `json:"msgThroughputOut"`
	StorageSize      int64                        `json:"storageSize"`
	BacklogSize      int64                        `json:"backlogSize"`
	MsgInCounter     int64                        `json:"msgInCounter"`
	Publishers       []publisherStats             `json:"publishers"`
	Subscriptions    map[string]subscriptionStats `json:"subscriptions"`
	Partitions       map[string]topicStats        `json:"partitions"`
}

type publisherStats struct {
	ProducerName string  `json:"producerName"`
	Address      string  `json:"address"`
	MsgRateIn    float64 `json:"msgRateIn"`
}

type subscriptionStats struct {
	Type             string          `json:"type"`
	MsgBacklog       int64           `json:"msgBacklog"`
	MsgRateOut       float64         `json:"msgRateOut"`
	MsgRateRedeliver float64         `json:"msgRateRedeliver"`
	UnackedMessages  int64           `json:"unackedMessages"`
	Consumers        []consumerStats `json:"consumers"`
}

type consumerStats struct {
	ConsumerName     string  `json:"consumerName"`
	Address          string  `json:"address"`
	AvailablePermits int     `json:"availablePermits"`
	UnackedMessages  int     `json:"unackedMessages"`
	MsgRateOut       float64 `json:"msgRateOut"`
	ConnectedSince   string  `json:"connectedSince"`
	SchemaType       string  `json:"schemaType"`
}

func (ts topicStats) stats() Stats {
	s := Stats{RateIn: ts.MsgRateIn, RateOut: ts.MsgRateOut, ThroughputIn: ts.MsgThroughputIn,
		ThroughputOut: ts.MsgThroughputOut, InCounter: ts.MsgInCounter, Storage: ts.StorageSize, BacklogSize: ts.BacklogSize,
		Subscriptions: len(ts.Subscriptions), Producers: len(ts.Publishers)}
	for _, sub := range ts.Subscriptions {
		s.Backlog += sub.MsgBacklog
		s.Consumers += len(sub.Consumers)
	}
	return s
}
