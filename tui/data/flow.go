package data

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/letterbox-dev/letterbox/client/naming"
)

// FlowPeek is how many messages of the retry and DLQ backlogs a flow reading peeks for its
// histogram, latest dead letters and journey.
const FlowPeek = 100

// FlowNode is one topic of a flow.
type FlowNode struct {
	Topic  string
	Exists bool
	Detail *TopicDetail // nil when the topic does not exist
	// Sub is the subscription the flow reads the node through: the flow's subscription on
	// the main and retry topics, the DLQ's first subscription (its initial one) on the DLQ.
	Sub        string
	SubBacklog int64
	Redeliver  float64 // the subscription's redelivery rate
	SubKnown   bool    // the node has that subscription
}

// Stats are the node's stats (zero when it does not exist).
func (n FlowNode) Stats() Stats {
	if n.Detail == nil {
		return Stats{}
	}
	return n.Detail.Stats
}

// Bucket is one bar of the RECONSUMETIMES histogram: how many peeked messages carry n.
type Bucket struct {
	N           int
	Retry, Dead int
}

// Flow is one reading of topic → retry → DLQ for a subscription.
type Flow struct {
	Topic, Sub       string
	Main, Retry, DLQ FlowNode
	// Histogram of RECONSUMETIMES over the peeked retry and DLQ messages, by n ascending.
	Histogram              []Bucket
	RetryPeeked, DLQPeeked int
	Latest                 []DeadLetter // newest first, from the DLQ peek
	RetryLetters           []DeadLetter // from the retry peek, as read
	Retention              Retention
	RetentionKnown         bool
	At                     time.Time
	// Peeked: the backlogs were peeked in this reading (otherwise the peeked fields come
	// from an earlier reading, see KeepPeek).
	Peeked bool
}

// KeepPeek carries the peeked part of an earlier reading over to f, read without peeking.
func (f *Flow) KeepPeek(prev *Flow) {
	f.Histogram, f.RetryPeeked, f.DLQPeeked = prev.Histogram, prev.RetryPeeked, prev.DLQPeeked
	f.Latest, f.RetryLetters = prev.Latest, prev.RetryLetters
}

// Redeliver is the subscription's redelivery rate over the main and retry topics.
func (f *Flow) Redeliver() float64 { return f.Main.Redeliver + f.Retry.Redeliver }

// JourneyStep is one place a message was seen.
type JourneyStep struct {
	Topic string
	ID    string
	At    time.Time
	Hop   int // RECONSUMETIMES on it; 0 on the main topic
	What  string
}

// Journey is what the flow reading shows of the message whose original id is originID:
// its id on the main topic, the retry hops still in the retry backlog, and its dead
// letter. Hops already consumed from the retry topic are not there to see; the count on
// the dead letter says how many there were.
func (f *Flow) Journey(originID string) []JourneyStep {
	if originID == "" {
		return nil
	}
	steps := []JourneyStep{{Topic: f.Topic, ID: originID, What: "published; failed on " + f.Sub}}
	for _, m := range f.RetryLetters {
		if m.OriginID == originID {
			steps = append(steps, JourneyStep{Topic: f.Retry.Topic, ID: m.ID, At: m.PublishTime, Hop: m.Reconsumes, What: "waiting for retry"})
		}
	}
	for _, m := range f.Latest {
		if m.OriginID == originID {
			what := "dead letter"
			if m.Reason != "" {
				what += ": " + m.Reason
			}
			steps = append(steps, JourneyStep{Topic: f.DLQ.Topic, ID: m.ID, At: m.PublishTime, Hop: m.Reconsumes, What: what})
		}
	}
	return steps
}

// LoadFlow reads the flow of topic and sub from src: the three topics' stats (the retry and
// DLQ topics only when they exist), up to FlowPeek messages of the retry and DLQ backlogs,
// and the DLQ's retention when src can tell. Without peek only the stats are read. The retry
// and DLQ topics are those of topic's namespace whose verdict names topic and sub as their
// origin, else those the clients' names give; letters, when set, is a DLQ or retry topic known
// to belong to the flow (the one the flow was opened on, possibly in another namespace).
func LoadFlow(ctx context.Context, src Source, topic, sub, letters string, now time.Time, peek bool) (*Flow, error) {
	topic = ParseTopic(topic).String()
	f := &Flow{Topic: topic, Sub: sub, At: now, Peeked: peek,
		Main: FlowNode{Topic: topic, Sub: sub}, Retry: FlowNode{Topic: naming.RetryName(topic, sub), Sub: sub},
		DLQ: FlowNode{Topic: naming.DLQName(topic, sub)}}
	rows, err := src.Topics(ctx, ParseTopic(topic).NamespaceName())
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, r := range rows {
		exists[r.Name] = true
		if r.Parent == "" && r.Origin == topic && r.OriginSub == sub {
			switch r.Kind {
			case KindDLQ:
				f.DLQ.Topic = r.Name
			case KindRetry:
				f.Retry.Topic = r.Name
			}
		}
	}
	if letters != "" {
		v, err := src.Verdict(ctx, letters)
		if err != nil {
			return nil, err
		}
		switch v.Kind {
		case KindDLQ:
			f.DLQ.Topic = ParseTopic(letters).String()
		case KindRetry:
			f.Retry.Topic = ParseTopic(letters).String()
		}
		exists[ParseTopic(letters).String()] = true
	}
	for _, n := range []*FlowNode{&f.Main, &f.Retry, &f.DLQ} {
		if !exists[n.Topic] && n != &f.Main {
			continue
		}
		d, err := src.TopicDetail(ctx, n.Topic)
		if err != nil {
			return nil, err
		}
		n.Exists, n.Detail = true, d
		if n == &f.DLQ && len(d.Subscriptions) > 0 {
			// The DLQ's main subscription: its only durable one, normally the initial one.
			n.Sub = d.Stats.Main.Sub
			if n.Sub == "" {
				n.Sub = d.Subscriptions[0].Name
			}
		}
		for _, s := range d.Subscriptions {
			if s.Name == n.Sub {
				n.SubKnown, n.SubBacklog, n.Redeliver = true, s.Backlog, s.RateRedeliver
			}
		}
	}
	counts := map[int]*Bucket{}
	bucket := func(n int) *Bucket {
		if counts[n] == nil {
			counts[n] = &Bucket{N: n}
		}
		return counts[n]
	}
	if peek && f.Retry.SubKnown && f.Retry.SubBacklog > 0 {
		msgs, err := src.Peek(ctx, f.Retry.Topic, f.Retry.Sub, 1, FlowPeek)
		if err != nil {
			return nil, err
		}
		f.RetryPeeked = len(msgs)
		for _, m := range msgs {
			d := NewDeadLetter(m)
			f.RetryLetters = append(f.RetryLetters, d)
			if d.Reconsumes >= 0 {
				bucket(d.Reconsumes).Retry++
			}
		}
	}
	if peek && f.DLQ.SubKnown && f.DLQ.SubBacklog > 0 {
		msgs, err := latestLetters(ctx, src, f.DLQ.Topic, f.DLQ.Sub)
		if err != nil {
			return nil, err
		}
		f.DLQPeeked = len(msgs)
		for _, m := range msgs {
			d := NewDeadLetter(m)
			f.Latest = append(f.Latest, d)
			if d.Reconsumes >= 0 {
				bucket(d.Reconsumes).Dead++
			}
		}
		// Newest first: the reads go oldest first.
		slices.Reverse(f.Latest)
		sort.SliceStable(f.Latest, func(i, j int) bool { return f.Latest[i].PublishTime.After(f.Latest[j].PublishTime) })
	}
	for _, b := range counts {
		f.Histogram = append(f.Histogram, *b)
	}
	slices.SortFunc(f.Histogram, func(a, b Bucket) int { return a.N - b.N })
	if f.DLQ.Exists {
		if ds, ok := src.(DeadLetterSource); ok {
			if r, err := ds.Retention(ctx, f.DLQ.Topic); err == nil {
				f.Retention, f.RetentionKnown = r, true
			}
		}
	}
	return f, nil
}

// latestLetters are the newest FlowPeek letters sub has not acknowledged on dlq, oldest first:
// read from the DLQ's end where src reads topics from a position (a peek of the backlog gives
// its oldest), else the backlog's first.
func latestLetters(ctx context.Context, src Source, dlq, sub string) ([]Message, error) {
	if ts, ok := src.(TriageSource); ok {
		page, err := ts.Browse(ctx, dlq, View{Sub: sub}, From{Latest: true}, FlowPeek)
		if err != nil {
			return nil, err
		}
		return page.Msgs, nil
	}
	return src.Peek(ctx, dlq, sub, 1, FlowPeek)
}

// FlowRef names one flow: a topic and the subscription whose retry or DLQ topic exists.
type FlowRef struct {
	Topic, Sub   string
	Retry, DLQ   bool  // which of the two exist
	RetryBacklog int64 // their backlogs, when the listing had stats
	DLQBacklog   int64
	DLQRateIn    float64
}

// Flows finds every flow among rows: each retry or DLQ topic whose verdict names a listed
// topic as its origin, grouped by topic and subscription ("" when the letters do not tell),
// sorted by name.
func Flows(rows []TopicRow) []FlowRef {
	var names []string
	for _, r := range rows {
		if r.Parent == "" {
			names = append(names, r.Name)
		}
	}
	idx := map[[2]string]int{}
	var out []FlowRef
	for _, r := range rows {
		if r.Kind == KindTopic || r.Parent != "" {
			continue
		}
		origin, sub := r.Origin, r.OriginSub
		if origin == "" || !slices.Contains(names, origin) {
			continue
		}
		k := [2]string{origin, sub}
		i, seen := idx[k]
		if !seen {
			i = len(out)
			idx[k] = i
			out = append(out, FlowRef{Topic: origin, Sub: sub})
		}
		if r.Kind == KindRetry {
			out[i].Retry, out[i].RetryBacklog = true, r.Backlog
		} else {
			out[i].DLQ, out[i].DLQBacklog, out[i].DLQRateIn = true, r.Backlog, r.RateIn
		}
	}
	slices.SortFunc(out, func(a, b FlowRef) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		if a.Sub < b.Sub {
			return -1
		}
		if a.Sub > b.Sub {
			return 1
		}
		return 0
	})
	return out
}

// FindDLQ is the DLQ of topic's subscription sub: a DLQ of topic's namespace whose verdict
// names them as its origin, else the name the clients derive.
func FindDLQ(ctx context.Context, src Source, topic, sub string) (string, error) {
	topic = ParseTopic(topic).String()
	rows, err := src.Topics(ctx, ParseTopic(topic).NamespaceName())
	if err != nil {
		return "", err
	}
	for _, r := range rows {
		if r.Parent == "" && r.Kind == KindDLQ && r.Origin == topic && r.OriginSub == sub {
			return r.Name, nil
		}
	}
	return naming.DLQName(topic, sub), nil
}
