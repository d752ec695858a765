package triage

import (
	"context"

	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// Verdict is Classify for one topic, reading only what its own verdict needs: its purpose
// property, and its newest message when the purpose and the name do not decide. known are the
// topics its name may derive from (its namespace's). It is what an action on one DLQ asks
// before it acts, where Classify would sample a whole listing.
func (f *Finder) Verdict(ctx context.Context, t Topic, known []string) deadletter.Verdict {
	f.mu.Lock()
	s := f.cache[t.Name]
	if s == nil {
		s = &sampled{inCounter: -1}
		f.cache[t.Name] = s
	}
	f.mu.Unlock()
	now := f.Now()
	f.look(ctx, t, s, false, now) // the purpose, which may overrule the name
	f.mu.Lock()
	ev := deadletter.Evidence{Topic: t.Name, Purpose: s.purpose, Known: known}
	f.mu.Unlock()
	if deadletter.NeedsSample(ev) {
		f.look(ctx, t, s, true, now)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ev.Newest = s.newest
	return deadletter.Classify(ev)
}
