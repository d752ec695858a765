package client

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// SubscriptionType is how a subscription shares messages among its consumers.
type SubscriptionType int

const (
	Exclusive = SubscriptionType(pb.CommandSubscribe_Exclusive)
	Shared    = SubscriptionType(pb.CommandSubscribe_Shared)
	Failover  = SubscriptionType(pb.CommandSubscribe_Failover)
	KeyShared = SubscriptionType(pb.CommandSubscribe_Key_Shared)
)

// InitialPosition is where a new subscription starts.
type InitialPosition int

const (
	Latest   = InitialPosition(pb.CommandSubscribe_Latest)
	Earliest = InitialPosition(pb.CommandSubscribe_Earliest)
)

// DLQPolicy routes messages that failed too often to a dead-letter topic, with the topic
// names, producer names and message properties of the official Go client.
type DLQPolicy struct {
	// MaxDeliveries: a message redelivered this many times goes to the DLQ instead of the
	// application (which sees redelivery counts 0..MaxDeliveries-1). Also the limit on
	// ReconsumeLater hops. Default 16 with RetryEnable.
	MaxDeliveries uint32
	// DeadLetterTopic; with RetryEnable it defaults to <topic>-<subscription>-DLQ.
	DeadLetterTopic string
	// RetryLetterTopic; with RetryEnable it defaults to <topic>-<subscription>-RETRY.
	RetryLetterTopic string
	// DeadLetterProducerName overrides the generated DLQ producer name.
	DeadLetterProducerName string
	// InitialSubscriptionName is created on the DLQ topic (by its producer) so dead letters
	// are retained until someone reads them.
	InitialSubscriptionName string
	// ProducerOptions are used for the DLQ and retry producers (Topic, Name ignored);
	// compression defaults to LZ4 as upstream's.
	ProducerOptions ProducerOptions
}

// KeySharedPolicy configures a Key_Shared consumer.
type KeySharedPolicy struct {
	// Sticky uses HashRanges (inclusive, within 0..65535); otherwise AUTO_SPLIT.
	Sticky     bool
	HashRanges [][2]int32
	// AllowOutOfOrderDelivery relaxes ordering when consumers join.
	AllowOutOfOrderDelivery bool
}

// ConsumerOptions configure a Consumer. One of Topic, Topics or TopicsPattern is required,
// and SubscriptionName.
type ConsumerOptions struct {
	Topic  string
	Topics []string
	// TopicsPattern subscribes to every persistent topic of one namespace whose full name
	// matches this regular expression (e.g. "persistent://public/default/orders-.*"),
	// re-checked every AutoDiscoveryPeriod (default 1 min).
	TopicsPattern       string
	AutoDiscoveryPeriod time.Duration

	SubscriptionName string
	Type             SubscriptionType
	// Name is the consumer name; random when empty.
	Name            string
	InitialPosition InitialPosition
	// ReceiverQueueSize is the number of messages prefetched per partition (FLOW permits).
	// Default 1000.
	ReceiverQueueSize int
	// ReceiverQueueBytes, when positive, also bounds the prefetch by payload bytes, per
	// partition: the consumer starts with a window of 1/64 of ReceiverQueueSize, then keeps
	// as many permits at the broker as this holds of messages of the average size seen (at
	// most ReceiverQueueSize), and holds its FLOW while more than half of this is queued.
	// Small messages then prefetch as many as ReceiverQueueSize allows, large ones about as
	// many as fit.
	ReceiverQueueBytes int64
	// AckGroupingTime batches acknowledgements for up to this long (default 100ms);
	// negative sends each ack at once. AckGroupingMaxSize flushes earlier (default 1000).
	AckGroupingTime    time.Duration
	AckGroupingMaxSize int
	// EnableBatchIndexAck acknowledges single messages of a batch on the broker (ack_set);
	// otherwise a batch is acknowledged once all of its messages are.
	EnableBatchIndexAck bool
	// NackRedeliveryDelay is how long a negatively acknowledged message waits before the
	// broker is asked to redeliver it. Default 1 min.
	NackRedeliveryDelay time.Duration

	DLQ *DLQPolicy
	// RetryEnable subscribes to the retry topic too and enables ReconsumeLater.
	RetryEnable bool

	// Schema decodes messages (Message.Decode/DecodeGeneric); AutoConsumeSchema follows the
	// writer's schema.
	Schema                     Schema
	Properties                 map[string]string
	SubscriptionProperties     map[string]string
	ReadCompacted              bool
	ReplicateSubscriptionState bool
	PriorityLevel              int32
	KeySharedPolicy            *KeySharedPolicy
	// TopicPurpose is sent as topic_purpose on SUBSCRIBE (see the TopicPurpose constants).
	TopicPurpose string

	// Set by readers.
	nonDurable     bool
	startID        MessageID
	startInclusive bool
}

func (o *ConsumerOptions) setDefaults() {
	if o.ReceiverQueueSize <= 0 {
		o.ReceiverQueueSize = 1000
	}
	if o.AckGroupingTime == 0 {
		o.AckGroupingTime = 100 * time.Millisecond
	}
	if o.AckGroupingMaxSize <= 0 {
		o.AckGroupingMaxSize = 1000
	}
	if o.NackRedeliveryDelay <= 0 {
		o.NackRedeliveryDelay = time.Minute
	}
	if o.AutoDiscoveryPeriod <= 0 {
		o.AutoDiscoveryPeriod = time.Minute
	}
}
