package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire"
)

// Reading messages without consuming them: peek at a subscription's backlog, examine a
// topic's, get one by id; the answers' headers decoded into Message.

// Peek returns up to n messages of a subscription's backlog without consuming them (entries
// counted from the first unacknowledged; a batch yields all its messages). Asking for more
// than the backlog holds returns what there is.
func (c *Client) Peek(ctx context.Context, topic, sub string, n int) ([]Message, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	var out []Message
	for pos := 1; len(out) < n; pos++ {
		msgs, err := c.entry(ctx, t, topicPath(t, "subscription", esc(sub), "position", strconv.Itoa(pos)))
		if IsNotFound(err) && pos > 1 {
			break // the end of the backlog
		}
		if err != nil {
			return out, err
		}
		out = append(out, msgs...)
	}
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// PeekAt returns the messages of the entry at position pos (1 is the first unacknowledged) of a
// subscription's backlog, without consuming it: one message, or a batch's messages. Past the
// end of the backlog the server answers 404 (IsNotFound), as it does for a missing topic.
// A subscription that does not exist is created at the earliest position by the broker (as
// upstream's; 412 when automatic subscription creation is off): look first to only read.
func (c *Client) PeekAt(ctx context.Context, topic, sub string, pos int) ([]Message, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	if pos < 1 {
		return nil, fmt.Errorf("admin: peek position %d: positions start at 1", pos)
	}
	return c.entry(ctx, t, topicPath(t, "subscription", esc(sub), "position", strconv.Itoa(pos)))
}

// MessagesByID returns the messages of the entry ledger:entry.
func (c *Client) MessagesByID(ctx context.Context, topic string, ledger, entry int64) ([]Message, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	return c.entry(ctx, t, topicPath(t, "ledger", strconv.FormatInt(ledger, 10), "entry", strconv.FormatInt(entry, 10)))
}

// entry fetches one entry and splits a batch into its messages.
func (c *Client) entry(ctx context.Context, t naming.Topic, p []string) ([]Message, error) {
	return c.entryAt(ctx, t, request{method: "GET", path: p})
}

// entryAt is entry for a request that also carries a query.
func (c *Client) entryAt(ctx context.Context, t naming.Topic, r request) ([]Message, error) {
	resp, cancel, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("admin: read message: %w", err)
	}
	id, err := parseHeaderID(resp.Header.Get("X-Pulsar-Message-ID"))
	if err != nil {
		return nil, err
	}
	id.PartitionIndex = t.Partition
	headers := map[string]string{}
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-pulsar-") {
			headers[k] = resp.Header.Get(k)
		}
	}
	props := map[string]string{}
	if js := resp.Header.Get("X-Pulsar-PROPERTY"); js != "" {
		json.Unmarshal([]byte(js), &props)
	} else {
		// Older brokers: one header per property, whose case HTTP does not keep; the names the
		// retry and DLQ flows use are upper case.
		for k := range resp.Header {
			if name, ok := strings.CutPrefix(k, "X-Pulsar-Property-"); ok {
				if up := strings.ToUpper(name); upperProperties[up] {
					name = up
				}
				props[name] = resp.Header.Get(k)
			}
		}
	}
	base := Message{Topic: t.String(), ID: id, Properties: props, PublishTime: resp.Header.Get("X-Pulsar-publish-time"),
		Key: headerKey(resp.Header), EventTime: resp.Header.Get("X-Pulsar-event-time"), Headers: headers}
	nb := resp.Header.Get("X-Pulsar-num-batch-message")
	if nb == "" {
		base.ID.BatchIndex = -1
		base.Payload = body
		return []Message{base}, nil
	}
	count, err := strconv.Atoi(nb)
	if err != nil || count < 0 {
		return nil, fmt.Errorf("admin: bad X-Pulsar-num-batch-message %q", nb)
	}
	parts, err := wire.ParseBatch(body, count)
	if err != nil {
		return nil, fmt.Errorf("admin: message %d:%d: %w", id.LedgerID, id.EntryID, err)
	}
	out := make([]Message, len(parts))
	for i, bm := range parts {
		m := base
		m.ID.BatchIndex = i
		m.Payload = bm.Payload
		m.Key = bm.Meta.GetPartitionKey()
		m.EventTime = ""
		if et := bm.Meta.GetEventTime(); et > 0 {
			m.EventTime = time.UnixMilli(int64(et)).UTC().Format(headerTime)
		}
		m.Properties = map[string]string{}
		for k, v := range props {
			m.Properties[k] = v
		}
		for _, kv := range bm.Meta.GetProperties() {
			m.Properties[kv.GetKey()] = kv.GetValue()
		}
		out[i] = m
	}
	return out, nil
}

// headerKey is the message's key: X-Pulsar-partition-key, unless the letterbox broker had to
// make that readable (a key holding control characters) and sent the exact key in base64
// beside it (docs/protocol.md).
func headerKey(h http.Header) string {
	if b64 := h.Get("X-Pulsar-Base64-partition-key"); b64 != "" {
		if key, err := base64.StdEncoding.DecodeString(b64); err == nil {
			return string(key)
		}
	}
	return h.Get("X-Pulsar-partition-key")
}

// headerTime is how upstream formats times in X-Pulsar-* headers.
const headerTime = "2006-01-02T15:04:05.000Z"

// upperProperties are the upper-case property names of the retry and DLQ flows.
var upperProperties = map[string]bool{"RECONSUMETIMES": true, "REAL_TOPIC": true, "ORIGIN_MESSAGE_ID": true,
	"ORIGIN_MESSAGE_IDY_TIME": true, "DELAY_TIME": true, "RETRY_TOPIC": true, "EXCEPTION": true}

func parseHeaderID(s string) (adminapi.MessageID, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 {
		return adminapi.MessageID{}, fmt.Errorf("admin: bad X-Pulsar-Message-ID %q", s)
	}
	l, err1 := strconv.ParseInt(parts[0], 10, 64)
	e, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return adminapi.MessageID{}, fmt.Errorf("admin: bad X-Pulsar-Message-ID %q", s)
	}
	return adminapi.MessageID{LedgerID: l, EntryID: e}, nil
}

// ExamineMessage returns the messages of the entry at position pos (from 1) of a topic,
// counted from its oldest entry (fromLatest false) or its newest (fromLatest true),
// regardless of subscriptions: one message, or a batch's messages.
func (c *Client) ExamineMessage(ctx context.Context, topic string, fromLatest bool, pos int64) ([]Message, error) {
	t, err := ParseTopic(topic)
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
	return c.entryAt(ctx, t, request{method: "GET", path: topicPath(t, "examinemessage"), query: q})
}
