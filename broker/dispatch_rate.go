package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/broker/ratelimit"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Dispatch throttling, as upstream's dispatch rate limiters with PIP-322's token buckets: a
// topic's dispatch rate (its policy, else its namespace's, else
// dispatchThrottlingRatePerTopicInMsg / …InByte) bounds what all its subscriptions deliver
// together, and its subscription dispatch rate (a subscription's own, set in the topic's
// subscriptionPolicies, else the topic's, else its namespace's, else …PerSubscription…) what each one delivers.
// Every delivery takes its messages (a batch counts its messages, as upstream with
// dispatchThrottlingOnBatchMessageEnabled=false) and bytes from both; a subscription whose
// buckets are empty delivers nothing until upstream's backoff has passed
// (MESSAGE_RATE_BACKOFF_MS, a second) and they hold tokens again. With relativeToPublishRate
// the limits are added to the topic's publish rate, measured over the last second. A topic
// whose namespace is attached to a resource group also pays, and waits for, the dispatch
// buckets its group's topics share (resourcegroup_rate.go).

// dispatchBackoff is upstream's MESSAGE_RATE_BACKOFF_MS.
const dispatchBackoff = time.Second

// dispatchLimiter is the dispatch rate state of a topic or of one subscription. Guarded by the
// topic's mutex.
type dispatchLimiter struct {
	rate        adminapi.DispatchRate
	configured  bool
	msgs, bytes *ratelimit.Bucket // nil: no limit of that kind
}

// set applies rate, with fresh buckets when it changed.
func (dl *dispatchLimiter) set(rate adminapi.DispatchRate, now time.Time) {
	if dl.configured && rate == dl.rate {
		return
	}
	dl.rate, dl.configured = rate, true
	period := time.Duration(max(rate.RatePeriodInSecond, 1)) * time.Second
	dl.msgs = newBucket(int64(rate.DispatchThrottlingRateInMsg), period, now)
	dl.bytes = newBucket(rate.DispatchThrottlingRateInByte, period, now)
}

func (dl *dispatchLimiter) limited() bool { return dl.msgs != nil || dl.bytes != nil }

// follow adds the topic's publish rate to the limits of a relativeToPublishRate rate.
func (dl *dispatchLimiter) follow(in publishRateMeter, now time.Time) {
	if !dl.rate.RelativeToPublishRate {
		return
	}
	msgs, bytes := in.rates()
	if dl.msgs != nil {
		dl.msgs.SetRate(int64(dl.rate.DispatchThrottlingRateInMsg)+msgs, now)
	}
	if dl.bytes != nil {
		dl.bytes.SetRate(dl.rate.DispatchThrottlingRateInByte+bytes, now)
	}
}

// publishRateMeter measures a topic's publish rate a second at a time. Guarded by the topic's
// mutex.
type publishRateMeter struct {
	at                time.Time
	msgIn, bytesIn    int64 // the counters at 'at'
	msgRate, byteRate int64
}

// sample updates the rates when a second has passed since the last sample.
func (m *publishRateMeter) sample(now time.Time, msgIn, bytesIn int64) {
	if m.at.IsZero() {
		m.at, m.msgIn, m.bytesIn = now, msgIn, bytesIn
		return
	}
	elapsed := now.Sub(m.at)
	if elapsed < time.Second {
		return
	}
	m.msgRate = (msgIn - m.msgIn) * int64(time.Second) / int64(elapsed)
	m.byteRate = (bytesIn - m.bytesIn) * int64(time.Second) / int64(elapsed)
	m.at, m.msgIn, m.bytesIn = now, msgIn, bytesIn
}

func (m publishRateMeter) rates() (msgs, bytes int64) { return m.msgRate, m.byteRate }

// dispatchThrottled reports whether s may deliver nothing now for the topic's or its own
// dispatch rate; if so it sets when to try again. Called with the topic's mutex held.
func (s *subscription) dispatchThrottled(now time.Time) bool {
	t := s.topic
	lim := t.limits()
	rate, own := lim.subDispatchRates[s.name]
	if !own {
		rate = lim.subDispatchRate
	}
	s.rateLimit.set(rate, now)
	t.inRate.sample(now, t.stats.msgIn, t.stats.bytesIn)
	t.dispatchLimit.follow(t.inRate, now)
	s.rateLimit.follow(t.inRate, now)
	return s.rateSpent(now)
}

// rateSpent reports whether the topic's or s's dispatch rate allows nothing more now; if so, s
// delivers again after the backoff. Called with the topic's mutex held.
func (s *subscription) rateSpent(now time.Time) bool {
	t := s.topic
	if hasTokens(now, t.dispatchLimit.msgs, t.dispatchLimit.bytes, s.rateLimit.msgs, s.rateLimit.bytes) &&
		t.group.dispatchOpen(now) {
		return false
	}
	s.retryAt = now.Add(dispatchBackoff)
	return true
}

// dispatchTokens is how many messages s may deliver now (-1: no limit). Called with the
// topic's mutex held.
func (s *subscription) dispatchTokens(now time.Time) int64 {
	n := s.topic.group.dispatchTokens(now) // resourcegroup_rate.go
	for _, b := range []*ratelimit.Bucket{s.topic.dispatchLimit.msgs, s.rateLimit.msgs} {
		if b != nil {
			if tokens := max(b.Tokens(now), 0); n < 0 || tokens < n {
				n = tokens
			}
		}
	}
	return n
}

// chargeDispatch takes a delivery's messages and bytes from the topic's and s's buckets.
// Called with the topic's mutex held.
func (s *subscription) chargeDispatch(msgs, bytes int64, now time.Time) {
	for _, b := range []*ratelimit.Bucket{s.topic.dispatchLimit.msgs, s.rateLimit.msgs} {
		if b != nil {
			b.Consume(msgs, now)
		}
	}
	for _, b := range []*ratelimit.Bucket{s.topic.dispatchLimit.bytes, s.rateLimit.bytes} {
		if b != nil {
			b.Consume(bytes, now)
		}
	}
	s.topic.group.chargeDispatch(msgs, bytes, now)
}
