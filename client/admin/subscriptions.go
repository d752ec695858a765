package admin

import (
	"context"
	"strconv"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// A topic's subscriptions: listing, creating, deleting, skipping, clearing, expiring and
// resetting the cursor.

// Subscriptions lists a topic's subscriptions.
func (c *Client) Subscriptions(ctx context.Context, topic string) ([]string, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	out := []string{}
	_, err = c.call(ctx, request{method: "GET", path: topicPath(t, "subscriptions")}, &out)
	return out, err
}

func (c *Client) subCall(ctx context.Context, method, topic, sub string, body any, more ...string) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: method, path: topicPath(t, append([]string{"subscription", esc(sub)}, more...)...), body: body}, nil)
	return err
}

// CreateSubscription creates a durable subscription starting at id (Earliest, Latest or a
// message id).
func (c *Client) CreateSubscription(ctx context.Context, topic, sub string, id adminapi.MessageID) error {
	return c.subCall(ctx, "PUT", topic, sub, entryOf(id))
}

// DeleteSubscription deletes a subscription (force: closing its consumers).
func (c *Client) DeleteSubscription(ctx context.Context, topic, sub string, force bool) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: topicPath(t, "subscription", esc(sub)), query: forceQ(force)}, nil)
	return err
}

// SkipMessages skips the next n entries of a subscription.
func (c *Client) SkipMessages(ctx context.Context, topic, sub string, n int64) error {
	return c.subCall(ctx, "POST", topic, sub, nil, "skip", strconv.FormatInt(n, 10))
}

// ClearBacklog acknowledges everything in a subscription.
func (c *Client) ClearBacklog(ctx context.Context, topic, sub string) error {
	return c.subCall(ctx, "POST", topic, sub, nil, "skip_all")
}

// ExpireMessages acknowledges messages older than seconds.
func (c *Client) ExpireMessages(ctx context.Context, topic, sub string, seconds int64) error {
	return c.subCall(ctx, "POST", topic, sub, nil, "expireMessages", strconv.FormatInt(seconds, 10))
}

// ResetCursorToTime moves a subscription to the first message published at or after ms.
func (c *Client) ResetCursorToTime(ctx context.Context, topic, sub string, ms int64) error {
	return c.subCall(ctx, "POST", topic, sub, nil, "resetcursor", strconv.FormatInt(ms, 10))
}

// ResetCursorToID moves a subscription so that id is the next message delivered.
func (c *Client) ResetCursorToID(ctx context.Context, topic, sub string, id adminapi.MessageID) error {
	return c.subCall(ctx, "POST", topic, sub, entryOf(id), "resetcursor")
}

// entryOf is the id of the entry that holds id: the client positions cursors on whole entries,
// and a batch index would move a real cluster's cursor inside the batch.
func entryOf(id adminapi.MessageID) adminapi.MessageID {
	id.BatchIndex = 0 // omitted from the JSON
	return id
}

// ExpireAllSubscriptions acknowledges, on every subscription of a topic, the messages older
// than seconds.
func (c *Client) ExpireAllSubscriptions(ctx context.Context, topic string, seconds int64) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: topicPath(t, "all_subscription", "expireMessages", strconv.FormatInt(seconds, 10))}, nil)
	return err
}
