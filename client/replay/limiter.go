package replay

import (
	"context"
	"time"
)

// limiter spaces sends to a rate: one every 1/rate seconds, never in a burst after a pause
// (time not used is not saved up).
type limiter struct {
	every time.Duration
	next  time.Time
	clock clock
}

// clock is the limiter's time: the wall clock, or a test's.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, returning ctx's error then.
	Sleep(ctx context.Context, d time.Duration) error
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *limiter) init(rate float64, c clock) {
	l.clock = c
	if l.clock == nil {
		l.clock = wallClock{}
	}
	if rate > 0 {
		l.every = time.Duration(float64(time.Second) / rate)
	}
}

func (l *limiter) wait(ctx context.Context) error {
	if l.every == 0 {
		return ctx.Err()
	}
	now := l.clock.Now()
	if l.next.Before(now) {
		l.next = now
	}
	d := l.next.Sub(now)
	l.next = l.next.Add(l.every)
	if d <= 0 {
		return ctx.Err()
	}
	return l.clock.Sleep(ctx, d)
}
