package broker

import "sync"

// The cursor flusher (persist.go) visits only the topics whose durable subscriptions or
// deduplication state changed since its last flush: with thousands of quiet topics, visiting
// every one every CursorFlushInterval was all the CPU an idle broker used.

// dirtySet is the topics to visit at the next flush. Its mutex is a leaf lock, taken with or
// without the topic's.
type dirtySet struct {
	mu     sync.Mutex
	topics map[*topic]struct{}
}

func (d *dirtySet) add(t *topic) {
	d.mu.Lock()
	if d.topics == nil {
		d.topics = make(map[*topic]struct{})
	}
	d.topics[t] = struct{}{}
	d.mu.Unlock()
}

// take empties the set and returns what it held.
func (d *dirtySet) take() []*topic {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*topic, 0, len(d.topics))
	for t := range d.topics {
		out = append(out, t)
	}
	clear(d.topics)
	return out
}

// markDirty asks the next cursor flush to visit t.
func (t *topic) markDirty() { t.b.dirty.add(t) }

// markDirty records that s's cursor changed since it was last persisted. Called with the
// topic's mutex held. A subscription already dirty has its topic in the set (the flush that
// clears the flag visits the topic under the same mutex), so acknowledgements after the first
// cost nothing more.
func (s *subscription) markDirty() {
	if s.dirty {
		return
	}
	s.dirty = true
	if s.durable && s.topic != nil { // internal tests build subscriptions without a topic
		s.topic.markDirty()
	}
}
