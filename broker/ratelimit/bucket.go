// Package ratelimit is the token bucket behind the broker's publish, dispatch and subscribe
// rates, as upstream's AsyncTokenBucket of PIP-322 behaves: a bucket of rate tokens per
// period, full at the start, refilled continuously (carrying the remainder so that a low rate
// loses nothing to rounding) up to its capacity, the rate, and consumed without a floor, so
// that what is taken past the limit is paid back before anything else passes. A caller that
// finds the bucket empty throttles, and asks again after ThrottleDuration.
//
// A Bucket is a plain value with no lock and no clock of its own: its owner passes the time
// (the broker's clock, a fake one in tests) and guards it.
package ratelimit

import "time"

// resolution is upstream's default resolution: after throttling, a bucket must hold the tokens
// of this much time (at least one) before the caller goes on.
const resolution = 16 * time.Millisecond

// Bucket is one token bucket. The zero value is not useful; use New.
type Bucket struct {
	rate      int64
	period    time.Duration
	tokens    int64
	last      time.Time
	remainder time.Duration // time since last not yet turned into a token
}

// New returns a full bucket of rate tokens per period (a period under a nanosecond is a
// second) as of now.
func New(rate int64, period time.Duration, now time.Time) *Bucket {
	if period <= 0 {
		period = time.Second
	}
	return &Bucket{rate: rate, period: period, tokens: rate, last: now}
}

// Rate is the tokens a period adds.
func (b *Bucket) Rate() int64 { return b.rate }

// SetRate changes the rate (and the capacity with it), keeping the tokens there are.
func (b *Bucket) SetRate(rate int64, now time.Time) {
	b.refill(now)
	b.rate = rate
	b.tokens = min(b.tokens, rate)
}

// refill adds the tokens the time since the last refill made, up to the capacity.
func (b *Bucket) refill(now time.Time) {
	elapsed := now.Sub(b.last) + b.remainder
	b.last = now
	if elapsed <= 0 || b.rate <= 0 {
		b.remainder = 0
		return
	}
	// Split elapsed so that elapsed*rate cannot overflow on long idle times.
	if full := elapsed / b.period; full > 0 {
		b.tokens += min(int64(full), 1<<20) * b.rate
		elapsed -= full * b.period
	}
	add := int64(elapsed) * b.rate / int64(b.period)
	b.remainder = elapsed - time.Duration(add*int64(b.period)/b.rate)
	b.tokens = min(b.tokens+add, b.rate)
}

// Tokens returns the tokens in the bucket now (negative after consumption past it).
func (b *Bucket) Tokens(now time.Time) int64 {
	b.refill(now)
	return b.tokens
}

// Consume takes n tokens, however many there are, and reports whether any remain.
func (b *Bucket) Consume(n int64, now time.Time) bool {
	b.refill(now)
	b.tokens -= n
	return b.tokens > 0
}

// ThrottleDuration is how long, from now, until the bucket holds the tokens of one resolution
// (at least one token): when a throttled caller should look again.
func (b *Bucket) ThrottleDuration(now time.Time) time.Duration {
	b.refill(now)
	target := max(int64(resolution)*b.rate/int64(b.period), 1)
	need := target - b.tokens
	if need <= 0 || b.rate <= 0 {
		return 0
	}
	return time.Duration(need * int64(b.period) / b.rate)
}
