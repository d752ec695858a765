package data

import (
	"context"
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// ReplayEvent and ReplaySummary are the replay engine's own: one message considered, and
// the outcome of a run.
type (
	ReplayEvent   = dlqops.Event
	ReplaySummary = dlqops.Summary
	ReplayAction  = dlqops.Action
	HistoryEntry  = dlqops.HistoryEntry
	ReplayEdit    = dlqops.Edit
)

// ReplayRequest is a replay (a discard, a resend) as the screens ask for it: the command
// line's too, which client/dlqops turns into the engine's options for both.
type ReplayRequest = dlqops.Request

var _ DeadLetterSource = (*Admin)(nil)

// Retention reads the retention policy and message TTL of topic's namespace (topic-level
// policies are not read: few clusters enable them).
func (a *Admin) Retention(ctx context.Context, topic string) (Retention, error) {
	p, err := nsPath(ParseTopic(topic).NamespaceName())
	if err != nil {
		return Retention{}, err
	}
	ns := ParseTopic(topic).NamespaceName()
	r, err := a.topicAdmin(ctx).Retention(ctx, ns)
	if err != nil {
		if IsNotFound(err) {
			return Retention{}, nil
		}
		return Retention{}, atPath("/admin/v2/namespaces/"+p+"/retention", err)
	}
	var out Retention
	if r != nil {
		out.Minutes = int64(r.RetentionTimeInMinutes)
		out.SizeMB = r.RetentionSizeInMB
	}
	ttl, err := a.topicAdmin(ctx).MessageTTL(ctx, ns)
	if err != nil && !IsNotFound(err) {
		return Retention{}, atPath("/admin/v2/namespaces/"+p+"/messageTTL", err)
	}
	if ttl != nil && *ttl > 0 {
		out.TTL = time.Duration(*ttl) * time.Second
	}
	return out, nil
}

// Replay prepares req as the command line does (client/dlqops: the DLQ's subscription,
// backlog, deduplication and the topics beside it), refuses part of a batch the broker cannot
// acknowledge in part, and runs the replay engine over the binary protocol.
func (a *Admin) Replay(ctx context.Context, req ReplayRequest, events chan<- ReplayEvent) (ReplaySummary, error) {
	defer close(events)
	cl, err := a.pulsarClient()
	if err != nil {
		return ReplaySummary{}, err
	}
	req.Cluster = a.opts.Cluster
	opts, err := dlqops.Prepare(ctx, a.topicAdmin(ctx), req)
	if err == nil {
		err = dlqops.CheckBatches(ctx, cl, opts)
	}
	if err != nil {
		return ReplaySummary{}, err
	}
	return dlqops.Run(ctx, cl, opts, func(ev ReplayEvent) { events <- ev })
}

// History reads the newest actions on dlq of this cluster from the history file.
func (a *Admin) History(ctx context.Context, dlq string, limit int) ([]HistoryEntry, error) {
	return dlqops.History(a.opts.Cluster, ParseTopic(dlq).String(), limit)
}

// RecordReplay appends e to the history file, with this cluster's key, the context and who
// did it.
func (a *Admin) RecordReplay(e HistoryEntry) error {
	return dlqops.Record(e, dlqops.Who{Cluster: a.opts.Cluster, Context: a.opts.Context})
}

// Purge drops sub's whole backlog (n ≤ 0), or its first n letters (client/dlqops).
func (a *Admin) Purge(ctx context.Context, dlq, sub string, n int64) (int64, error) {
	dlq = ParseTopic(dlq).String()
	if n <= 0 {
		return dlqops.Purge(ctx, a.topicAdmin(ctx), dlq, sub)
	}
	cl, err := a.pulsarClient()
	if err != nil {
		return 0, err
	}
	return dlqops.Skip(ctx, a.topicAdmin(ctx), cl, dlq, sub, n)
}

// CreateSubscription creates a durable subscription on dlq at its earliest retained letter.
func (a *Admin) CreateSubscription(ctx context.Context, dlq, sub string) error {
	return dlqops.Subscribe(ctx, a.topicAdmin(ctx), ParseTopic(dlq).String(), sub)
}

// SetRetention sets the retention policy of ns (tenant/namespace).
func (a *Admin) SetRetention(ctx context.Context, ns string, r Retention) error {
	return a.ac.SetRetention(ctx, ns, adminapi.RetentionPolicies{RetentionTimeInMinutes: int(r.Minutes), RetentionSizeInMB: r.SizeMB})
}
