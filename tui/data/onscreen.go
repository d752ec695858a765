package data

// Rows on screen. A listing's stats come from the brokers' broker-stats/topics in one call,
// and its verdicts from names, purposes and samples of newest messages (kinds.go); what that
// leaves out — topics no broker has loaded, clusters without the endpoint, and every topic of
// a listing of more than OnScreenFrom, for which a bulk answer every refresh would weigh tens
// of megabytes — the topics screen asks for the rows it shows: RowDetails, one stats call and
// at most one sample per row.

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// OnScreenFrom is the listing size from which Topics reads nothing per topic: no broker-wide
// stats and no samples, only the names (and what is cached of earlier reads). 5,000 topics
// make a broker-stats answer of a few megabytes; 100,000 of about fifty.
const OnScreenFrom = 5_000

// listing is what RowDetails needs of the last listing of a namespace: the names DLQ names
// derive from, and which topics are partitioned. The names are the listing's own strings,
// sorted (a partition stands for its topic): a set of them was a map entry per topic, 5 MB at
// 100,000 topics, and held twice while a large cluster is listed again.
type listing struct {
	names       []string
	partitioned map[string]int
}

// has reports that the listing holds topic (a full name; a partition stands for its topic).
func (l listing) has(topic string) bool {
	_, ok := slices.BinarySearch(l.names, naming.BaseName(topic))
	return ok
}

// remember keeps, for RowDetails, the names of a listing of the namespaces nss: a listing of
// one namespace (Verdict's) replaces that namespace's alone.
func (a *Admin) remember(nss []string, rows []TopicRow) {
	fresh := make(map[string]*listing, len(nss))
	for _, ns := range nss {
		fresh[ns] = &listing{}
	}
	n := make(map[string]int, len(nss))
	for _, r := range rows {
		n[r.Namespace]++
	}
	for ns, l := range fresh {
		l.names = make([]string, 0, n[ns])
	}
	for _, r := range rows {
		if l, ok := fresh[r.Namespace]; ok {
			l.names = append(l.names, naming.BaseName(r.Name))
			if r.Partitions > 0 {
				if l.partitioned == nil {
					l.partitioned = map[string]int{}
				}
				l.partitioned[r.Name] = r.Partitions
			}
		}
	}
	for _, l := range fresh {
		slices.Sort(l.names)
		l.names = slices.Compact(l.names) // a partitioned topic and its partitions: one name
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.listings == nil {
		a.listings = map[string]listing{}
	}
	for ns, l := range fresh {
		a.listings[ns] = *l
	}
}

// intern replaces the names of a new listing of namespace ns that its last listing held with
// the last listing's strings: the screen holds those until the new listing replaces it, and a
// large cluster's names, nearly all the same from one minute to the next, are then held once
// rather than twice meanwhile.
func (a *Admin) intern(ns string, names []string) {
	a.mu.Lock()
	last := a.listings[ns].names // never changed once made: read without the lock
	a.mu.Unlock()
	for i, n := range names {
		if j, ok := slices.BinarySearch(last, n); ok {
			names[i] = last[j]
		}
	}
}

// listed reports that the last listing of namespace ns held topic (not a partition). The
// caller holds a.mu.
func (a *Admin) listed(ns, topic string) bool { return a.listings[ns].has(topic) }

// onScreenListing is what the last listings say of topics' namespaces: their partitioned
// topics, and the names of all of them together as a set, for the finder.
type onScreenListing struct {
	names       naming.Names
	partitioned map[string]int
}

// listingOf is what the last listings say of the namespaces of topics, the rows on screen.
func (a *Admin) listingOf(topics []string) onScreenListing {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := onScreenListing{names: naming.Names{}, partitioned: map[string]int{}}
	seen := map[string]bool{}
	for _, t := range topics {
		ns := ParseTopic(t).NamespaceName()
		if seen[ns] {
			continue
		}
		seen[ns] = true
		l := a.listings[ns]
		for _, n := range l.names {
			out.names[n] = struct{}{}
		}
		for n, p := range l.partitioned {
			out.partitioned[n] = p
		}
	}
	return out
}

// RowDetails is the stats and verdicts of the given topics (full names, as the last listing
// named them): a stats call each (a partitioned topic's sums its partitions), eight at a time,
// and the finder's look at those among them it has not judged yet. Topics it could not read
// are left out; when it could read none, the error is the first one's.
func (a *Admin) RowDetails(ctx context.Context, topics []string) (map[string]TopicRow, error) {
	l := a.listingOf(topics)
	out := make(map[string]TopicRow, len(topics))
	var mu sync.Mutex
	var failed error // the first topic's error
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	ac := a.topicAdmin(ctx)
	for _, name := range topics {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var ts adminapi.TopicStats
			var err error
			if l.partitioned[name] > 0 {
				var ps adminapi.PartitionedTopicStats
				ps, err = ac.PartitionedStats(ctx, name, false)
				ts = ps.TopicStats
			} else {
				ts, err = ac.Stats(ctx, name)
			}
			if err != nil {
				mu.Lock()
				failed = cmp.Or(failed, err)
				mu.Unlock()
				return
			}
			mu.Lock()
			out[name] = TopicRow{Name: name, Stats: statsOf(ts), StatsKnown: true, Partitions: l.partitioned[name]}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 && failed != nil {
		// Not one answer: the cluster did not answer, rather than a topic gone meanwhile.
		return nil, failed
	}
	if a.finder != nil {
		var ts []dlqops.Topic
		for _, r := range out {
			if naming.PartitionIndex(r.Name) >= 0 && l.partitioned[naming.BaseName(r.Name)] > 0 {
				continue // a partition carries its topic's verdict
			}
			ts = append(ts, dlqops.Topic{Name: r.Name, Partitions: r.Partitions, InCounter: inCounterOf(r)})
		}
		for name, v := range a.finder.ClassifyAmong(ctx, ts, l.names) {
			r := out[name]
			r.Verdict = verdictOf(v)
			out[name] = r
		}
	}
	return out, nil
}

// classifyCached sets every row's verdict from the finder's cache and the names alone.
func classifyCached(f *dlqops.Finder, rows []TopicRow) {
	if f == nil {
		classify(context.Background(), nil, rows)
		return
	}
	// Only the verdicts that say something are gathered: nearly every topic of a large
	// cluster is for nothing in particular.
	topics := topicsOf(rows)
	said := map[string]Verdict{}
	f.Cached(topics, func(i int, v deadletter.Verdict) {
		if v := verdictOf(v); v != (Verdict{}) {
			said[topics[i].Name] = v
		}
	})
	setVerdicts(rows, func(topic string) Verdict { return said[topic] })
}
