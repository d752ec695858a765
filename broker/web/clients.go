package web

import (
	"net/http"
	"sync"
	"time"
)

// Who has been asking: the client connections (remote host:port) that made a request, and
// when they last did. letterbox asks before it quits over an embedded broker that others still
// use, and an admin client (pulsar-admin, a script) holds no connection between its calls; its
// requests are what says it is there.

// clientsKept bounds how long a connection's last request is remembered.
const clientsKept = 5 * time.Minute

// clients remembers the last request of each client connection.
type clients struct {
	mu   sync.Mutex
	last map[string]time.Time // by remote address
	now  func() time.Time
}

// seen records a request from remote, and forgets connections quiet for clientsKept.
func (c *clients) seen(remote string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.last == nil {
		c.last = map[string]time.Time{}
	}
	c.last[remote] = now
	if len(c.last) > 64 { // amortised: a busy client's new connections do not pile up
		for r, t := range c.last {
			if now.Sub(t) > clientsKept {
				delete(c.last, r)
			}
		}
	}
}

// since lists the connections that made a request at or after t.
func (c *clients) since(t time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for r, at := range c.last {
		if !at.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

// recordClients notes each request's connection before handing it on.
func (s *Server) recordClients(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.clients.seen(r.RemoteAddr)
		next.ServeHTTP(w, r)
	})
}

// Clients lists the client connections (remote host:port, as each request's RemoteAddr) that
// made a request at or after t, at most clientsKept ago.
func (s *Server) Clients(t time.Time) []string { return s.clients.since(t) }
