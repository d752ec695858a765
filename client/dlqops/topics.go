package dlqops

import (
	"context"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// What a topic's stats say of it as a DLQ: its subscriptions, the one its letters are counted
// for, its backlog; and which topics are DLQs at all (a Finder).

// NewFinder returns a Finder that tells, through ad, which topics the DLQ rule calls
// dead-letter or retry topics.
func NewFinder(ad *admin.Client) *Finder { return triage.NewFinder(ad) }

// Subscriptions are a topic's subscriptions that are not letterbox's own readers', sorted by
// name; durable ones only when durable.
func Subscriptions(st adminapi.TopicStats, durable bool) []string {
	return triage.Subscriptions(st, durable)
}

// MainSubscription is the subscription whose letters a DLQ's counts and reads are for unless
// one is chosen ("" when it has none).
func MainSubscription(st adminapi.TopicStats) string { return triage.MainSubscription(st) }

// BacklogOf is the backlog of sub in a topic's stats.
func BacklogOf(st adminapi.TopicStats, sub string) Backlog { return triage.BacklogOf(st, sub) }

// TopicStats reads a topic's stats, a partitioned topic's aggregated over its partitions.
func TopicStats(ctx context.Context, ad *admin.Client, topic string) (adminapi.TopicStats, error) {
	return triage.TopicStats(ctx, ad, topic)
}
