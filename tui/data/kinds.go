package data

import (
	"context"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// verdictOf is client/deadletter's verdict as the screens keep it.
func verdictOf(v deadletter.Verdict) Verdict {
	out := Verdict{Origin: v.Origin, OriginSub: v.Subscription}
	switch v.Kind {
	case deadletter.DeadLetter:
		out.Kind = KindDLQ
	case deadletter.Retry:
		out.Kind = KindRetry
	}
	if out.Kind != KindTopic {
		out.By = v.By.String()
	}
	return out
}

// ClassifyByName sets the verdict of every row as far as the names tell (no purpose read, no
// message sampled).
func ClassifyByName(rows []TopicRow) { classify(context.Background(), nil, rows) }

// classify sets the verdict of every row: from the finder, which reads purposes and samples
// newest messages through the admin API, or (f nil) from the names alone. A partition's row
// carries its partitioned topic's verdict.
func classify(ctx context.Context, f *triage.Finder, rows []TopicRow) {
	topics := topicsOf(rows)
	verdicts := map[string]Verdict{}
	if f != nil {
		for name, v := range f.Classify(ctx, topics) {
			verdicts[name] = verdictOf(v)
		}
	} else {
		known := make(naming.Names, len(topics))
		for _, t := range topics {
			known[naming.BaseName(t.Name)] = struct{}{}
		}
		for _, t := range topics {
			verdicts[t.Name] = verdictOf(deadletter.Classify(deadletter.Evidence{Topic: t.Name, Names: known}))
		}
	}
	setVerdicts(rows, verdicts)
}

// topicsOf is the rows as the finder takes them: every topic but partitions, with its message
// counter when its stats are known.
func topicsOf(rows []TopicRow) []triage.Topic {
	var topics []triage.Topic
	for _, r := range rows {
		if r.Parent == "" {
			topics = append(topics, triage.Topic{Name: r.Name, Partitions: r.Partitions, InCounter: inCounterOf(r)})
		}
	}
	return topics
}

// inCounterOf is a row's message counter for the finder, −1 when unknown.
func inCounterOf(r TopicRow) int64 {
	if r.StatsKnown && r.Partitions == 0 {
		return r.InCounter
	}
	return -1
}

// setVerdicts gives each row its topic's verdict; a partition's row carries its partitioned
// topic's.
func setVerdicts(rows []TopicRow, verdicts map[string]Verdict) {
	for i := range rows {
		name := rows[i].Name
		if rows[i].Parent != "" {
			name = rows[i].Parent
		}
		rows[i].Verdict = verdicts[name]
	}
}

// verdictCache keeps the verdicts of the last listing of each namespace, so that a screen
// asking about one topic does not list its namespace again.
type verdictCache struct {
	at   map[string]time.Time // by namespace
	rows map[string]Verdict   // by topic
}

// verdictFresh is how long a listing's verdicts answer Verdict.
const verdictFresh = 30 * time.Second

// put keeps the verdicts of a listing of the namespaces nss.
func (c *verdictCache) put(nss []string, rows []TopicRow, now time.Time) {
	if c.at == nil {
		c.at, c.rows = map[string]time.Time{}, map[string]Verdict{}
	}
	for _, ns := range nss {
		c.at[ns] = now
	}
	for _, r := range rows {
		if r.Parent == "" {
			c.rows[r.Name] = r.Verdict
		}
	}
}

func (c *verdictCache) get(topic string, now time.Time) (Verdict, bool) {
	ns := ParseTopic(topic).NamespaceName()
	if at, ok := c.at[ns]; !ok || now.Sub(at) > verdictFresh {
		return Verdict{}, false
	}
	v, ok := c.rows[topic]
	return v, ok
}

// Verdict is what topic is for: from the last listing of its namespace when it is recent,
// otherwise from a new one.
func (a *Admin) Verdict(ctx context.Context, topic string) (Verdict, error) {
	topic = ParseTopic(topic).String()
	a.mu.Lock()
	v, ok := a.verdicts.get(topic, time.Now())
	a.mu.Unlock()
	if ok {
		return v, nil
	}
	if _, err := a.Topics(ctx, ParseTopic(topic).NamespaceName()); err != nil {
		return Verdict{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	v, _ = a.verdicts.get(topic, time.Now())
	return v, nil
}
