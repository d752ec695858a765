package broker

import (
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/broker/ratelimit"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Publish throttling, as upstream's PublishRateLimiterImpl (PIP-322): a topic's publish rate
// (its policy, else its namespace's, else maxPublishRatePerTopicInMessages / …InBytes) is a
// token bucket of messages and one of bytes. Every SEND takes its messages and bytes, and is
// stored whatever the buckets hold; when a bucket is empty the SEND's producer is throttled:
// its connection is no longer read (as upstream turns off the channel's auto-read), so the
// client's further sends wait in its own queue and nothing is refused. The throttled producers
// are let go, in the order they were throttled, once the buckets hold the tokens of upstream's
// resolution again (ThrottleDuration), by a dispatch round of the topic. A connection
// stays paused while any of its producers is throttled, and the keepalive does not close it
// meanwhile (the client's answers to its pings wait in the paused stream).

// publishLimiter is a topic's publish rate state. Guarded by the topic's mutex.
type publishLimiter struct {
	rate        adminapi.PublishRate
	configured  bool
	msgs, bytes *ratelimit.Bucket // nil: no limit of that kind
	queue       []*producer       // throttled producers, to let go in order
	retryAt     time.Time         // when to look at the queue again; zero: empty queue
}

// set applies rate, with fresh buckets when it changed (as upstream builds new ones).
func (pl *publishLimiter) set(rate adminapi.PublishRate, now time.Time) {
	if pl.configured && rate == pl.rate {
		return
	}
	pl.rate, pl.configured = rate, true
	pl.msgs = newBucket(int64(rate.PublishThrottlingRateInMsg), time.Second, now)
	pl.bytes = newBucket(rate.PublishThrottlingRateInByte, time.Second, now)
}

func (pl *publishLimiter) limited() bool { return pl.msgs != nil || pl.bytes != nil }

// newBucket is a bucket of rate tokens per period, or nil for no limit (rate ≤ 0).
func newBucket(rate int64, period time.Duration, now time.Time) *ratelimit.Bucket {
	if rate <= 0 {
		return nil
	}
	return ratelimit.New(rate, period, now)
}

// hasTokens reports whether every bucket there is holds tokens.
func hasTokens(now time.Time, buckets ...*ratelimit.Bucket) bool {
	for _, b := range buckets {
		if b != nil && b.Tokens(now) <= 0 {
			return false
		}
	}
	return true
}

// throttleDuration is how long until every bucket there is holds tokens again.
func throttleDuration(now time.Time, buckets ...*ratelimit.Bucket) time.Duration {
	var d time.Duration
	for _, b := range buckets {
		if b != nil {
			d = max(d, b.ThrottleDuration(now))
		}
	}
	return d
}

// chargePublish takes the tokens of one stored SEND and throttles its producer when a bucket
// is empty. Called with t.mu held (after limits, which configures the buckets).
func (t *topic) chargePublish(p *producer, msgs int64, bytes int) {
	pl := &t.pub
	if !pl.limited() && t.group == nil {
		return
	}
	now := t.b.now()
	empty := false
	if pl.msgs != nil && !pl.msgs.Consume(msgs, now) {
		empty = true
	}
	if pl.bytes != nil && !pl.bytes.Consume(int64(bytes), now) {
		empty = true
	}
	if !t.group.chargePublish(msgs, int64(bytes), now) { // resourcegroup_rate.go
		empty = true
	}
	if !empty || !p.throttled.CompareAndSwap(false, true) {
		return
	}
	p.conn.throttle()
	pl.queue = append(pl.queue, p)
	if pl.retryAt.IsZero() {
		pl.retryAt = now.Add(t.publishWait(now))
		t.signal() // the dispatcher sets its timer for retryAt
	}
}

// publishOpen reports whether t's publish buckets and its resource group's hold tokens.
func (t *topic) publishOpen(now time.Time) bool {
	return hasTokens(now, t.pub.msgs, t.pub.bytes) && t.group.publishOpen(now)
}

// publishWait is how long until t's publish buckets and its resource group's hold tokens.
func (t *topic) publishWait(now time.Time) time.Duration {
	return max(throttleDuration(now, t.pub.msgs, t.pub.bytes), t.group.publishWait(now))
}

// releasePublishers lets throttled producers go while the buckets hold tokens, and says when to
// look again. Called by a dispatch round of the topic (and when the rate is removed) with
// t.mu held.
func (t *topic) releasePublishers(now time.Time) {
	pl := &t.pub
	for len(pl.queue) > 0 && t.publishOpen(now) {
		p := pl.queue[0]
		pl.queue = pl.queue[1:]
		p.unthrottle()
	}
	pl.retryAt = time.Time{}
	if len(pl.queue) > 0 {
		pl.retryAt = now.Add(max(t.publishWait(now), time.Millisecond))
	}
}

// unthrottle lets p's connection be read again, once, if p was throttled (also when p is
// closed while throttled, producer.go).
func (p *producer) unthrottle() {
	if p.throttled.CompareAndSwap(true, false) {
		p.conn.unthrottle()
	}
}

// connThrottle counts a connection's throttled producers; its reader waits while any is.
type connThrottle struct {
	count   atomic.Int32
	resumeC chan struct{} // capacity 1: the count fell to 0
}

func (c *conn) throttle() { c.pub.count.Add(1) }

func (c *conn) unthrottle() {
	if c.pub.count.Add(-1) == 0 {
		select {
		case c.pub.resumeC <- struct{}{}:
		default:
		}
	}
}

// throttled reports whether the connection's reader is paused for its producers' publish rate.
func (c *conn) throttled() bool { return c.pub.count.Load() > 0 }

// awaitUnthrottled holds the reader while a producer of the connection is throttled; false
// means the connection was closed meanwhile.
func (c *conn) awaitUnthrottled() bool {
	for c.pub.count.Load() > 0 {
		select {
		case <-c.done:
			return false
		case <-c.pub.resumeC:
		}
	}
	return true
}
