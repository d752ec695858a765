package datatest

import (
	"context"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// Verdict is the name rule's verdict on topic among the fake's rows.
func (f *Fake) Verdict(ctx context.Context, topic string) (data.Verdict, error) {
	if err := f.fail(); err != nil {
		return data.Verdict{}, err
	}
	f.Lock()
	defer f.Unlock()
	topic = data.ParseTopic(topic).String()
	for _, r := range f.Rows {
		if r.Name == topic {
			return r.Verdict, nil
		}
	}
	return data.Verdict{}, nil
}

// Scan counts the fake's messages of req.Topic as a real scan would, in one progress step.
func (f *Fake) Scan(ctx context.Context, req data.ScanRequest, progress func(data.ScanProgress)) (*data.ScanResult, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	msgs, hold := f.Messages[data.ParseTopic(req.Topic).String()], f.ScanHold
	f.Unlock()
	if hold != nil && progress != nil {
		n := int64(len(msgs))
		progress(data.ScanProgress{Read: n / 2, Matched: n / 2, Entries: n / 2, TotalEntries: n, Fraction: 0.5,
			Rate: 123_456, Left: 3 * time.Second, Elapsed: 2 * time.Second})
		select {
		case <-hold:
		case <-ctx.Done():
			return &data.ScanResult{Topic: req.Topic}, ctx.Err()
		}
	}
	f.Lock()
	scanErr := f.ScanErr
	f.Unlock()
	if scanErr != nil {
		return &data.ScanResult{Topic: req.Topic, Read: int64(len(msgs) / 2)}, scanErr
	}
	t := dlqops.NewTally()
	res := &data.ScanResult{Topic: req.Topic, Complete: true}
	for _, m := range msgs {
		res.Read++
		res.Entries++
		subject := expr.Message{Key: m.Key, Properties: m.Properties, Payload: m.Payload, PublishTime: m.PublishTime,
			ProducerName: m.ProducerName}
		if !req.Filter.Match(&subject) {
			continue
		}
		t.Add(&client.Message{Key: m.Key, Properties: m.Properties, Payload: m.Payload, PublishTime: m.PublishTime,
			EventTime: m.EventTime, ProducerName: m.ProducerName})
		p, err := data.ParsePosition(m.ID)
		if err != nil {
			return nil, err
		}
		res.Matches = append(res.Matches, p)
	}
	res.Stats, res.Facets = t.Stats(), t.Facets()
	if progress != nil {
		progress(data.ScanProgress{Read: res.Read, Matched: res.Stats.Letters, Entries: res.Entries, TotalEntries: res.Entries,
			Fraction: 1, Done: true})
	}
	return res, nil
}

// Letters finds the fake's messages at ps (the fake acknowledges nothing: every view shows all).
func (f *Fake) Letters(ctx context.Context, topic string, _ data.View, ps []data.Position) ([]data.Message, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	var out []data.Message
	for _, p := range ps {
		for _, m := range f.Messages[data.ParseTopic(topic).String()] {
			if mp, err := data.ParsePosition(m.ID); err == nil && mp == p {
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// Browse pages through the fake's messages of topic by index.
func (f *Fake) Browse(ctx context.Context, topic string, _ data.View, from data.From, n int) (*data.BrowsePage, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	all := f.Messages[data.ParseTopic(topic).String()]
	start := 0
	switch {
	case from.Latest:
		start = max(0, len(all)-n)
	case from.HasID:
		for i, m := range all {
			if p, err := data.ParsePosition(m.ID); err == nil && p.Ledger == from.ID.Ledger && p.Entry == from.ID.Entry {
				start = i
				if from.After {
					start++
				}
			}
		}
	case !from.Time.IsZero():
		for start < len(all) && all[start].PublishTime.Before(from.Time) {
			start++
		}
	}
	end := min(len(all), start+n)
	out := &data.BrowsePage{Msgs: append([]data.Message(nil), all[start:end]...), More: end < len(all)}
	idOf := func(i int) client.MessageID {
		p, _ := data.ParsePosition(all[i].ID)
		return p.MessageID()
	}
	if out.More {
		out.Next = data.From{ID: idOf(end - 1), HasID: true, After: true}
	}
	if start > 0 {
		out.HasPrev, out.Prev = true, data.From{ID: idOf(max(0, start-n)), HasID: true}
	}
	return out, nil
}
