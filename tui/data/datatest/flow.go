package datatest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// The fake's flow: orders → orders-billing-RETRY → orders-billing-DLQ for subscription
// billing, with retry letters at several hops, and acme/billing's invoices-archiver-DLQ
// without a subscription in a namespace without retention (a DLQ losing its messages).
func (f *Fake) addFlow() {
	orders := "persistent://public/demo/orders"
	retry := "persistent://public/demo/orders-billing-RETRY"
	dlq := "persistent://public/demo/orders-billing-DLQ"
	counters := map[string]int64{orders: 48_210, retry: 1_312, dlq: 36,
		"persistent://acme/billing/invoices-archiver-DLQ": 3}
	for i := range f.Rows {
		f.Rows[i].InCounter = counters[f.Rows[i].Name]
	}
	for name, d := range f.Details {
		d.Stats.InCounter = counters[name]
	}
	f.Details[retry] = &data.TopicDetail{Name: retry, Stats: f.row(retry).Stats, SchemaTypesReported: true,
		Producers: []data.Producer{{Name: "billing-a-retry", Address: "/127.0.0.1:51300", RateIn: 3.2}},
		Subscriptions: []data.Subscription{{Name: "billing", Type: "Shared", Backlog: 7, RateOut: 3.1, RateRedeliver: 0.2, Unacked: 1,
			Consumers: []data.Consumer{{Name: "billing-a", Address: "/127.0.0.1:51300", Permits: 999, Unacked: 1, RateOut: 3.1, SchemaType: "JSON"}}}}}
	f.Details[dlq].Producers = []data.Producer{{Name: "billing-a-dlq", Address: "/127.0.0.1:51300", RateIn: 0.4}}
	inv := "persistent://acme/billing/invoices-archiver-DLQ"
	f.Details[inv] = &data.TopicDetail{Name: inv, Stats: f.row(inv).Stats, SchemaTypesReported: true}
	f.Retentions = map[string]data.Retention{"public/demo": {Minutes: 10080, SizeMB: 1024, TTL: 72 * time.Hour}, "acme/billing": {}}
	f.Replays = []data.HistoryEntry{{When: FakeEpoch.Add(-26 * time.Hour), DLQ: dlq, Subscription: "billing-replay",
		Selection: "property.reason=tax service unavailable", Moved: 12, Result: "complete", Elapsed: 1400 * time.Millisecond,
		Run: "letterbox-replay-20260313T072653-1a2b3c4d", By: "cli"}}

	t := func(sec int) time.Time { return FakeEpoch.Add(time.Duration(-sec) * time.Second) }
	hops := []int{1, 1, 2, 1, 3, 2, 1}
	var rl []data.Message
	for i, h := range hops {
		rl = append(rl, data.Message{
			ID: fmt.Sprintf("9:%d:-1", 200+i), Topic: retry, Key: fmt.Sprintf("order-%d", 1090+i),
			Properties: map[string]string{"RECONSUMETIMES": fmt.Sprint(h), "REAL_TOPIC": orders, "DELAY_TIME": "1000",
				"ORIGIN_MESSAGE_ID": fmt.Sprintf("12:%d:-1", 90+i), "reason": []string{"timeout calling inventory", "tax service unavailable"}[i%2]},
			PublishTime: t(40 - i*5),
			Payload:     fmt.Appendf(nil, `{"id":"o-%d","amount":12.00,"currency":"EUR"}`, 1090+i),
		})
	}
	f.Messages[retry] = rl
	dead := f.Messages[dlq]
	if len(dead) >= 4 {
		dead[2].Properties["reason"] = "payment declined"
		dead[3].Properties["reason"] = "payment declined"
		dead[3].Properties["exception"] = "PaymentDeclinedException: card expired"
	}
}

func (f *Fake) row(name string) data.TopicRow {
	for _, r := range f.Rows {
		if r.Name == name {
			return r
		}
	}
	return data.TopicRow{}
}

var _ data.DeadLetterSource = (*Fake)(nil)

// Retention is the fake namespace's retention (Retentions, by "tenant/ns").
func (f *Fake) Retention(ctx context.Context, topic string) (data.Retention, error) {
	if err := f.fail(); err != nil {
		return data.Retention{}, err
	}
	f.Lock()
	defer f.Unlock()
	return f.Retentions[data.ParseTopic(topic).NamespaceName()], nil
}

// Replay replays the fake DLQ's messages as the engine would, with a deterministic clock
// (each message 100 ms): selected ones move to their REAL_TOPIC (dropping out of the DLQ
// unless DryRun), the rest are skipped. With ReplayHold set a run (not a dry run) stops after ReplayHoldAfter
// messages until ReplayHold is closed or ctx ends.
func (f *Fake) Replay(ctx context.Context, req data.ReplayRequest, events chan<- data.ReplayEvent) (data.ReplaySummary, error) {
	defer close(events)
	opts, err := req.Options()
	if err != nil {
		return data.ReplaySummary{}, err
	}
	if err := f.fail(); err != nil {
		return data.ReplaySummary{}, err
	}
	dlq := data.ParseTopic(req.DLQ).String()
	f.Lock()
	msgs := slices.Clone(f.Messages[dlq])
	hold, holdAfter := f.ReplayHold, f.ReplayHoldAfter
	f.Unlock()
	sum := data.ReplaySummary{DryRun: req.DryRun, Run: "letterbox-replay-fake"}
	sum.Total = req.Total
	var moved []string
	for i, m := range msgs {
		if hold != nil && !req.DryRun && i == holdAfter {
			select {
			case <-hold:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		id, _ := client.ParseMessageID(m.ID)
		cm := &client.Message{Key: m.Key, Properties: m.Properties, Payload: m.Payload, PublishTime: m.PublishTime, ID: id}
		ev := data.ReplayEvent{ID: id, Key: m.Key, Destination: data.NewDeadLetter(m).Origin}
		if opts.Destination != "" {
			ev.Destination = opts.Destination
		}
		if req.Discard {
			ev.Destination = ""
		}
		limited := opts.Selection.Limit > 0 && sum.Moved+sum.WouldMove+sum.Discarded >= opts.Selection.Limit
		switch {
		case !selected(opts.Selection, cm) || limited:
			ev.Action, ev.Reason = dlqops.Skipped, "not selected"
			sum.Skipped++
		case req.Discard && req.DryRun:
			ev.Action = dlqops.WouldDiscard
			sum.WouldMove++
		case req.Discard:
			ev.Action = dlqops.Discarded
			sum.Discarded++
			moved = append(moved, m.ID)
		case ev.Destination == "":
			ev.Action, ev.Reason = dlqops.Failed, "no destination"
			sum.Failed++
		case req.DryRun:
			ev.Action = dlqops.WouldMove
			sum.WouldMove++
		default:
			ev.Action = dlqops.Moved
			sum.Moved++
			moved = append(moved, m.ID)
		}
		sum.Considered++
		sum.Elapsed = time.Duration(sum.Considered) * 100 * time.Millisecond
		sum.Rate = 10
		if sum.Total > sum.Considered {
			sum.ETA = time.Duration(sum.Total-sum.Considered) * 100 * time.Millisecond
		} else {
			sum.ETA = 0
		}
		ev.Progress = sum.Progress
		select {
		case events <- ev:
		case <-ctx.Done():
		}
	}
	sum.Complete = ctx.Err() == nil
	if len(msgs) > 0 {
		sum.Until, _ = client.ParseMessageID(msgs[len(msgs)-1].ID)
	}
	f.Lock()
	defer f.Unlock()
	if len(moved) > 0 {
		f.Messages[dlq] = slices.DeleteFunc(f.Messages[dlq], func(m data.Message) bool { return slices.Contains(moved, m.ID) })
		n := int64(len(moved))
		if d := f.Details[dlq]; d != nil {
			d.Stats.Backlog -= n
			for i := range d.Subscriptions {
				d.Subscriptions[i].Backlog = max(0, d.Subscriptions[i].Backlog-n)
			}
		}
		for i := range f.Rows {
			if f.Rows[i].Name == dlq {
				f.Rows[i].Backlog -= n
			}
		}
		for _, m := range msgs {
			if slices.Contains(moved, m.ID) && !req.Discard {
				dest := data.NewDeadLetter(m).Origin
				if req.Destination != "" {
					dest = data.ParseTopic(req.Destination).String()
				}
				if d := f.Details[dest]; d != nil {
					d.Stats.InCounter++
				}
				if req.Edit != nil {
					f.Resent = append(f.Resent, *req.Edit)
				}
			}
		}
	}
	return sum, ctx.Err()
}

// dropBacklog takes n letters (all when n ≤ 0) off the head of dlq's backlog.
func (f *Fake) dropBacklog(dlq string, n int64) (dropped int64) {
	msgs := f.Messages[dlq]
	all := n <= 0
	f.Messages[dlq] = msgs[min(int(max(n, 0)), len(msgs)):]
	if all {
		f.Messages[dlq] = nil
	}
	if d := f.Details[dlq]; d != nil {
		for i := range d.Subscriptions {
			before := d.Subscriptions[i].Backlog
			if all {
				d.Subscriptions[i].Backlog = 0
			} else {
				d.Subscriptions[i].Backlog = max(0, d.Subscriptions[i].Backlog-n)
			}
			dropped = max(dropped, before-d.Subscriptions[i].Backlog)
		}
		d.Stats.Backlog = 0
		for _, s := range d.Subscriptions {
			d.Stats.Backlog += s.Backlog
		}
	}
	return dropped
}

// Purge drops letters off the fake DLQ's backlog, and says how many went.
func (f *Fake) Purge(ctx context.Context, dlq, sub string, n int64) (int64, error) {
	if err := f.fail(); err != nil {
		return 0, err
	}
	f.Lock()
	defer f.Unlock()
	return f.dropBacklog(data.ParseTopic(dlq).String(), n), nil
}

// CreateSubscription adds a subscription to the fake DLQ.
func (f *Fake) CreateSubscription(ctx context.Context, dlq, sub string) error {
	if err := f.fail(); err != nil {
		return err
	}
	f.Lock()
	defer f.Unlock()
	dlq = data.ParseTopic(dlq).String()
	d := f.Details[dlq]
	if d == nil {
		return fmt.Errorf("topic %s not found", dlq)
	}
	for _, s := range d.Subscriptions {
		if s.Name == sub {
			return fmt.Errorf("subscription %s already exists", sub)
		}
	}
	d.Subscriptions = append(d.Subscriptions, data.Subscription{Name: sub, Type: "Exclusive", Backlog: int64(len(f.Messages[dlq]))})
	return nil
}

// SetRetention sets the fake namespace's retention.
func (f *Fake) SetRetention(ctx context.Context, ns string, r data.Retention) error {
	if err := f.fail(); err != nil {
		return err
	}
	f.Lock()
	defer f.Unlock()
	r.TTL = f.Retentions[ns].TTL
	f.Retentions[ns] = r
	return nil
}

func selected(s dlqops.Selection, m *client.Message) bool {
	if len(s.IDs) > 0 && !slices.ContainsFunc(s.IDs, func(id client.MessageID) bool {
		return id.Ledger == m.ID.Ledger && id.Entry == m.ID.Entry
	}) {
		return false
	}
	for _, f := range s.Filters {
		if !f.Match(m) {
			return false
		}
	}
	return true
}

// History is the fake's replays of dlq (History, newest last in the slice), newest first.
func (f *Fake) History(ctx context.Context, dlq string, limit int) ([]data.HistoryEntry, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	var out []data.HistoryEntry
	for i := len(f.Replays) - 1; i >= 0; i-- {
		if data.ParseTopic(f.Replays[i].DLQ).String() == data.ParseTopic(dlq).String() {
			out = append(out, f.Replays[i])
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// RecordReplay adds e to the fake's history.
func (f *Fake) RecordReplay(e data.HistoryEntry) error {
	f.Lock()
	defer f.Unlock()
	f.Replays = append(f.Replays, e)
	return nil
}
