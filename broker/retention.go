package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// Retention as upstream: by default a topic keeps only what some subscription still needs
// (topic.trim). A namespace retention policy keeps acknowledged data longer: for
// retentionTimeInMinutes and/or up to retentionSizeInMB, −1 meaning without limit. Data is
// released once it is outside the time window or the topic is over its size quota, never
// while a subscription still needs it.

// retainFrom lowers low, the first position no subscription needs, to keep what the
// namespace's retention policy asks for. Called with t.mu held.
func (t *topic) retainFrom(low storage.Position, now time.Time) storage.Position {
	r := t.b.layers(t.name).Retention()
	minutes, sizeMB := r.RetentionTimeInMinutes, r.RetentionSizeInMB
	if minutes == 0 && sizeMB == 0 {
		return low
	}
	// Upstream releases consumed data once it is past the time limit or the topic is over its
	// size quota (a negative limit never triggers); what remains is kept.
	if sizeMB >= 0 && t.log.Size() > sizeMB<<20 {
		return low
	}
	if minutes >= 0 {
		if p := t.log.FindByTime(now.Add(-time.Duration(minutes) * time.Minute).UnixMilli()); p.Less(low) {
			return p
		}
		return low
	}
	return t.log.First()
}
