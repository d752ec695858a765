package data

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// ReplayEvent and ReplaySummary are the replay engine's own: one message considered, and
// the outcome of a run.
type (
	ReplayEvent   = replay.Event
	ReplaySummary = replay.Summary
	ReplayAction  = replay.Action
	HistoryEntry  = replay.HistoryEntry
	ReplayEdit    = replay.Edit
)

// ReplayRequest is a replay as the screens ask for it.
type ReplayRequest struct {
	DLQ          string
	Subscription string
	// IDs select these dead letters (peeked ids, ledger:entry[:partition[:batch]]); Filters
	// select by the engine's expressions (key=V, property.NAME=V, payload~RE, json.PATH=V,
	// published>=T, published<T), all ANDed. Neither: every dead letter.
	IDs     []string
	Filters []string
	Limit   int64
	Rate    float64 // msg/s, 0 for no limit
	DryRun  bool
	// Total is the subscription's backlog in letters, and Selected the letters the preview
	// selected (0: unknown), for the ETA.
	Total    int64
	Selected int64
	// Discard acknowledges the selected letters instead of moving them.
	Discard bool
	// Destination, when set, receives every selected letter instead of its origin.
	Destination string
	// AllowCrossTenant lets letters go to another tenant's topics (the engine's option): set
	// once a person confirmed the destinations the preview named.
	AllowCrossTenant bool
	// Edit replaces payload, key and properties of what is sent (a resend).
	Edit *replay.Edit
	// MaxReplays is the loop guard (0: the engine's default; negative: none).
	MaxReplays int
	// New starts a new run rather than resuming an interrupted one of the same replay.
	New bool
	// Until is the last dead letter to take: the preview's (nil: the DLQ's last at the start).
	Until *client.MessageID
}

// Describe is the selection in words (the marked ids, the search), for the screens and the
// history; the limit is one of the run's controls, said with them.
func (r ReplayRequest) Describe() string {
	var parts []string
	switch n := len(r.IDs); {
	case n == 1:
		parts = append(parts, "id "+r.IDs[0])
	case n > 1:
		parts = append(parts, fmt.Sprintf("%d marked ids", n))
	}
	parts = append(parts, r.Filters...)
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " · ")
}

// Options turns the request into the engine's options (without Events).
func (r ReplayRequest) Options() (replay.Options, error) {
	o := replay.Options{DLQ: ParseTopic(r.DLQ).String(), Subscription: r.Subscription, Rate: r.Rate,
		DryRun: r.DryRun, Total: r.Total, Selected: r.Selected, Discard: r.Discard, Destination: r.Destination, Edit: r.Edit,
		MaxReplays: r.MaxReplays, New: r.New, Until: r.Until, AllowCrossTenant: r.AllowCrossTenant}
	if r.Destination != "" {
		o.Destination = ParseTopic(r.Destination).String()
	}
	if r.DLQ == "" || r.Subscription == "" {
		return o, errors.New("replay: a DLQ and its subscription are needed")
	}
	if len(r.IDs) > 0 {
		ids, err := replay.ParseIDs(strings.Join(r.IDs, ","))
		if err != nil {
			return o, err
		}
		o.Selection.IDs = ids
	}
	for _, f := range r.Filters {
		pf, err := replay.ParseFilter(f)
		if err != nil {
			return o, err
		}
		o.Selection.Filters = append(o.Selection.Filters, pf)
	}
	o.Selection.Limit = r.Limit
	return o, nil
}

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

// Replay runs the replay engine over the binary protocol, with the DLQ's namespace topics
// as the known origins.
func (a *Admin) Replay(ctx context.Context, req ReplayRequest, events chan<- ReplayEvent) (ReplaySummary, error) {
	opts, err := req.Options()
	if err != nil {
		close(events)
		return ReplaySummary{}, err
	}
	opts.Events = events
	opts.Cluster = a.opts.Cluster
	cl, err := a.pulsarClient()
	if err != nil {
		close(events)
		return ReplaySummary{}, err
	}
	if rows, err := a.namespaceTopics(ctx, ParseTopic(req.DLQ).NamespaceName()); err == nil {
		for _, r := range rows {
			opts.KnownTopics = append(opts.KnownTopics, r.Name)
		}
	}
	opts.Admin = a.ac
	if !opts.DryRun && triage.ReadBatchAcks(ctx, a.ac) == triage.BatchAcksLost {
		// Letters taken out of a batch the broker cannot acknowledge in part would come back:
		// refused before anything is acknowledged.
		if err := replay.CheckWholeBatches(ctx, cl, opts); err != nil {
			close(events)
			return ReplaySummary{}, err
		}
	}
	return replay.Run(ctx, cl, opts)
}

// historyPath is the replay history file, $XDG_STATE_HOME/letterbox/replays.jsonl (shared
// with "letterbox replay").
func (a *Admin) historyPath() (string, error) { return replay.DefaultHistoryPath() }

// History reads the newest actions on dlq of this cluster from the history file.
func (a *Admin) History(ctx context.Context, dlq string, limit int) ([]HistoryEntry, error) {
	p, err := a.historyPath()
	if err != nil {
		return nil, err
	}
	return replay.ReadHistory(p, a.opts.Cluster, ParseTopic(dlq).String(), limit)
}

// RecordReplay appends e to the history file, with this cluster's key, the context and who
// did it.
func (a *Admin) RecordReplay(e HistoryEntry) error {
	p, err := a.historyPath()
	if err != nil {
		return err
	}
	e.Cluster, e.Context = a.opts.Cluster, a.opts.Context
	if e.User == "" {
		e.User = replay.Actor()
	}
	return replay.AppendHistory(p, e)
}

// Purge drops sub's whole backlog (n ≤ 0: the admin API's clear-backlog), or its first n
// letters, each message of a batch one: acknowledged by id through the replay engine as a
// discard of the first n (the admin API's skip counts entries, a batch being one), refused on a
// broker that cannot acknowledge part of the batch the n-th letter ends in.
func (a *Admin) Purge(ctx context.Context, dlq, sub string, n int64) (int64, error) {
	dlq = ParseTopic(dlq).String()
	if n <= 0 {
		// What went is the backlog it had: letters where the cluster counts them.
		var letters int64 = -1
		if b, err := triage.ReadBacklog(ctx, a.ac, dlq, sub); err == nil && b.LettersKnown {
			letters = b.Letters
		}
		return letters, a.topicAdmin(ctx).ClearBacklog(ctx, dlq, sub)
	}
	cl, err := a.pulsarClient()
	if err != nil {
		return 0, err
	}
	opts := replay.Options{DLQ: dlq, Subscription: sub, Discard: true, Selection: replay.Selection{Limit: n}, Selected: n, Admin: a.ac}
	if triage.ReadBatchAcks(ctx, a.ac) == triage.BatchAcksLost {
		if err := replay.CheckWholeBatches(ctx, cl, opts); err != nil {
			return 0, err
		}
	}
	sum, err := replay.Run(ctx, cl, opts)
	switch {
	case err != nil:
		return sum.Discarded, err
	case !sum.OK():
		return sum.Discarded, fmt.Errorf("%d of the first %d letters were not acknowledged", sum.Failed, n)
	}
	return sum.Discarded, nil
}

// CreateSubscription creates a durable subscription on dlq at its earliest retained letter.
func (a *Admin) CreateSubscription(ctx context.Context, dlq, sub string) error {
	return a.topicAdmin(ctx).CreateSubscription(ctx, ParseTopic(dlq).String(), sub, admin.Earliest)
}

// SetRetention sets the retention policy of ns (tenant/namespace).
func (a *Admin) SetRetention(ctx context.Context, ns string, r Retention) error {
	return a.ac.SetRetention(ctx, ns, admin.RetentionPolicies{RetentionTimeInMinutes: int(r.Minutes), RetentionSizeInMB: r.SizeMB})
}
