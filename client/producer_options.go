package client

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// ProducerAccessMode is how a producer shares its topic with others.
type ProducerAccessMode int

const (
	AccessShared               = ProducerAccessMode(pb.ProducerAccessMode_Shared)
	AccessExclusive            = ProducerAccessMode(pb.ProducerAccessMode_Exclusive)
	AccessWaitForExclusive     = ProducerAccessMode(pb.ProducerAccessMode_WaitForExclusive)
	AccessExclusiveWithFencing = ProducerAccessMode(pb.ProducerAccessMode_ExclusiveWithFencing)
)

// HashingScheme picks the partition of a keyed message.
type HashingScheme int

const (
	// JavaStringHash is the default of upstream's clients. It is computed as the official Go
	// client computes it (over the key's UTF-8 bytes, unsigned modulo), so a key lands on the
	// same partition from that client and from this one.
	JavaStringHash HashingScheme = iota
	// Murmur3_32Hash is Murmur3 x86_32 (seed 0) with the sign bit cleared.
	Murmur3_32Hash
)

// Topic purposes carried in CommandProducer/CommandSubscribe.topic_purpose (an extension
// field a real Pulsar ignores): the broker marks auto-created DLQ/retry topics with it.
const (
	TopicPurposeStandard    = naming.PurposeStandard
	TopicPurposeDeadLetter  = naming.PurposeDeadLetter
	TopicPurposeRetryLetter = naming.PurposeRetryLetter
)

// ProducerOptions configure a Producer. Only Topic is required.
type ProducerOptions struct {
	Topic string
	// Name is the producer name (unique per topic); the broker generates one when empty.
	Name       string
	Properties map[string]string
	// SendTimeout fails a message not receipted within it; default 30s, negative disables.
	SendTimeout time.Duration
	// MaxPendingMessages bounds messages sent but not yet receipted; SendAsync blocks
	// (honouring its ctx) beyond it. Default 1000.
	MaxPendingMessages int

	DisableBatching         bool
	BatchingMaxMessages     int           // default 1000
	BatchingMaxSize         int           // bytes, default 128 KiB
	BatchingMaxPublishDelay time.Duration // default 10ms

	Compression Compression

	HashingScheme HashingScheme
	// Router, when set, picks the partition of each message instead of the default (key
	// hash, else round robin).
	Router func(msg *Message, numPartitions int) int

	AccessMode ProducerAccessMode
	// InitialSubscriptionName asks the broker to create this subscription (at Earliest) if
	// the topic has none by that name, so nothing published is lost before a consumer comes.
	InitialSubscriptionName string
	// TopicPurpose is sent as topic_purpose: TopicPurposeStandard, TopicPurposeDeadLetter or
	// TopicPurposeRetryLetter. Empty sends nothing.
	TopicPurpose string

	// Schema encodes Message.Value and is registered with the broker; nil sends bytes.
	Schema Schema
}

func (o *ProducerOptions) setDefaults() {
	if o.SendTimeout == 0 {
		o.SendTimeout = 30 * time.Second
	}
	if o.MaxPendingMessages <= 0 {
		o.MaxPendingMessages = 1000
	}
	if o.BatchingMaxMessages <= 0 {
		o.BatchingMaxMessages = 1000
	}
	if o.BatchingMaxSize <= 0 {
		o.BatchingMaxSize = 128 << 10
	}
	if o.BatchingMaxPublishDelay <= 0 {
		o.BatchingMaxPublishDelay = 10 * time.Millisecond
	}
}
