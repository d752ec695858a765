package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Inactive topics, as upstream's PersistentTopic.checkGC: every InactiveTopicsCheckInterval
// (brokerDeleteInactiveTopicsFrequencySeconds) each open topic whose inactive topic policy
// (its own, else its namespace's, else brokerDeleteInactiveTopics…) has deleteWhileInactive is
// looked at. It is active while it has producers or consumers, and, by the policy's mode,
// while it has subscriptions (delete_when_no_subscriptions) or a subscription with a backlog
// (delete_when_subscriptions_caught_up). A topic inactive for maxInactiveDurationSeconds, and
// for longer than its retention time (a negative retention keeps it), is deleted with its
// caught-up subscriptions; as upstream, no tombstone is left, so a client may create it again at
// once, and a partitioned topic's partitions go one by one while its metadata stays.
//
// Unlike upstream, letterbox's broker default is off (brokerDeleteInactiveTopicsEnabled=false,
// docs/protocol.md): a local broker holding dead letters nobody has subscribed to yet should
// not drop them behind its user's back. A namespace or topic policy, or the broker.conf key,
// turns it on.

// deleteInactiveTopics deletes the open topics that have been inactive long enough.
func (b *Broker) deleteInactiveTopics(now time.Time) {
	for t := range b.topics.sweep() {
		l := b.layers(t.name)
		p := l.InactiveTopic()
		if !p.DeleteWhileInactive || !t.inactiveLongEnough(p, l.Retention(), now) {
			continue
		}
		if b.deleteInactiveTopic(t, p) {
			b.log.Info("topic deleted: inactive for longer than its inactive topic policy allows",
				"topic", t.full, "mode", p.InactiveTopicDeleteMode, "maxInactiveDurationSeconds", p.MaxInactiveDurationSeconds)
		}
	}
}

// inactiveLongEnough notes when t was last active and reports whether it has been inactive
// for the policy's duration and its retention time.
func (t *topic) inactiveLongEnough(p adminapi.InactiveTopicPolicies, r adminapi.RetentionPolicies, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lastActive.IsZero() || t.activeFor(p.InactiveTopicDeleteMode) {
		t.lastActive = now
		return false
	}
	idle := now.Sub(t.lastActive)
	if idle < time.Duration(p.MaxInactiveDurationSeconds)*time.Second {
		return false
	}
	// Retained data is kept: a negative retention time keeps the topic for good.
	return r.RetentionTimeInMinutes >= 0 && idle >= time.Duration(r.RetentionTimeInMinutes)*time.Minute
}

// activeFor reports whether t is active under delete mode mode. Called with t.mu held.
func (t *topic) activeFor(mode string) bool {
	if len(t.producers) > 0 || len(t.waiting) > 0 {
		return true
	}
	for _, s := range t.subs {
		if len(s.consumers) > 0 {
			return true
		}
		if mode != policy.DeleteWhenSubscriptionsCaughtUp || s.backlogEntries() > 0 {
			return true
		}
	}
	return false
}

// deleteInactiveTopic deletes t if it is still open and still inactive; false when it was not.
func (b *Broker) deleteInactiveTopic(t *topic, p adminapi.InactiveTopicPolicies) bool {
	r := b.topics
	r.mu.Lock()
	stillInactive := false
	if r.topics[t.full] == t {
		t.locked(func() { stillInactive = !t.activeFor(p.InactiveTopicDeleteMode) })
	}
	if !stillInactive {
		r.mu.Unlock()
		return false
	}
	delete(r.topics, t.full)
	r.unindex(t.full, t.name)
	_, partitioned := r.partitioned[t.name.Base().String()]
	r.mu.Unlock()
	b.dropTopic(t, t.name.Partition < 0 || !partitioned)
	return true
}
