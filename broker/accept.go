package broker

import (
	"errors"
	"net"
	"time"
)

// acceptOn is the accept loop of a listener; fe is nil for the broker's own
// (the others are the cluster fixture's front ends, frontend.go).
func (b *Broker) acceptOn(ln net.Listener, fe *frontEnd) {
	defer b.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			b.log.Warn("accept failed", "err", err)
			select {
			case <-b.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		c := newConn(b, nc)
		c.front = fe
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			nc.Close()
			return
		}
		refused := b.admitLocked(c) // limits.go
		b.mu.Unlock()
		if refused != "" {
			b.refuseConn(nc, refused)
			continue
		}
		c.start()
	}
}
