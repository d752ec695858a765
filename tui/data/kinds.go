package data

import (
	"context"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
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
func classify(ctx context.Context, f *dlqops.Finder, rows []TopicRow) {
	topics := topicsOf(rows)
	if f != nil {
		setVerdicts(rows, byName(f.Classify(ctx, topics)))
		return
	}
	known := make(naming.Names, len(topics))
	for _, t := range topics {
		known[naming.BaseName(t.Name)] = struct{}{}
	}
	verdicts := make(map[string]deadletter.Verdict, len(topics))
	for _, t := range topics {
		verdicts[t.Name] = deadletter.Classify(deadletter.Evidence{Topic: t.Name, Names: known})
	}
	setVerdicts(rows, byName(verdicts))
}

// topicsOf is the rows as the finder takes them: every topic but partitions, with its message
// counter when its stats are known.
func topicsOf(rows []TopicRow) []dlqops.Topic {
	n := 0
	for _, r := range rows {
		if r.Parent == "" {
			n++
		}
	}
	topics := make([]dlqops.Topic, 0, n)
	for _, r := range rows {
		if r.Parent == "" {
			topics = append(topics, dlqops.Topic{Name: r.Name, Partitions: r.Partitions, InCounter: inCounterOf(r)})
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
func setVerdicts(rows []TopicRow, verdict func(topic string) Verdict) {
	for i := range rows {
		name := rows[i].Name
		if rows[i].Parent != "" {
			name = rows[i].Parent
		}
		rows[i].Verdict = verdict(name)
	}
}

// byName reads the finder's answer in place: a copy of it as the screens keep verdicts would
// be 100,000 map entries more on a large cluster.
func byName(verdicts map[string]deadletter.Verdict) func(string) Verdict {
	return func(topic string) Verdict { return verdictOf(verdicts[topic]) }
}

// verdictCache keeps the verdicts of the last listing of each namespace, so that a screen
// asking about one topic does not list its namespace again. Only the verdicts that say
// something are kept: on a large cluster nearly every topic is for nothing in particular, and
// the listing's names (Admin.listings) tell such a topic from one that was not listed.
type verdictCache struct {
	at   map[string]time.Time // by namespace
	rows map[string]Verdict   // by topic, the DLQs and retry topics
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
		if r.Parent != "" {
			continue
		}
		if r.Verdict != (Verdict{}) {
			c.rows[r.Name] = r.Verdict
		} else {
			delete(c.rows, r.Name) // a DLQ once, since deleted and created again as something else
		}
	}
}

// get is topic's verdict from a listing of its namespace less than verdictFresh old; listed
// says whether that listing held topic.
func (c *verdictCache) get(topic string, now time.Time, listed func(ns, topic string) bool) (Verdict, bool) {
	ns := ParseTopic(topic).NamespaceName()
	if at, ok := c.at[ns]; !ok || now.Sub(at) > verdictFresh {
		return Verdict{}, false
	}
	if v, ok := c.rows[topic]; ok {
		return v, true
	}
	return Verdict{}, naming.PartitionIndex(topic) < 0 && listed(ns, topic)
}

// Verdict is what topic is for: from the last listing of its namespace when it is recent,
// otherwise from a new one.
func (a *Admin) Verdict(ctx context.Context, topic string) (Verdict, error) {
	topic = ParseTopic(topic).String()
	a.mu.Lock()
	v, ok := a.verdicts.get(topic, time.Now(), a.listed)
	a.mu.Unlock()
	if ok {
		return v, nil
	}
	if _, err := a.Topics(ctx, ParseTopic(topic).NamespaceName()); err != nil {
		return Verdict{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	v, _ = a.verdicts.get(topic, time.Now(), a.listed)
	return v, nil
}
