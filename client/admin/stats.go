package admin

import (
	"context"
	"net/url"
	"strconv"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Topic stats: a topic's, a partitioned topic's, every topic's of a broker at once, and the
// storage-level internal stats.

// Stats returns a non-partitioned topic's (or a partition's) stats.
func (c *Client) Stats(ctx context.Context, topic string) (adminapi.TopicStats, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.TopicStats{}, err
	}
	var out adminapi.TopicStats
	_, err = c.call(ctx, request{method: "GET", path: topicPath(t, "stats")}, &out)
	return out, err
}

// PartitionedStats returns a partitioned topic's stats, per partition when perPartition.
func (c *Client) PartitionedStats(ctx context.Context, topic string, perPartition bool) (adminapi.PartitionedTopicStats, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.PartitionedTopicStats{}, err
	}
	var out adminapi.PartitionedTopicStats
	_, err = c.call(ctx, request{method: "GET", path: topicPath(t, "partitioned-stats"),
		query: url.Values{"perPartition": {strconv.FormatBool(perPartition)}}}, &out)
	return out, err
}

// BrokerTopicStats returns every topic's stats in one call (upstream's broker-stats/topics),
// flattened to topic name → stats.
func (c *Client) BrokerTopicStats(ctx context.Context) (map[string]adminapi.TopicStats, error) {
	var raw map[string]map[string]map[string]map[string]adminapi.TopicStats
	if _, err := c.call(ctx, request{method: "GET", path: path("broker-stats", "topics")}, &raw); err != nil {
		return nil, err
	}
	out := map[string]adminapi.TopicStats{}
	for _, bundles := range raw {
		for _, domains := range bundles {
			for _, topics := range domains {
				for name, st := range topics {
					out[name] = st
				}
			}
		}
	}
	return out, nil
}

// InternalStats returns a non-partitioned topic's (or a partition's) storage-level stats:
// ledgers and the cursor of each subscription.
func (c *Client) InternalStats(ctx context.Context, topic string) (adminapi.InternalStats, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.InternalStats{}, err
	}
	var out adminapi.InternalStats
	_, err = c.call(ctx, request{method: "GET", path: topicPath(t, "internalStats")}, &out)
	return out, err
}
