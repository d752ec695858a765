package broker

import (
	"sync/atomic"
	"time"
)

// Output backpressure. What handlers and dispatchers send a connection waits in its write
// queue until the writer has written it; a client that does not read its answers (or reads
// them slower than it asks) would otherwise grow that queue without bound: a consumer granting
// millions of permits and asking for redelivery again and again, or a client sending requests
// and never reading a response. As upstream stops dispatching to a channel that is not
// writable, past maxQueued bytes:
//
//   - the dispatchers skip the connection's consumers (subscription.canTake, pick), and are
//     signalled again once the writer has brought the queue under resumeQueued;
//   - the connection's reader stops reading commands until then: a client that wants answers
//     must read them. (A client that reads nothing is closed by the keepalive, since it
//     answers no PING either.)
//
// One message may take the queue past maxQueued (it is not split), so a connection holds at
// most maxQueued plus one message of output.

const (
	maxQueued    = 16 << 20
	resumeQueued = 4 << 20
)

// outQueue is a connection's write-queue accounting.
type outQueue struct {
	bytes    atomic.Int64  // queued and not yet written
	skipped  atomic.Bool   // a dispatcher skipped this connection's consumers for it
	reading  atomic.Bool   // the reader waits for the queue to drain
	drainedC chan struct{} // signalled when the queue falls under resumeQueued
}

// writeBlocked reports whether the connection's queue is full; a dispatcher asking notes it,
// to be signalled when it drains. Called with the consumer's topic lock held.
func (c *conn) writeBlocked() bool {
	if c.out.bytes.Load() <= maxQueued {
		return false
	}
	c.out.skipped.Store(true)
	return true
}

// queuedOut counts n bytes more in the write queue.
func (c *conn) queuedOut(n int) { c.out.bytes.Add(int64(n)) }

// wroteOut counts n bytes written, and wakes the reader and the dispatchers that waited once
// the queue is under resumeQueued. Called by the writer.
func (c *conn) wroteOut(n int) {
	if c.out.bytes.Add(-int64(n)) >= resumeQueued {
		return
	}
	if c.out.reading.Load() {
		select {
		case c.out.drainedC <- struct{}{}:
		default:
		}
	}
	if c.out.skipped.CompareAndSwap(true, false) {
		c.mu.Lock()
		topics := make([]*topic, 0, len(c.consumers))
		for _, cs := range c.consumers {
			topics = append(topics, cs.topic)
		}
		c.mu.Unlock()
		for _, t := range topics {
			t.signal()
		}
	}
}

// awaitDrain holds the reader while the write queue is full; false means the connection was
// closed meanwhile.
func (c *conn) awaitDrain() bool {
	if c.out.bytes.Load() <= maxQueued {
		return true
	}
	c.out.reading.Store(true)
	defer c.out.reading.Store(false)
	// The timer is a safety net for a drain that happened between the check and the flag.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for c.out.bytes.Load() >= resumeQueued {
		select {
		case <-c.done:
			return false
		case <-c.out.drainedC:
		case <-tick.C:
		}
	}
	return true
}
