package data

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Peek reads GET …/subscription/{sub}/position/{n} (client/admin's PeekAt), one entry per
// request, as pulsar-admin's "peek-messages" does; the subscription's cursor does not move. A batch entry yields all its
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
		// Upstream creates a subscription that a peek names and that does not exist: a screen
		// that reads never does, so it looks first.
		st, err := a.topicAdmin(ctx).Stats(ctx, topic)
		if err != nil {
			return nil, err
		}
		if _, ok := st.Subscriptions[sub]; !ok {
			return nil, SubscriptionNotFound(topic, sub)
		}
		return a.peekTopic(ctx, topic, sub, from, n, 0)
	}
	ts, err := a.topicAdmin(ctx).PartitionedStats(ctx, topic, true)
	if err != nil {
		return nil, atPath(topicPath(topic)+"/partitioned-stats?perPartition=true", err)
	}
	if _, ok := ts.Subscriptions[sub]; !ok {
		return nil, SubscriptionNotFound(topic, sub)
	}
	var out []Message
	offset := 0
	for i := 0; i < parts && len(out) < n; i++ {
		pt := naming.PartitionName(topic, i)
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
// the result are shifted by offset. A peek of a batch returns every message of it, those the
// subscription acknowledged included; where the broker says which (batchDeletedIndexes), they
// are left out, as the subscription will not deliver them.
func (a *Admin) peekTopic(ctx context.Context, topic, sub string, from, n, offset int) ([]Message, error) {
	cur, err := dlqops.ReadCursor(ctx, a.topicAdmin(ctx), topic, sub)
	if err != nil {
		cur = nil // the peek shows what the broker returns
	}
	var out []Message
	for pos := from; len(out) < n; pos++ {
		msgs, err := a.topicAdmin(ctx).PeekAt(ctx, topic, sub, pos)
		switch {
		case err == nil:
		case isEndOfBacklog(err):
			return out, nil
		case unreadableEntry(err) && ctx.Err() == nil:
			// One letter the cluster cannot hand over must not hide the others.
			out = append(out, Message{Topic: topic, Position: offset + pos, Unreadable: err.Error()})
			continue
		default:
			return out, err
		}
		for _, am := range msgs {
			if cur != nil && am.ID.BatchIndex >= 0 && cur.Acked(dlqops.Position{Ledger: am.ID.LedgerID, Entry: am.ID.EntryID,
				Partition: -1, Batch: int32(am.ID.BatchIndex)}) {
				continue
			}
			out = append(out, fromAdmin(am, topic, offset+pos))
		}
	}
	return out, nil
}

// unreadableEntry reports whether err is about the entry at one position only: the cluster
// answered, but its answer cannot be read (a header line holding a control character, which
// Go's HTTP client refuses: an upstream broker sends a letter's key and properties raw), or it
// could not read the entry itself (412 from letterbox, 500 from upstream). Anything else — the
// cluster unreachable, a refusal, a missing topic — is the whole peek's.
func unreadableEntry(err error) bool {
	var pe textproto.ProtocolError
	if errors.As(err, &pe) {
		return true
	}
	var ae *admin.Error
	return errors.As(err, &ae) && (ae.Status == http.StatusPreconditionFailed || ae.Status == http.StatusInternalServerError)
}

// isEndOfBacklog tells a 404 for "no message at this position" (the end of the backlog) from
// one for a missing topic or subscription, which is an error worth showing.
func isEndOfBacklog(err error) bool {
	if !IsNotFound(err) {
		return false
	}
	var ae *admin.Error
	reason := ""
	if errors.As(err, &ae) {
		reason = ae.Reason
	}
	r := strings.ToLower(reason)
	return !strings.Contains(r, "subscription") && !strings.Contains(r, "topic")
}

// fromAdmin is a peeked message as the screens show it. Its id is ledger:entry, plus the
// index in the batch for a batched message.
func fromAdmin(am admin.Message, topic string, pos int) Message {
	id := fmt.Sprintf("%d:%d", am.ID.LedgerID, am.ID.EntryID)
	if am.ID.BatchIndex >= 0 {
		id += ":" + strconv.Itoa(am.ID.BatchIndex)
	}
	props := am.Properties
	if props == nil {
		props = map[string]string{}
	}
	return Message{ID: id, Topic: topic, Key: am.Key, Properties: props, Payload: am.Payload,
		PublishTime: parseHeaderTime(am.PublishTime), EventTime: parseHeaderTime(am.EventTime), Position: pos,
		ProducerName: am.Headers["X-Pulsar-Producer-Name"]}
}

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
