package admin

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
)

// Topic operations beyond create, list and delete: properties removal, message ids by time,
// terminate, unload, compaction, storage-level stats, expiry on every subscription and
// examining a message by its position in the topic.

// RemoveTopicProperty deletes one property of a topic.
func (c *Client) RemoveTopicProperty(ctx context.Context, topic, key string) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: t.path("properties"), query: url.Values{"key": {key}}}, nil)
	return err
}

// MessageIDByTime returns the id of the first message published at or after ms (Unix
// milliseconds). Upstream answers 404 when there is none.
func (c *Client) MessageIDByTime(ctx context.Context, topic string, ms int64) (MessageID, error) {
	t, err := topicOf(topic)
	if err != nil {
		return MessageID{}, err
	}
	var out MessageID
	_, err = c.call(ctx, request{method: "GET", path: t.path("messageid", strconv.FormatInt(ms, 10))}, &out)
	return out, err
}

// TerminateTopic closes a topic to new messages for good and returns its last message's id.
// Producers are disconnected; consumers may still read what is there.
func (c *Client) TerminateTopic(ctx context.Context, topic string) (MessageID, error) {
	t, err := topicOf(topic)
	if err != nil {
		return MessageID{}, err
	}
	var out MessageID
	_, err = c.call(ctx, request{method: "POST", path: t.path("terminate")}, &out)
	return out, err
}

// UnloadTopic asks the owning broker to unload a topic (clients reconnect, possibly to
// another broker).
func (c *Client) UnloadTopic(ctx context.Context, topic string) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "PUT", path: t.path("unload")}, nil)
	return err
}

// CompactTopic triggers a compaction of a topic; it runs in the background on the broker.
func (c *Client) CompactTopic(ctx context.Context, topic string) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "PUT", path: t.path("compaction")}, nil)
	return err
}

// InternalStats returns a non-partitioned topic's (or a partition's) storage-level stats:
// ledgers and the cursor of each subscription.
func (c *Client) InternalStats(ctx context.Context, topic string) (InternalStats, error) {
	t, err := topicOf(topic)
	if err != nil {
		return InternalStats{}, err
	}
	var out InternalStats
	_, err = c.call(ctx, request{method: "GET", path: t.path("internalStats")}, &out)
	return out, err
}

// ExpireAllSubscriptions acknowledges, on every subscription of a topic, the messages older
// than seconds.
func (c *Client) ExpireAllSubscriptions(ctx context.Context, topic string, seconds int64) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: t.path("all_subscription", "expireMessages", strconv.FormatInt(seconds, 10))}, nil)
	return err
}

// ExamineMessage returns the messages of the entry at position pos (from 1) of a topic,
// counted from its oldest entry (fromLatest false) or its newest (fromLatest true),
// regardless of subscriptions: one message, or a batch's messages.
func (c *Client) ExamineMessage(ctx context.Context, topic string, fromLatest bool, pos int64) ([]Message, error) {
	t, err := topicOf(topic)
	if err != nil {
		return nil, err
	}
	if pos < 1 {
		return nil, fmt.Errorf("admin: examine position %d: positions start at 1", pos)
	}
	initial := "earliest"
	if fromLatest {
		initial = "latest"
	}
	q := url.Values{"initialPosition": {initial}, "messagePosition": {strconv.FormatInt(pos, 10)}}
	return c.entryAt(ctx, t, request{method: "GET", path: t.path("examinemessage"), query: q})
}
