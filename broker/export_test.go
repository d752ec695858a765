package broker

import "time"

// What the external tests of this package need of its insides.

// MaxQueuedOutput is the output a connection may have queued before the broker stops reading
// it (backpressure.go).
const MaxQueuedOutput = maxQueued

// WithKeepAliveTicks makes every connection's keepalive tick by hand: for each connection, in
// the order they are accepted, a channel is handed over on tickers, and a tick is a send on it.
func WithKeepAliveTicks(tickers chan<- chan time.Time) func(*Config) {
	return func(c *Config) {
		c.keepAliveTicks = func() (<-chan time.Time, func()) {
			ch := make(chan time.Time)
			tickers <- ch
			return ch, func() {}
		}
	}
}

// QueuedOutput is the output queued for the connection whose client end is at remote, and
// whether the broker stopped reading it for that; ok is false if there is no such connection.
func QueuedOutput(b *Broker, remote string) (queued int64, paused, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.conns {
		if c.remote == remote {
			return c.out.bytes.Load(), c.out.reading.Load(), true
		}
	}
	return 0, false, false
}
