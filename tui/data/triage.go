package data

import (
	"context"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// The whole-topic reads of client/dlqops, as the screens use them.
type (
	ScanProgress = dlqops.ScanProgress
	ScanResult   = dlqops.ScanResult
	ScanStats    = dlqops.ScanStats
	CauseSplit   = dlqops.CauseSplit
	Position     = dlqops.Position
	From         = dlqops.From
)

// ParseFrom reads where to start reading a topic: earliest, latest, a time or a message id.
func ParseFrom(s string, now time.Time) (From, error) { return dlqops.ParseFrom(s, now) }

// View is what of a topic a read shows: the letters subscription Sub has not acknowledged, with
// IncludeAcked those it acknowledged too (Message.Acked marks them); Sub "": every retained
// letter.
type View struct {
	Sub          string
	IncludeAcked bool
}

// ScanRequest is a scan as the screens ask for it.
type ScanRequest struct {
	Topic  string
	View   View
	Filter *expr.Expr // nil: every letter
}

// BrowsePage is one page of a topic read from a position.
type BrowsePage struct {
	Msgs []Message
	// Next starts the following page (More false: the page reached the last message the topic
	// held); Prev starts the page before (HasPrev false: this page starts at the earliest).
	Next, Prev    From
	More, HasPrev bool
}

// TriageSource is what the whole-DLQ views need beyond Source: every read goes through
// non-durable readers or the admin API, so nothing is acknowledged and no subscription is
// created. Sources without it show the backlog a page at a time.
type TriageSource interface {
	// Scan reads the letters of req.Topic that req.View shows, up to the last message it held
	// at the start, calling progress as it goes (from the scanning goroutine).
	Scan(ctx context.Context, req ScanRequest, progress func(ScanProgress)) (*ScanResult, error)
	// Letters reads the messages at ps of topic back, in order: those gone, or that v hides
	// (acknowledged since), left out.
	Letters(ctx context.Context, topic string, v View, ps []Position) ([]Message, error)
	// Browse reads up to n messages of topic that v shows from from (From.Earliest of a
	// subscription's letters: its first not acknowledged); on a partitioned topic positions run
	// through partition 0, then 1, and so on.
	Browse(ctx context.Context, topic string, v View, from From, n int) (*BrowsePage, error)
}

var _ TriageSource = (*Admin)(nil)

func (a *Admin) Scan(ctx context.Context, req ScanRequest, progress func(ScanProgress)) (*ScanResult, error) {
	cl, err := a.pulsarClient()
	if err != nil {
		return nil, err
	}
	if err := a.exists(ctx, ParseTopic(req.Topic).String()); err != nil {
		return nil, err
	}
	return dlqops.Scan(ctx, cl, dlqops.ScanOptions{Topic: ParseTopic(req.Topic).String(), Subscription: req.View.Sub,
		IncludeAcknowledged: req.View.IncludeAcked, Filter: req.Filter, Facets: true, Admin: a.ac, Progress: progress})
}

func (a *Admin) Letters(ctx context.Context, topic string, v View, ps []Position) ([]Message, error) {
	topic = ParseTopic(topic).String()
	view, err := dlqops.ReadView(ctx, a.ac, topic, v.Sub, v.IncludeAcked)
	if err != nil {
		return nil, err
	}
	msgs, err := dlqops.Fetch(ctx, a.ac, topic, view, ps)
	if err != nil {
		return nil, err
	}
	out := make([]Message, len(msgs))
	for i, am := range msgs {
		pos := dlqops.Position{Ledger: am.ID.LedgerID, Entry: am.ID.EntryID, Partition: int32(am.ID.PartitionIndex),
			Batch: int32(am.ID.BatchIndex)}
		out[i] = fromAdmin(am, am.Topic, 0)
		out[i].ID, out[i].Acked = pos.String(), view.Acked(pos)
	}
	return out, nil
}

// Browse reads a page with dlqops.Browse. A partitioned topic is read one partition at a
// time, the partition named by from.ID.Partition (also when from is not an id): its pages run
// through partition 0's messages, then partition 1's, and Next and Prev cross over.
func (a *Admin) Browse(ctx context.Context, topic string, v View, from From, n int) (*BrowsePage, error) {
	cl, err := a.pulsarClient()
	if err != nil {
		return nil, err
	}
	topic = ParseTopic(topic).String()
	parts, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	if parts == 0 {
		if err := a.exists(ctx, topic); err != nil {
			return nil, err
		}
	}
	view, err := dlqops.ReadView(ctx, a.ac, topic, v.Sub, v.IncludeAcked)
	if err != nil {
		return nil, err
	}
	if parts == 0 {
		return a.browseOne(ctx, cl, topic, view, -1, from, n)
	}
	part := min(max(from.ID.Partition, 0), int32(parts-1))
	for {
		name := naming.PartitionName(topic, int(part))
		bp, err := a.browseOne(ctx, cl, name, view, part, from, n)
		if err != nil {
			return nil, err
		}
		if len(bp.Msgs) == 0 && part < int32(parts-1) && !from.Latest {
			part++ // an empty partition, or its end: the next one's start
			from = From{Earliest: true}
			continue
		}
		if !bp.More && part < int32(parts-1) {
			bp.More, bp.Next = true, From{Earliest: true, ID: client.MessageID{Partition: part + 1}}
		}
		if !bp.HasPrev && part > 0 {
			bp.HasPrev, bp.Prev = true, From{Latest: true, ID: client.MessageID{Partition: part - 1}}
		}
		return bp, nil
	}
}

// browseOne reads one page of a non-partitioned topic, or of partition part (name).
func (a *Admin) browseOne(ctx context.Context, cl *client.Client, name string, view *dlqops.View, part int32, from From, n int) (*BrowsePage, error) {
	if !from.HasID {
		from.ID = client.MessageID{}
	}
	p, err := dlqops.Browse(ctx, cl, a.ac, name, view, from, n)
	if err != nil {
		return nil, err
	}
	out := &BrowsePage{Next: p.Next, More: p.More}
	for _, m := range p.Messages {
		dm := fromClient(m)
		pos := dlqops.PositionOf(m.ID)
		dm.ID = pos.String()
		pos.Partition = part
		dm.Acked = view.Acked(pos)
		out.Msgs = append(out.Msgs, dm)
	}
	if len(p.Messages) > 0 {
		first := p.Messages[0].ID
		if prev, ok, err := dlqops.Back(ctx, a.ac, name, first, n); err == nil && ok {
			out.Prev, out.HasPrev = prev, true
		}
	}
	for _, f := range []*From{&out.Next, &out.Prev} {
		f.ID.Partition = part
	}
	return out, nil
}

// fromClient is a received message as the screens show it.
func fromClient(pm *client.Message) Message {
	m := Message{ID: pm.ID.String(), Topic: pm.Topic, Key: pm.Key, Properties: pm.Properties,
		EventTime: pm.EventTime, PublishTime: pm.PublishTime, Payload: pm.Payload, ProducerName: pm.ProducerName,
		Redeliveries: int(pm.RedeliveryCount), RedeliveriesKnown: true}
	if m.Properties == nil {
		m.Properties = map[string]string{}
	}
	return m
}

// ParsePosition reads a message id as the screens write it.
func ParsePosition(id string) (Position, error) {
	mid, err := client.ParseMessageID(strings.TrimSuffix(id, ":-1"))
	if err != nil {
		return Position{}, err
	}
	return dlqops.PositionOf(mid), nil
}
