package ratelimit

import (
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

// A bucket starts full, lets its rate through per period and no more, and carries what was
// taken past it over: over a long run, exactly rate tokens a period pass.
func TestBucketHoldsItsRate(t *testing.T) {
	b := New(100, time.Second, t0)
	passed := 0
	now := t0
	// A caller that takes one token at a time, as fast as it may: every 1 ms of clock it asks,
	// and goes on only while the bucket has tokens.
	for range 10_000 { // 10 s
		if b.Tokens(now) > 0 {
			b.Consume(1, now)
			passed++
		}
		now = now.Add(time.Millisecond)
	}
	// The initial 100 plus 100 a second.
	if passed < 1099 || passed > 1101 {
		t.Fatalf("passed %d in 10 s at 100/s from a full bucket, want about 1100", passed)
	}
}

// Taking more than there is leaves the bucket negative; it is paid back before anything else
// passes, and ThrottleDuration says when that is.
func TestBucketDebtAndThrottleDuration(t *testing.T) {
	b := New(10, time.Second, t0)
	if b.Consume(25, t0) {
		t.Fatal("25 tokens from a bucket of 10: some remain")
	}
	if got := b.Tokens(t0); got != -15 {
		t.Fatalf("tokens = %d, want -15", got)
	}
	// 16 tokens are needed to hold one (the resolution's 0.16 rounds down to 1): 1.6 s.
	if d := b.ThrottleDuration(t0); d != 1600*time.Millisecond {
		t.Fatalf("throttle duration = %v, want 1.6s", d)
	}
	if got := b.Tokens(t0.Add(1600 * time.Millisecond)); got != 1 {
		t.Fatalf("tokens after 1.6 s = %d, want 1", got)
	}
	// The capacity is the rate: a long idle time fills it, no more.
	if got := b.Tokens(t0.Add(time.Hour)); got != 10 {
		t.Fatalf("tokens after an hour = %d, want 10", got)
	}
}

// A low rate loses nothing to rounding: 3 tokens every 10 s are 3 tokens every 10 s, asked
// for every 100 ms.
func TestBucketCarriesTheRemainder(t *testing.T) {
	b := New(3, 10*time.Second, t0)
	b.Consume(3, t0)
	now := t0
	for range 1000 { // 100 s
		now = now.Add(100 * time.Millisecond)
		b.Tokens(now)
	}
	if got := b.Tokens(now); got != 3 {
		t.Fatalf("tokens after 100 s at 3 per 10 s = %d, want the capacity 3", got)
	}
	b.Consume(3, now)
	for range 33 { // 3.3 s
		now = now.Add(100 * time.Millisecond)
		b.Tokens(now)
	}
	if got := b.Tokens(now); got != 0 {
		t.Fatalf("tokens 3.3 s after emptying at 3 per 10 s = %d, want 0", got)
	}
	if got := b.Tokens(now.Add(100 * time.Millisecond)); got != 1 {
		t.Fatalf("tokens 3.4 s after emptying = %d, want 1", got)
	}
}

// A new rate keeps the tokens there are, up to the new capacity.
func TestBucketSetRate(t *testing.T) {
	b := New(100, time.Second, t0)
	b.Consume(40, t0)
	b.SetRate(50, t0)
	if got := b.Tokens(t0); got != 50 {
		t.Fatalf("tokens after lowering the rate to 50 = %d, want 50 (the new capacity)", got)
	}
	b.SetRate(1000, t0)
	if got := b.Tokens(t0.Add(10 * time.Millisecond)); got != 60 {
		t.Fatalf("tokens 10 ms after raising the rate to 1000 = %d, want 60", got)
	}
}
