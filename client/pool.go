package client

import (
	"context"
	"fmt"
	"sync"
)

// pool holds one connection per (broker, physical address, index), as upstream's pool. The
// first caller that needs a connection dials it on its own goroutine; others wait for it.
type pool struct {
	cl *Client

	mu     sync.Mutex
	slots  map[string]*poolSlot
	next   int
	closed bool
	all    map[*conn]struct{} // every connection ever handed out and not yet waited for
}

type poolSlot struct {
	ready chan struct{} // closed once c or err is set
	c     *conn
	err   error
}

func newPool(cl *Client) *pool {
	return &pool{cl: cl, slots: make(map[string]*poolSlot), all: make(map[*conn]struct{})}
}

// get returns an open connection to logical through physical.
func (p *pool) get(ctx context.Context, logical, physical string) (*conn, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		p.next++
		key := fmt.Sprintf("%s|%s|%d", logical, physical, p.next%p.cl.opts.MaxConnectionsPerBroker)
		s := p.slots[key]
		if s == nil {
			s = &poolSlot{ready: make(chan struct{})}
			p.slots[key] = s
			p.mu.Unlock()
			c, err := dial(ctx, p.cl, logical, physical)
			p.mu.Lock()
			if err == nil && p.closed {
				p.mu.Unlock()
				c.close(errClientClosing)
				c.wait()
				p.mu.Lock()
				err = ErrClosed
			}
			s.c, s.err = c, err
			if err != nil {
				delete(p.slots, key)
			} else {
				p.all[c] = struct{}{}
			}
			close(s.ready)
			p.mu.Unlock()
			return c, err
		}
		p.mu.Unlock()
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctxError(ctx, "connect to "+physical)
		}
		if s.err != nil {
			return nil, s.err
		}
		if !s.c.isClosed() {
			return s.c, nil
		}
		// Closed since: forget and dial again.
		p.forget(s.c)
	}
}

// forget removes a closed connection so the next get dials a new one.
// count is how many connections are open.
func (p *pool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.all)
}

func (p *pool) forget(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Its goroutines stop on their own once it is closed.
	delete(p.all, c)
	for k, s := range p.slots {
		if s.c == c {
			delete(p.slots, k)
		}
	}
}

// close closes every connection and waits for their goroutines.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	conns := make([]*conn, 0, len(p.all))
	for c := range p.all {
		conns = append(conns, c)
	}
	p.all = map[*conn]struct{}{}
	p.slots = map[string]*poolSlot{}
	p.mu.Unlock()
	for _, c := range conns {
		c.close(errClientClosing)
	}
	for _, c := range conns {
		c.wait()
	}
}
