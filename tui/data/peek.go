package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/wire"
)

// Peek reads GET …/subscription/{sub}/position/{n}, one entry per request, as pulsar-admin's
// "peek-messages" does; the subscription's cursor does not move. A batch entry yields all its
// messages with the same Position. On a partitioned topic the positions run through partition
// 0's backlog, then partition 1's, and so on.
func (a *Admin) Peek(ctx context.Context, topic, sub string, from, n int) ([]Message, error) {
	topic = ParseTopic(topic).String()
	if from < 1 {
		from = 1
	}
	parts, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	if parts == 0 {
		return a.peekTopic(ctx, topic, sub, from, n, 0)
	}
	var ts topicStats
	if err := a.getJSON(ctx, topicPath(topic)+"/partitioned-stats?perPartition=true", &ts); err != nil {
		return nil, err
	}
	var out []Message
	offset := 0
	for i := 0; i < parts && len(out) < n; i++ {
		pt := fmt.Sprintf("%s-partition-%d", topic, i)
		backlog := int(ts.Partitions[pt].Subscriptions[sub].MsgBacklog)
		if from > offset+backlog {
			offset += backlog
			continue
		}
		local := max(1, from-offset)
		msgs, err := a.peekTopic(ctx, pt, sub, local, n-len(out), offset)
		if err != nil {
			return out, err
		}
		out = append(out, msgs...)
		offset += backlog
	}
	return out, nil
}

// peekTopic peeks a non-partitioned topic (or one partition) from position from; positions in
// the result are shifted by offset.
func (a *Admin) peekTopic(ctx context.Context, topic, sub string, from, n, offset int) ([]Message, error) {
	var out []Message
	for pos := from; len(out) < n; pos++ {
		path := topicPath(topic) + "/subscription/" + url.PathEscape(sub) + "/position/" + strconv.Itoa(pos)
		resp, err := a.do(ctx, http.MethodGet, path)
		if err != nil {
			if isEndOfBacklog(err) {
				break
			}
			return out, err
		}
		msgs, err := peekMessages(topic, resp)
		resp.Body.Close()
		if err != nil {
			return out, err
		}
		for i := range msgs {
			msgs[i].Position = offset + pos
		}
		out = append(out, msgs...)
	}
	return out, nil
}

// isEndOfBacklog tells a 404 for "no message at this position" (the end of the backlog) from
// one for a missing topic or subscription, which is an error worth showing.
func isEndOfBacklog(err error) bool {
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusNotFound {
		return false
	}
	r := strings.ToLower(he.Reason)
	return !strings.Contains(r, "subscription") && !strings.Contains(r, "topic")
}

// peekMessages decodes one peek answer: the payload is the body, the metadata is in
// X-Pulsar-* headers.
func peekMessages(topic string, resp *http.Response) ([]Message, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	h := resp.Header
	m := Message{ID: h.Get("X-Pulsar-Message-Id"), Topic: topic, Key: h.Get("X-Pulsar-Partition-Key"),
		Properties: map[string]string{}, Payload: body,
		PublishTime: parseHeaderTime(h.Get("X-Pulsar-Publish-Time")),
		EventTime:   parseHeaderTime(h.Get("X-Pulsar-Event-Time"))}
	for k, vs := range h {
		switch {
		case k == "X-Pulsar-Property" && len(vs) > 0:
			// Newer brokers: all properties as one JSON object, keeping their case.
			var props map[string]string
			if err := json.Unmarshal([]byte(vs[0]), &props); err == nil {
				for pk, pv := range props {
					m.Properties[pk] = pv
				}
			}
		case strings.HasPrefix(k, "X-Pulsar-Property-") && len(vs) > 0:
			// Older brokers: one header per property, whose case HTTP does not keep; restore
			// the upper-case names the retry/DLQ logic uses.
			pk := strings.TrimPrefix(k, "X-Pulsar-Property-")
			if up := strings.ToUpper(pk); knownUpper[up] {
				pk = up
			}
			m.Properties[pk] = vs[0]
		}
	}
	nb, _ := strconv.Atoi(h.Get("X-Pulsar-Num-Batch-Message"))
	if nb <= 1 && h.Get("X-Pulsar-Batch-Size") == "" {
		return []Message{m}, nil
	}
	batch, err := wire.ParseBatch(body, max(nb, 1))
	if err != nil {
		return []Message{m}, nil // show the raw entry rather than nothing
	}
	out := make([]Message, 0, len(batch))
	for i, b := range batch {
		bm := m
		bm.ID = fmt.Sprintf("%s:%d", strings.TrimSuffix(m.ID, ":-1"), i)
		bm.Payload = b.Payload
		bm.Key = b.Meta.GetPartitionKey()
		bm.Properties = map[string]string{}
		for _, kv := range b.Meta.GetProperties() {
			bm.Properties[kv.GetKey()] = kv.GetValue()
		}
		if et := b.Meta.GetEventTime(); et > 0 {
			bm.EventTime = time.UnixMilli(int64(et)).UTC()
		}
		out = append(out, bm)
	}
	return out, nil
}

var knownUpper = map[string]bool{"RECONSUMETIMES": true, "REAL_TOPIC": true, "ORIGIN_MESSAGE_ID": true,
	"DELAY_TIME": true, "RETRY_TOPIC": true, "EXCEPTION": true}

// parseHeaderTime reads the ISO-8601 times upstream writes, or epoch milliseconds.
func parseHeaderTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC()
	}
	return time.Time{}
}
