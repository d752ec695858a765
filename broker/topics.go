package broker

import (
	"iter"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// topicRegistry owns namespaces, partitioned-topic metadata and the live topics (partitions are
// topics of their own, named <base>-partition-N).
type topicRegistry struct {
	b *Broker

	mu          sync.Mutex
	namespaces  map[string]bool   // "tenant/ns"
	partitioned map[string]int    // base full name → partition count
	topics      map[string]*topic // full name → open topic
	// stored are the topics storage holds that nobody has used since the start: they open on
	// first use (topics_lazy.go). A name is in topics or stored, never both.
	stored map[string]naming.Topic
	// byNS holds the full names in topics and stored by namespace ("tenant/ns"), so that
	// listing a namespace does not walk every topic the broker holds (100 namespaces of 1,000
	// topics each: a listing of them all walked 100,000 topics 100 times).
	byNS map[string]map[string]struct{}
	// PIP-139 (deleted_topics.go): deleted topics that may not be auto-created yet, and namespaces
	// being deleted.
	tombstones   map[string]time.Time
	terminatedNS map[string]bool
}

func newTopicRegistry(b *Broker) *topicRegistry {
	return &topicRegistry{
		b:           b,
		namespaces:  map[string]bool{"public/default": true},
		partitioned: make(map[string]int),
		topics:      make(map[string]*topic),
		stored:      make(map[string]naming.Topic),
		byNS:        make(map[string]map[string]struct{}),
	}
}

// index adds a name of topics or stored to byNS. Called with r.mu held.
func (r *topicRegistry) index(full string, name naming.Topic) {
	ns := name.NamespaceName()
	m := r.byNS[ns]
	if m == nil {
		m = make(map[string]struct{})
		r.byNS[ns] = m
	}
	m[full] = struct{}{}
}

// unindex removes from byNS a name that is in neither topics nor stored any more. Called with
// r.mu held.
func (r *topicRegistry) unindex(full string, name naming.Topic) {
	ns := name.NamespaceName()
	if m := r.byNS[ns]; m != nil {
		delete(m, full)
		if len(m) == 0 {
			delete(r.byNS, ns)
		}
	}
}

// persistentOf reports whether a name byNS holds is a persistent topic.
func (r *topicRegistry) persistentOf(full string) bool {
	if t, ok := r.topics[full]; ok {
		return t.name.Persistent
	}
	return r.stored[full].Persistent
}

// partitionedMetadata answers PARTITIONED_METADATA for name, creating partitioned metadata when
// auto-creation applies.
func (r *topicRegistry) partitionedMetadata(name naming.Topic, autoCreate bool) (int, *serverError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.partitioned[name.String()]; ok {
		return n, nil
	}
	if r.knownLocked(name.String()) || name.Partition >= 0 {
		return 0, nil
	}
	// The namespace's autoTopicCreationOverride, else the broker's configuration.
	allow, partitioned, partitions := r.b.autoTopicCreation(name.NamespaceName())
	if !autoCreate || !allow {
		return 0, errorf(pb.ServerError_TopicNotFound, "Topic %s does not exist", name)
	}
	if serr := r.refuseAutoCreate(name); serr != nil {
		return 0, serr
	}
	if !r.namespaces[name.NamespaceName()] {
		return 0, errorf(pb.ServerError_TopicNotFound, "Namespace %s does not exist", name.NamespaceName())
	}
	if partitioned && !naming.IsLetterName(name.Local) {
		if why := r.maxTopicsRefusal(name.NamespaceName(), partitions); why != "" { // admin_policies.go
			return 0, errorf(pb.ServerError_NotAllowedError, "%s", why)
		}
		if err := r.b.persistPartitioned(name.String(), partitions); err != nil {
			return 0, errorf(pb.ServerError_MetadataError, "cannot store the partitioned metadata of %s: %v", name, err)
		}
		r.partitioned[name.String()] = partitions
		return partitions, nil
	}
	// Non-partitioned topics are created by the PRODUCER or SUBSCRIBE that follows.
	return 0, nil
}

// get returns the topic named name, creating it when create is set and policy allows.
// purpose is the client's topic_purpose (PIP-263), "" when it sent none.
func (r *topicRegistry) get(name naming.Topic, create bool, purpose string) (*topic, *serverError) {
	full := name.String()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.terminatedNS[name.NamespaceName()] {
		// PIP-139: nothing new attaches to a namespace being deleted, not even to a topic
		// that still exists until the deletion reaches it.
		return nil, errorf(pb.ServerError_TopicNotFound, "Namespace %s is being deleted", name.NamespaceName())
	}
	if t, ok, serr := r.liveLocked(name); ok {
		return t, serr
	}
	if _, ok := r.partitioned[full]; ok {
		return nil, errorf(pb.ServerError_NotAllowedError, "%s is a partitioned topic: use its partitions", full)
	}
	if !r.namespaces[name.NamespaceName()] {
		return nil, errorf(pb.ServerError_TopicNotFound, "Namespace %s does not exist", name.NamespaceName())
	}
	// A partition of an existing partitioned topic is created on first use, whatever the
	// auto-creation policy, as upstream does; an index beyond the partition count is not.
	n, isPartition := r.partitioned[name.Base().String()]
	switch {
	case name.Partition >= 0 && isPartition:
		if name.Partition >= n {
			return nil, errorf(pb.ServerError_TopicNotFound, "partition %d of %s does not exist (%d partitions)", name.Partition, name.Base(), n)
		}
	case !create || !r.b.autoTopicAllowed(name.NamespaceName()):
		return nil, errorf(pb.ServerError_TopicNotFound, "Topic %s does not exist", full)
	}
	if serr := r.refuseAutoCreate(name); serr != nil {
		return nil, serr
	}
	if !isPartition {
		if why := r.maxTopicsRefusal(name.NamespaceName(), 1); why != "" { // admin_policies.go
			return nil, errorf(pb.ServerError_NotAllowedError, "%s", why)
		}
	}
	props := map[string]string{}
	if name.Partition < 0 || !isPartition {
		p, serr := r.autoCreatePurpose(name, purpose)
		if serr != nil {
			return nil, serr
		}
		if p != "" {
			props[PropertyTopicPurpose] = p
		}
	}
	return r.openCreating(name, props)
}

func (r *topicRegistry) openLocked(name naming.Topic) (*topic, *serverError) {
	return r.openCreating(name, nil)
}

// openCreating opens name's log, its stored metadata and its durable subscriptions; a topic
// with no stored metadata gets props (the properties of a topic being created). Called with
// r.mu held.
func (r *topicRegistry) openCreating(name naming.Topic, props map[string]string) (*topic, *serverError) {
	full := name.String()
	rec, found, err := r.b.loadTopicRecord(full)
	if err != nil {
		return nil, errorf(pb.ServerError_MetadataError, "cannot read the metadata of %s: %v", full, err)
	}
	if !found {
		rec = topicRecord{Properties: props, Created: time.Now().UnixMilli()}
		if err := r.b.storeTopicRecord(full, rec); err != nil {
			return nil, errorf(pb.ServerError_MetadataError, "cannot store the metadata of %s: %v", full, err)
		}
	}
	log, err := r.b.store.OpenLog(full)
	if err != nil {
		return nil, errorf(pb.ServerError_PersistenceError, "cannot open the log of %s: %v", full, err)
	}
	t := newTopic(r.b, name, log)
	t.props = rec.Properties
	if rec.Created > 0 {
		t.created = time.UnixMilli(rec.Created)
	}
	if err := r.b.restoreCursors(t); err != nil {
		// Damaged metadata must not keep the topic closed: serve what can be served.
		r.b.log.Error("some subscriptions of a topic could not be restored", "topic", full, "err", err)
	}
	delete(r.stored, full)
	r.topics[full] = t
	r.index(full, name)
	r.b.log.Debug("topic opened", "topic", full, "properties", rec.Properties)
	return t, nil
}

// list returns the fully qualified names in namespace ns ("tenant/ns"), partitioned topics
// expanded to their partitions, persistent and/or non-persistent as mode says.
func (r *topicRegistry) list(ns string, mode pb.CommandGetTopicsOfNamespace_Mode) []string {
	want := func(persistent bool) bool {
		switch mode {
		case pb.CommandGetTopicsOfNamespace_PERSISTENT:
			return persistent
		case pb.CommandGetTopicsOfNamespace_NON_PERSISTENT:
			return !persistent
		}
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := make(map[string]bool)
	for full, n := range r.partitioned {
		name, err := parseTopicName(full)
		if err != nil || !name.InNamespace(ns) || !want(name.Persistent) {
			continue
		}
		for i := range n {
			seen[name.PartitionTopic(i).String()] = true
		}
	}
	for full := range r.byNS[ns] {
		if want(r.persistentOf(full)) {
			seen[full] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// all returns every open topic (stored topics nobody has used since the start are not).
func (r *topicRegistry) all() []*topic {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*topic, 0, len(r.topics))
	for _, t := range r.topics {
		out = append(out, t)
	}
	return out
}

// sweepSlice is how many topics a sweep visits before it lets other goroutines run.
const sweepSlice = 128

// sweep is every open topic, for the periodic passes over all of them (backlog quotas,
// inactive topics, compaction thresholds, retention, expiry, rates). It lets the other
// goroutines run every sweepSlice topics: with 10,000 topics the passes that fall due together
// each minute ran 5-11 ms at a stretch, which a broker on one core spent answering no
// connection at all, and Go preempts a goroutine only after 10 ms.
func (r *topicRegistry) sweep() iter.Seq[*topic] {
	return func(yield func(*topic) bool) {
		for i, t := range r.all() {
			if i > 0 && i%sweepSlice == 0 {
				runtime.Gosched()
			}
			if !yield(t) {
				return
			}
		}
	}
}

// hasNamespace reports whether "tenant/ns" exists.
func (r *topicRegistry) hasNamespace(ns string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.namespaces[strings.TrimSuffix(ns, "/")]
}

func (r *topicRegistry) close() {
	for _, t := range r.all() {
		t.close()
	}
}

// isTerminated reports whether a topic was terminated. Safe with any broker lock held.
func (b *Broker) isTerminated(full string) bool {
	a, unlock := b.adminLocked()
	defer unlock()
	return a.terminated[full]
}

// partitionCount returns the partition count of a partitioned topic (base name).
func (b *Broker) partitionCount(name naming.Topic) (int, bool) {
	b.topics.mu.Lock()
	defer b.topics.mu.Unlock()
	n, ok := b.topics.partitioned[name.String()]
	return n, ok
}

// topicFor returns the live topic named name (a non-partitioned topic or a partition, which is
// opened if its partitioned topic exists), or ErrNotFound. A partitioned base name is
// ErrNotAllowed with what.
func (b *Broker) topicFor(name naming.Topic, what string) (*topic, error) {
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	full := name.String()
	if t, ok, serr := r.liveLocked(name); ok {
		if serr != nil {
			return nil, adminErr(ErrPreconditionFailed, "%s", serr.msg)
		}
		return t, nil
	}
	if _, ok := r.partitioned[full]; ok {
		return nil, adminErr(ErrNotAllowed, "%s on a partitioned topic is not allowed", what)
	}
	if n, ok := r.partitioned[name.Base().String()]; ok && name.Partition >= 0 && name.Partition < n {
		t, serr := r.openLocked(name)
		if serr != nil {
			return nil, adminErr(ErrPreconditionFailed, "%s", serr.msg)
		}
		return t, nil
	}
	return nil, adminErr(ErrNotFound, "Topic not found")
}
