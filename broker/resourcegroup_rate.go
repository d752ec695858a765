package broker

import (
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/broker/ratelimit"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Resource group rates, as upstream's ResourceGroupService applies them on one broker: each
// group has one publish limiter (upstream's ResourceGroupPublishLimiter, PIP-322's token
// buckets) and one dispatch limiter (ResourceGroupDispatchLimiter) that the topics of every
// namespace attached to it draw on together. On upstream's cluster a group's rates are shared
// out among the brokers by the usage they report; one broker's share is the whole rate.
//
// A SEND pays the group's publish buckets as it pays its topic's (publish_rate.go): when one is
// empty, its producer's connection is no longer read until they hold tokens again. A delivery
// pays the group's dispatch buckets as it pays its topic's and subscription's
// (dispatch_rate.go): a subscription finding them empty delivers nothing for the backoff.
//
// Locking: a groupLimiter's mutex is a leaf, taken with a topic's mutex held; the groups'
// registry's mutex is a leaf too, never held with a limiter's.

// groupLimiter is one resource group's shared buckets.
type groupLimiter struct {
	mu       sync.Mutex
	pub      publishLimiter  // only rate, configured and the buckets are used
	dispatch dispatchLimiter // only rate, configured and the buckets are used
}

// groupLimiters are the limiters of the groups topics use, by group name.
type groupLimiters struct {
	mu     sync.Mutex
	byName map[string]*groupLimiter
}

// get returns group name's limiter, made on first use.
func (r *groupLimiters) get(name string) *groupLimiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = map[string]*groupLimiter{}
	}
	gl := r.byName[name]
	if gl == nil {
		gl = &groupLimiter{}
		r.byName[name] = gl
	}
	return gl
}

// drop forgets group name's limiter (the group was deleted; no namespace uses it).
func (r *groupLimiters) drop(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byName, name)
}

// groupOf returns the limiter of the resource group namespace policies p attach their topics
// to, with the group's current rates, or nil (no group, or none by that name). Called with a
// topic's mutex held.
func (b *Broker) groupOf(p *adminapi.Policies, now time.Time) *groupLimiter {
	if p == nil || p.ResourceGroupName == "" {
		return nil
	}
	a, unlock := b.adminLocked()
	g, ok := a.resourceGroups[p.ResourceGroupName]
	unlock()
	if !ok {
		return nil
	}
	gl := b.groups.get(p.ResourceGroupName)
	gl.mu.Lock()
	defer gl.mu.Unlock()
	gl.pub.set(policy.GroupPublishRate(g), now)
	gl.dispatch.set(policy.GroupDispatchRate(g), now)
	if !gl.pub.limited() && !gl.dispatch.limited() {
		return nil
	}
	return gl
}

// publishLimited reports whether the group limits what its topics take (nil: no group).
func (gl *groupLimiter) publishLimited() bool {
	if gl == nil {
		return false
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	return gl.pub.limited()
}

// chargePublish takes a SEND's messages and bytes from the group's publish buckets and reports
// whether they still hold tokens.
func (gl *groupLimiter) chargePublish(msgs, bytes int64, now time.Time) bool {
	if gl == nil {
		return true
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	ok := true
	if gl.pub.msgs != nil && !gl.pub.msgs.Consume(msgs, now) {
		ok = false
	}
	if gl.pub.bytes != nil && !gl.pub.bytes.Consume(bytes, now) {
		ok = false
	}
	return ok
}

// publishOpen reports whether the group's publish buckets hold tokens (nil: no group).
func (gl *groupLimiter) publishOpen(now time.Time) bool {
	if gl == nil {
		return true
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	return hasTokens(now, gl.pub.msgs, gl.pub.bytes)
}

// publishWait is how long until the group's publish buckets hold tokens again.
func (gl *groupLimiter) publishWait(now time.Time) time.Duration {
	if gl == nil {
		return 0
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	return throttleDuration(now, gl.pub.msgs, gl.pub.bytes)
}

// dispatchOpen reports whether the group's dispatch buckets hold tokens (nil: no group).
func (gl *groupLimiter) dispatchOpen(now time.Time) bool {
	if gl == nil {
		return true
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	return hasTokens(now, gl.dispatch.msgs, gl.dispatch.bytes)
}

// dispatchTokens is how many messages the group lets its topics deliver now (-1: no limit).
func (gl *groupLimiter) dispatchTokens(now time.Time) int64 {
	if gl == nil {
		return -1
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	if gl.dispatch.msgs == nil {
		return -1
	}
	return max(gl.dispatch.msgs.Tokens(now), 0)
}

// chargeDispatch takes a delivery's messages and bytes from the group's dispatch buckets.
func (gl *groupLimiter) chargeDispatch(msgs, bytes int64, now time.Time) {
	if gl == nil {
		return
	}
	gl.mu.Lock()
	defer gl.mu.Unlock()
	for _, c := range []struct {
		b *ratelimit.Bucket
		n int64
	}{{gl.dispatch.msgs, msgs}, {gl.dispatch.bytes, bytes}} {
		if c.b != nil {
			c.b.Consume(c.n, now)
		}
	}
}
