// Package data is what the TUI's screens know about a Pulsar cluster: plain structs and the
// Source interface that fills them. Screens never speak HTTP or the binary protocol; they call a
// Source from a tea.Cmd with a deadline. Admin (NewAdmin) is the Source of a real cluster or the
// embedded broker: topics, stats and peeks through client/admin, with its errors worded for the
// screens; tail and produce through client; what a topic is for, whole-DLQ reads, replays,
// purges and retention through client/dlqops, as the command line's. The tests' Source is
// datatest's fake, over fixed snapshots.
package data

import (
	"context"
	"time"
)

// Source is everything the screens read or write.
type Source interface {
	// Endpoint names where the data comes from, for the header (an admin URL, "fake", …).
	Endpoint() string
	// Service is the service URL applications connect to, "" when not known.
	Service() string
	// Namespaces lists every namespace as "tenant/namespace", sorted.
	Namespaces(ctx context.Context) ([]string, error)
	// Topics lists the topics of a namespace ("tenant/ns"), or of every namespace when ns is "".
	// Rows carry stats when the source has them cheaply (StatsKnown); partitions of a
	// partitioned topic come as their own rows with Parent set.
	Topics(ctx context.Context, ns string) ([]TopicRow, error)
	// RowDetails is the stats and verdicts of some topics of the last listing, by full name:
	// for the rows on screen that the listing gave without stats. Topics it could not read
	// are left out.
	RowDetails(ctx context.Context, topics []string) (map[string]TopicRow, error)
	// TopicDetail is one topic's stats, subscriptions and consumers.
	TopicDetail(ctx context.Context, topic string) (*TopicDetail, error)
	// Schema is the topic's latest schema, or nil when it has none.
	Schema(ctx context.Context, topic string) (*SchemaInfo, error)
	// Peek returns up to n messages of sub's backlog starting at position from (1-based), without
	// consuming them. On a partitioned topic the positions run across partitions in order.
	Peek(ctx context.Context, topic, sub string, from, n int) ([]Message, error)
	// Tail follows topic from now on with a non-durable reader until stop is called; the channel
	// is closed after stop, or after an event that says why the tail ended (the reader failed:
	// the topic deleted, the cluster gone).
	Tail(ctx context.Context, topic string) (events <-chan TailEvent, stop func(), err error)
	// Produce sends one message and returns its message id.
	Produce(ctx context.Context, topic string, req ProduceRequest) (string, error)
	// Verdict is what a topic is for (client/deadletter's rule: purpose property, name,
	// newest message), as the topic rows carry it.
	Verdict(ctx context.Context, topic string) (Verdict, error)
}

// Kind tells ordinary topics from the retry and dead-letter topics that clients derive from them.
type Kind int

const (
	KindTopic Kind = iota
	KindRetry
	KindDLQ
)

func (k Kind) String() string {
	switch k {
	case KindRetry:
		return "RETRY"
	case KindDLQ:
		return "DLQ"
	}
	return ""
}

// Stats are a topic's rates and sizes, summed over partitions for a partitioned topic: what
// the screens show of them, no more, as every topic row of a large cluster carries them.
// letterbox's own readers (naming.IsOwn) are none of its subscriptions or consumers.
type Stats struct {
	RateIn, RateOut float64 // msg/s
	// Backlog is the messages of the subscriptions' backlogs, summed; entries where the broker
	// counts no messages (BacklogEntriesOnly).
	Backlog            int64
	BacklogEntriesOnly bool
	// Main is the backlog of the subscription a DLQ's counts are for (dlqops.MainSubscription:
	// its only durable one, else the one with the largest backlog); Sub "" without one.
	Main          Backlog
	InCounter     int64 // messages published since the broker loaded the topic
	Storage       int64 // bytes
	Subscriptions int
	Producers     int
	Consumers     int
}

// Verdict is what a topic is for, and where its letters come from: Kind, and for a DLQ or
// retry topic the topic and subscription its letters died on ("" when unknown), and what the
// verdict rests on ("purpose property", "name", "newest message").
type Verdict struct {
	Kind              Kind
	Origin, OriginSub string
	By                string
}

// TopicRow is one line of the topics screen.
type TopicRow struct {
	Name      string // full name, persistent://tenant/ns/local
	Namespace string // tenant/ns
	Local     string // the part after the namespace
	// Verdict is the topic's (a partition's row carries its partitioned topic's).
	Verdict
	Partitions int    // > 0 on a partitioned topic's own row
	Parent     string // on a partition's row: the partitioned topic's full name
	StatsKnown bool
	// StatsStale is set when the broker that owns the topic did not answer: Stats are the
	// last ones known (StatsKnown false when none), and StaleBroker names that broker.
	StatsStale  bool
	StaleBroker string
	Stats
}

// Letters is the row's backlog as its screens count it: for a DLQ, its main subscription's
// letters (Stats.Main); for another topic, or a DLQ whose stats name no subscription, every
// subscription's summed.
func (r TopicRow) Letters() Backlog {
	if r.Kind == KindDLQ && r.Main.Sub != "" {
		return r.Main
	}
	return Backlog{N: r.Backlog, EntriesOnly: r.BacklogEntriesOnly}
}

// TopicDetail is the topic screen's data.
type TopicDetail struct {
	Name string
	// Verdict is what the topic is for (its Kind is KindTopic when the source cannot tell);
	// VerdictKnown says the source could tell.
	Verdict       Verdict
	VerdictKnown  bool
	Partitions    int
	Stats         Stats
	Subscriptions []Subscription
	Producers     []Producer
	// SchemaTypesReported is false when no consumer carries a schema type (an upstream broker
	// that does not record them): the screen says so instead of guessing.
	SchemaTypesReported bool
}

// Subscription is one subscription of a topic. letterbox's own readers' are not listed.
type Subscription struct {
	Name string
	Type string // Exclusive, Shared, Failover, Key_Shared
	// Backlog is in messages (letters: each message of a batch one) where the broker counts
	// them, else in entries (EntriesOnly); Entries is always the entries.
	Backlog       int64
	EntriesOnly   bool
	Entries       int64
	NonDurable    bool // a reader's
	RateOut       float64
	RateRedeliver float64
	Unacked       int64
	Consumers     []Consumer
}

// Consumer is one consumer of a subscription.
type Consumer struct {
	Name           string
	Address        string
	Permits        int
	Unacked        int
	RateOut        float64
	ConnectedSince string
	// SchemaType is the schema the consumer subscribed with (JSON, AVRO, AUTO_CONSUME, …), or ""
	// when the broker does not report it.
	SchemaType string
	// Partition is the partition of a partitioned topic this consumer reads (-1: the topic is
	// not partitioned, or the stats do not say).
	Partition int
}

// Producer is one producer of a topic.
type Producer struct {
	Name    string
	Address string
	RateIn  float64
}

// SchemaInfo is a topic's schema.
type SchemaInfo struct {
	Type       string
	Version    int64
	Definition string // as stored: JSON for AVRO/JSON/PROTOBUF schemas, often empty otherwise
	Properties map[string]string
}

// Message is one peeked or tailed message.
type Message struct {
	ID          string
	Topic       string // the partition it came from, when partitioned
	Key         string
	Properties  map[string]string
	EventTime   time.Time // zero when unset
	PublishTime time.Time
	Payload     []byte
	// ProducerName is the name of the producer that published it ("" when not known).
	ProducerName string
	// Acked: the subscription a read showed it for acknowledged it; it is shown only when
	// acknowledged letters were asked for (View.IncludeAcked).
	Acked bool
	// Redeliveries is the broker's redelivery count; RedeliveriesKnown is false for peeked
	// messages, where upstream carries none.
	Redeliveries      int
	RedeliveriesKnown bool
	Position          int // 1-based position in the peek, 0 when tailed
	// Unreadable says why the entry at Position could not be read ("" when it was): the
	// cluster answered about it, but with nothing letterbox can read (a header holding a
	// control character, an entry that does not decode). Only Position and Topic are set; the
	// letters around it are read as usual.
	Unreadable string
}

// ReconsumeTimes is the RECONSUMETIMES property the retry letter topic logic sets, and whether
// the message has one.
func (m Message) ReconsumeTimes() (string, bool) {
	v, ok := m.Properties["RECONSUMETIMES"]
	return v, ok
}

// TailEvent is one event of a tail: a message, or — the last one — why it ended (Err set).
type TailEvent struct {
	Msg Message
	Err error
	// Link, when set, is news of the tail's connection instead of a message: LinkLost when
	// its broker went away (the reader reconnects by itself), LinkBack when it is connected
	// again and reads on from where it was.
	Link Link
}

// Link is a change of a tail's connection to its broker.
type Link int

const (
	LinkNone Link = iota
	LinkLost
	LinkBack
)

// ProduceRequest is a test message to send.
type ProduceRequest struct {
	Key        string
	Properties map[string]string
	Payload    []byte
	Delay      time.Duration // deliver after; 0 for now
}

// BacklogOf is the subscription's backlog as the screens show it.
func (s Subscription) BacklogOf() Backlog {
	return Backlog{Sub: s.Name, N: s.Backlog, EntriesOnly: s.EntriesOnly}
}
