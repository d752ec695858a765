package web

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// What one client can make the admin listener hold, under upstream's settings (broker.Config
// documents each):
//
//   - maxHttpServerConnections bounds open connections: the listener stops accepting at the
//     limit, so further clients wait in the kernel's listen queue, as with upstream's Jetty.
//   - maxConcurrentHttpRequests bounds the requests being handled: more wait for a slot, as
//     upstream's QoS filter makes them, and one still waiting after the read timeout is
//     answered 503.
//   - httpMaxRequestSize (letterbox's 5 MiB when unset) bounds a body: more is refused 413.
//   - Read-header, read, write and idle timeouts (Server.New) close a connection that stalls:
//     a request announcing a megabyte and sending ten bytes is answered 408 and closed after
//     the read timeout, and an answer its client does not read is cut off after the write
//     timeout, freeing its request slot, instead of pinning a descriptor, a goroutine and a
//     slot for good.

// defaultMaxBody is the largest request body accepted unless httpMaxRequestSize says more
// (upstream's default max message size, 5 MiB).
const defaultMaxBody = 5 << 20

// maxBody is the body limit the broker's configuration asks for.
func (s *Server) maxBody() int64 {
	if n := s.b.Config().HTTPMaxRequestSize; n > 0 {
		return n
	}
	return defaultMaxBody
}

// admit bounds the requests handled at once and the size of their bodies.
func (s *Server) admit(next http.Handler) http.Handler {
	cfg := s.b.Config()
	limit := s.maxBody()
	var slots chan struct{}
	if cfg.MaxConcurrentHTTPRequests > 0 {
		slots = make(chan struct{}, cfg.MaxConcurrentHTTPRequests)
	}
	wait := cfg.HTTPReadTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slots != nil {
			select {
			case slots <- struct{}{}:
			default:
				t := time.NewTimer(wait)
				select {
				case slots <- struct{}{}:
					t.Stop()
				case <-t.C:
					writeError(w, http.StatusServiceUnavailable, "Too many concurrent requests; try again later")
					return
				case <-r.Context().Done():
					t.Stop()
					return
				}
			}
			defer func() { <-slots }()
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// limitListener accepts at most n connections at a time: Accept waits while n are open.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newLimitListener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its listener's slot back once, on its first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
