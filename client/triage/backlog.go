package triage

import (
	"context"
	"fmt"
	"slices"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Backlog is one subscription's backlog as the broker counts it: in entries always (upstream's
// msgBacklog, where a batch of a hundred letters is one), and in letters where the broker
// says (letterbox's msgBacklogMessages, docs/protocol.md).
type Backlog struct {
	Subscription string
	Entries      int64
	// Letters counts the backlog's letters, each message of a batch one, when LettersKnown;
	// a broker that does not count them leaves it to a read (Scan).
	Letters      int64
	LettersKnown bool
}

// BacklogOf is the backlog of sub in a topic's stats (a partitioned topic's, summed over its
// partitions by the broker).
func BacklogOf(st adminapi.TopicStats, sub string) Backlog {
	ss := st.Subscriptions[sub]
	b := Backlog{Subscription: sub, Entries: ss.MsgBacklog}
	if ss.MsgBacklogMessages != nil {
		b.Letters, b.LettersKnown = *ss.MsgBacklogMessages, true
	}
	return b
}

// ReadBacklog reads sub's backlog on topic (a partitioned topic's summed over its partitions).
func ReadBacklog(ctx context.Context, ad *admin.Client, topic, sub string) (Backlog, error) {
	st, err := TopicStats(ctx, ad, topic)
	if err != nil {
		return Backlog{}, err
	}
	if _, ok := st.Subscriptions[sub]; !ok {
		return Backlog{}, fmt.Errorf("%s: %w %s", topic, ErrNoSubscription, sub)
	}
	return BacklogOf(st, sub), nil
}

// TopicStats reads a topic's stats, a partitioned topic's aggregated over its partitions.
func TopicStats(ctx context.Context, ad *admin.Client, topic string) (adminapi.TopicStats, error) {
	parts, err := ad.Partitions(ctx, topic)
	if err != nil && !admin.IsNotFound(err) {
		return adminapi.TopicStats{}, fmt.Errorf("%s: %w", topic, gone(err))
	}
	if parts > 0 {
		ps, err := ad.PartitionedStats(ctx, topic, false)
		if err != nil {
			return adminapi.TopicStats{}, fmt.Errorf("%s: %w", topic, gone(err))
		}
		return ps.TopicStats, nil
	}
	st, err := ad.Stats(ctx, topic)
	if err != nil {
		return adminapi.TopicStats{}, fmt.Errorf("%s: %w", topic, gone(err))
	}
	return st, nil
}

// Subscriptions are a topic's subscriptions that are not letterbox's own readers' (naming.
// IsOwn), sorted by name; durable ones only when durable.
func Subscriptions(st adminapi.TopicStats, durable bool) []string {
	var out []string
	for name, s := range st.Subscriptions {
		if !naming.IsOwn(name) && (s.IsDurable || !durable) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// MainSubscription is the subscription whose letters a DLQ's counts and reads are for unless
// one is chosen: its only durable subscription (letterbox's own readers aside), normally the
// initial one its dead-letter router created; among several, the one with the largest backlog
// (in letters where the broker counts them), then the first by name. "" when it has none.
func MainSubscription(st adminapi.TopicStats) string {
	best := ""
	var bestN int64 = -1
	for _, name := range Subscriptions(st, true) {
		b := BacklogOf(st, name)
		n := b.Entries
		if b.LettersKnown {
			n = b.Letters
		}
		if n > bestN {
			best, bestN = name, n
		}
	}
	return best
}
