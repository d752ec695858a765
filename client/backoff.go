package client

import (
	"context"
	"log/slog"
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

// reconnect is the loop a producer or consumer partition runs after its connection or its
// registration was lost: connect, backing off between tries, until it succeeds, fails for
// good (closeForGood is called with the error) or stop closes. assigned is the broker a CLOSE
// command named; it is tried first and then forgotten, as upstream's clients do. what names
// the partition's role in the log ("producer", "consumer").
func reconnect(stop <-chan struct{}, assigned string, log *slog.Logger, what string,
	connect func(ctx context.Context, assigned string) error, closeForGood func(error)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // ends with this call: cancel runs on return
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	bo := newBackoff()
	for {
		err := connect(ctx, assigned)
		if err == nil {
			return
		}
		if permanent(err) {
			log.Warn(what+" closed: cannot reconnect", "err", err)
			closeForGood(err)
			return
		}
		log.Info(what+" reconnect failed", "err", err)
		assigned = ""
		if !sleepCtx(ctx, bo.Next()) {
			return
		}
	}
}
