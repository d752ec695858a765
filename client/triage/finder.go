package triage

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// DefaultMaxSamples bounds how many topics one Finder.Classify call reads anything for.
const DefaultMaxSamples = 200

// recheckUnknown is how long a sample stands for a topic whose listing carries no message
// counter to tell a change by.
const recheckUnknown = time.Minute

// Topic is one topic of a listing, as Finder.Classify takes it.
type Topic struct {
	Name       string // full name; a partitioned topic's own name, not its partitions'
	Partitions int    // 0 for a non-partitioned topic
	// InCounter is the topic's msgInCounter from the listing's stats, -1 when unknown: while
	// it stays the same, the newest message has not changed and a cached sample stands.
	InCounter int64
}

// Finder decides which topics of a cluster are DLQs and retry topics (deadletter.Classify),
// reading what the rule needs through the admin API: the purpose property of each topic whose
// name says DLQ or retry and of each topic it samples, and the newest message of each topic
// whose name and purpose do not decide, at most MaxSamples topics per call (the others keep
// what is cached, or what their name says). A purpose is cached for the Finder's life (until
// the topic leaves a listing of its namespace); a sample until the topic's last message id
// changes. Safe for concurrent use.
type Finder struct {
	ad         *admin.Client
	MaxSamples int
	Now        func() time.Time

	mu    sync.Mutex
	cache map[string]*sampled
}

type sampled struct {
	purpose   string
	asked     bool // purpose asked for
	hasSample bool
	lastID    adminapi.MessageID
	newest    *deadletter.Sample
	inCounter int64
	checked   time.Time
}

// NewFinder returns a Finder that reads through ad.
func NewFinder(ad *admin.Client) *Finder {
	return &Finder{ad: ad, MaxSamples: DefaultMaxSamples, Now: time.Now, cache: map[string]*sampled{}}
}

// Classify returns the verdict on every topic of topics (by name). Topics listed are also the
// known topics whose names DLQ names derive from.
func (f *Finder) Classify(ctx context.Context, topics []Topic) map[string]deadletter.Verdict {
	known := namesOf(topics)
	f.mu.Lock()
	f.forget(topics)
	f.mu.Unlock()
	return f.classify(ctx, topics, known, f.maxSamples())
}

// Cached is Classify without reading anything: every topic of the listing gets what its name
// and what is cached say, handed to set with its index in topics rather than gathered in a
// map, which for a listing of 100,000 topics would be as large as the listing. For listings
// too long to look into whole, with ClassifyAmong for the topics a person looks at. set is
// called with the Finder locked: it must not call the Finder.
func (f *Finder) Cached(topics []Topic, set func(i int, v deadletter.Verdict)) {
	known := namesOf(topics)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forget(topics)
	for i, t := range topics {
		set(i, f.verdictLocked(t, known))
	}
}

// ClassifyAmong is Classify for some topics of a listing whose names are known: it reads for
// those alone (at most MaxSamples), and forgets nothing of the others.
func (f *Finder) ClassifyAmong(ctx context.Context, topics []Topic, known naming.Names) map[string]deadletter.Verdict {
	return f.classify(ctx, topics, known, f.maxSamples())
}

// namesOf is the topics of a listing that its DLQ and retry names may derive from.
func namesOf(topics []Topic) naming.Names {
	return naming.OriginNames(func(yield func(string) bool) {
		for _, t := range topics {
			if !yield(t.Name) {
				return
			}
		}
	})
}

// classify reads for at most limit topics what their verdicts need, then returns every topic's
// verdict. With limit 0 it reads nothing and keeps no new entry in the cache.
func (f *Finder) classify(ctx context.Context, topics []Topic, known naming.Names, limit int) map[string]deadletter.Verdict {
	now := f.Now()
	f.mu.Lock()
	type job struct {
		t      Topic
		s      *sampled
		sample bool
	}
	var jobs []job
	for _, t := range topics {
		if limit == 0 {
			break
		}
		s := f.cache[t.Name]
		if s == nil {
			s = &sampled{inCounter: -1}
			f.cache[t.Name] = s
		}
		kind, _, _, _ := naming.FromName(t.Name, nil)
		needPurpose := kind != deadletter.Standard && !s.asked
		ev := deadletter.Evidence{Topic: t.Name, Purpose: s.purpose, Names: known}
		stale := !s.hasSample || (t.InCounter >= 0 && t.InCounter != s.inCounter) ||
			(t.InCounter < 0 && now.Sub(s.checked) > recheckUnknown)
		sample := deadletter.NeedsSample(ev) && stale
		if needPurpose || sample {
			jobs = append(jobs, job{t, s, sample})
		}
	}
	f.mu.Unlock()
	// Topics never looked at go first, so that every topic gets a verdict within a few calls.
	slices.SortStableFunc(jobs, func(a, b job) int {
		return boolInt(a.s.checked.IsZero() && !a.s.asked) - boolInt(b.s.checked.IsZero() && !b.s.asked)
	})
	slices.Reverse(jobs)
	if len(jobs) > limit {
		jobs = jobs[:limit]
	}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f.look(ctx, j.t, j.s, j.sample, now)
		}()
	}
	wg.Wait()

	out := make(map[string]deadletter.Verdict, len(topics))
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range topics {
		out[t.Name] = f.verdictLocked(t, known)
	}
	return out
}

// verdictLocked is t's verdict from its name and what is cached of it. Called with f.mu held.
func (f *Finder) verdictLocked(t Topic, known naming.Names) deadletter.Verdict {
	ev := deadletter.Evidence{Topic: t.Name, Names: known}
	if s := f.cache[t.Name]; s != nil {
		ev.Purpose, ev.Newest = s.purpose, s.newest
	}
	return deadletter.Classify(ev)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (f *Finder) maxSamples() int {
	if f.MaxSamples <= 0 {
		return DefaultMaxSamples
	}
	return f.MaxSamples
}

// forget drops the cache of topics of the listed namespaces that the listing no longer holds:
// a topic deleted and created again may have another purpose. Only the cached topics the
// listing holds are gathered, not the listing: a few hundred, of 100,000. Called with f.mu
// held.
func (f *Finder) forget(topics []Topic) {
	listed := map[string]bool{}
	namespaces := map[string]bool{}
	for _, t := range topics {
		if f.cache[t.Name] != nil {
			listed[t.Name] = true
		}
		if ns := namespaceOf(t.Name); !namespaces[ns] {
			namespaces[ns] = true
		}
	}
	for name := range f.cache {
		if !listed[name] && namespaces[namespaceOf(name)] {
			delete(f.cache, name)
		}
	}
}

func namespaceOf(topic string) string {
	if i := strings.LastIndex(topic, "/"); i >= 0 {
		return topic[:i]
	}
	return topic
}

// look reads the purpose of t (once) and, when sample, its newest message, unless its last
// message id is the one already sampled.
func (f *Finder) look(ctx context.Context, t Topic, s *sampled, sample bool, now time.Time) {
	f.mu.Lock()
	asked, lastID, has := s.asked, s.lastID, s.hasSample
	f.mu.Unlock()
	purpose := ""
	if !asked {
		// An upstream broker before topic properties, or a role without the permission,
		// answers an error: the purpose is then unknown, and the name and sample decide.
		if props, err := f.ad.TopicProperties(ctx, t.Name); err == nil {
			purpose = props[deadletter.PropertyTopicPurpose]
		} else if ctx.Err() != nil {
			return
		}
	}
	var newest *deadletter.Sample
	sampledNow := false
	if sample {
		id, n, ok := f.newest(ctx, t, lastID, has)
		if ok {
			lastID, newest, sampledNow = id, n, true
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !asked {
		s.purpose, s.asked = purpose, true
	}
	if sampledNow {
		if newest != nil || lastID.EntryID < 0 {
			s.newest = newest
		}
		s.lastID, s.hasSample, s.inCounter, s.checked = lastID, true, t.InCounter, now
	}
}

// newest reads the newest message of t: of its first partition that holds any, for a
// partitioned topic. It returns the last message id it found and the sample, nil when the
// topic is empty or its newest message is the one sampled before (known); ok is false when
// the admin API failed.
func (f *Finder) newest(ctx context.Context, t Topic, known adminapi.MessageID, has bool) (adminapi.MessageID, *deadletter.Sample, bool) {
	parts := []string{t.Name}
	if t.Partitions > 0 {
		parts = parts[:0]
		for i := range t.Partitions {
			parts = append(parts, naming.PartitionName(t.Name, i))
		}
	}
	for _, name := range parts {
		id, err := f.ad.LastMessageID(ctx, name)
		if err != nil {
			return adminapi.MessageID{}, nil, false
		}
		if id.EntryID < 0 {
			continue
		}
		if has && id == known {
			return id, nil, true
		}
		msgs, err := f.ad.ExamineMessage(ctx, name, true, 1)
		if err != nil || len(msgs) == 0 {
			return adminapi.MessageID{}, nil, false
		}
		m := msgs[len(msgs)-1]
		sample := &deadletter.Sample{Properties: m.Properties, ProducerName: header(m, "X-Pulsar-producer-name"),
			DeliverAt: header(m, "X-Pulsar-deliver-at-time") != ""}
		if origin := naming.BaseName(m.Properties[client.PropertyRealTopic]); origin != "" {
			// Best effort: without them the producer's name is split at its last dash.
			sample.OriginSubscriptions, _ = f.ad.Subscriptions(ctx, origin)
		}
		return id, sample, true
	}
	return adminapi.MessageID{EntryID: -1}, nil, true
}

// header reads an X-Pulsar-* header of an admin message, whatever case it was stored in.
func header(m admin.Message, name string) string {
	if v, ok := m.Headers[http.CanonicalHeaderKey(name)]; ok {
		return v
	}
	for k, v := range m.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
