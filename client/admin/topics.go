package admin

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Topics: listing a namespace's, creating, deleting, partitions, properties, the last
// message id and the id at a time, terminate, unload and compaction (upstream's Topics
// admin API).

// Topics lists a namespace's topics in one domain: non-partitioned topics and partitions.
func (c *Client) Topics(ctx context.Context, ns string, persistent bool) ([]string, error) {
	return c.topicList(ctx, ns, persistent, false)
}

// PartitionedTopics lists a namespace's partitioned topics (base names) in one domain.
func (c *Client) PartitionedTopics(ctx context.Context, ns string, persistent bool) ([]string, error) {
	return c.topicList(ctx, ns, persistent, true)
}

func (c *Client) topicList(ctx context.Context, ns string, persistent, partitioned bool) ([]string, error) {
	tenant, local, ok := strings.Cut(ns, "/")
	if !ok {
		return nil, fmt.Errorf("admin: invalid namespace %q", ns)
	}
	domain := "non-persistent"
	if persistent {
		domain = "persistent"
	}
	p := path(domain, esc(tenant), esc(local))
	if partitioned {
		p = append(p, "partitioned")
	}
	out := []string{}
	_, err := c.call(ctx, request{method: "GET", path: p}, &out)
	return out, err
}

// CreateTopic creates a non-partitioned topic (partitions == 0) or a partitioned one, with
// properties (may be nil).
func (c *Client) CreateTopic(ctx context.Context, topic string, partitions int, props map[string]string) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	if partitions == 0 {
		_, err = c.call(ctx, request{method: "PUT", path: topicPath(t), body: nullable(props)}, nil)
		return err
	}
	body := adminapi.PartitionedTopicMetadata{Partitions: partitions, Properties: props}
	_, err = c.call(ctx, request{method: "PUT", path: topicPath(t, "partitions"), body: body,
		contentType: "application/vnd.partitioned-topic-metadata+json"}, nil)
	return err
}

// DeleteTopic deletes a topic; partitioned says it is a partitioned topic (all partitions).
func (c *Client) DeleteTopic(ctx context.Context, topic string, partitioned, force bool) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	p := topicPath(t)
	if partitioned {
		p = topicPath(t, "partitions")
	}
	_, err = c.call(ctx, request{method: "DELETE", path: p, query: forceQ(force)}, nil)
	return err
}

// Partitions returns a topic's partition count (0: not partitioned).
func (c *Client) Partitions(ctx context.Context, topic string) (int, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return 0, err
	}
	var out adminapi.PartitionedTopicMetadata
	_, err = c.call(ctx, request{method: "GET", path: topicPath(t, "partitions")}, &out)
	return out.Partitions, err
}

// UpdatePartitions raises a partitioned topic's partition count.
func (c *Client) UpdatePartitions(ctx context.Context, topic string, n int) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: topicPath(t, "partitions"), body: n}, nil)
	return err
}

// TopicProperties returns a topic's properties.
func (c *Client) TopicProperties(ctx context.Context, topic string) (map[string]string, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	_, err = c.call(ctx, request{method: "GET", path: topicPath(t, "properties")}, &out)
	return out, err
}

// UpdateTopicProperties merges props into a topic's properties.
func (c *Client) UpdateTopicProperties(ctx context.Context, topic string, props map[string]string) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "PUT", path: topicPath(t, "properties"), body: props}, nil)
	return err
}

// LastMessageID returns the id of a topic's last message.
func (c *Client) LastMessageID(ctx context.Context, topic string) (adminapi.MessageID, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.MessageID{}, err
	}
	var out adminapi.MessageID
	_, err = c.call(ctx, request{method: "GET", path: topicPath(t, "lastMessageId")}, &out)
	return out, err
}

// RemoveTopicProperty deletes one property of a topic.
func (c *Client) RemoveTopicProperty(ctx context.Context, topic, key string) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: topicPath(t, "properties"), query: url.Values{"key": {key}}}, nil)
	return err
}

// MessageIDByTime returns the id of the first message published at or after ms (Unix
// milliseconds). Upstream answers 404 when there is none.
func (c *Client) MessageIDByTime(ctx context.Context, topic string, ms int64) (adminapi.MessageID, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.MessageID{}, err
	}
	var out adminapi.MessageID
	_, err = c.call(ctx, request{method: "GET", path: topicPath(t, "messageid", strconv.FormatInt(ms, 10))}, &out)
	return out, err
}

// TerminateTopic closes a topic to new messages for good and returns its last message's id.
// Producers are disconnected; consumers may still read what is there.
func (c *Client) TerminateTopic(ctx context.Context, topic string) (adminapi.MessageID, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.MessageID{}, err
	}
	var out adminapi.MessageID
	_, err = c.call(ctx, request{method: "POST", path: topicPath(t, "terminate")}, &out)
	return out, err
}

// UnloadTopic asks the owning broker to unload a topic (clients reconnect, possibly to
// another broker).
func (c *Client) UnloadTopic(ctx context.Context, topic string) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "PUT", path: topicPath(t, "unload")}, nil)
	return err
}

// CompactTopic triggers a compaction of a topic; it runs in the background on the broker.
func (c *Client) CompactTopic(ctx context.Context, topic string) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "PUT", path: topicPath(t, "compaction")}, nil)
	return err
}
