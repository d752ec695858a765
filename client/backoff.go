package client

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is exponential backoff with jitter, 100ms doubling up to 60s, as upstream's clients.
type backoff struct {
	next, max time.Duration
}

func newBackoff() *backoff { return &backoff{next: 100 * time.Millisecond, max: 60 * time.Second} }

// Next returns the next delay: the current step plus up to 20% jitter either way.
func (b *backoff) Next() time.Duration {
	d := b.next
	b.next = min(b.next*2, b.max)
	jitter := time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
	return max(d+jitter, time.Millisecond)
}

func (b *backoff) Reset() { b.next = 100 * time.Millisecond }

// sleepCtx waits d or until ctx is done, reporting whether the full wait happened.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
