package cli

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/tui"
)

// Who else uses the broker letterbox runs: q asks before quitting stops it while anyone does.
// Its binary-protocol connections are counted by the broker, less letterbox's own (the TUI's,
// the demo workload's); an admin client holds no connection between calls, so the admin
// requests of the last adminWithin say it is there, less those of letterbox's own connections.

// adminWithin is how recent an admin request must be for its client to count as using the
// broker.
const adminWithin = 30 * time.Second

// selfConns remembers the local addresses of the admin connections letterbox opens to its own
// broker, so that the broker's list of who made requests can be told from them. A closed
// connection is remembered for a while: its requests stay in that list for adminWithin.
type selfConns struct {
	mu     sync.Mutex
	closed map[string]time.Time // local address → when it closed (zero: open)
}

// httpClient is an admin HTTP client whose connections are letterbox's own.
func (s *selfConns) httpClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		local := c.LocalAddr().String()
		s.mu.Lock()
		if s.closed == nil {
			s.closed = map[string]time.Time{}
		}
		now := time.Now()
		for a, at := range s.closed { // forget those whose requests the broker no longer counts
			if !at.IsZero() && now.Sub(at) > 2*adminWithin {
				delete(s.closed, a)
			}
		}
		s.closed[local] = time.Time{}
		s.mu.Unlock()
		return &selfConn{Conn: c, s: s, local: local}, nil
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// selfConn notes when it closes.
type selfConn struct {
	net.Conn
	s     *selfConns
	local string
	once  sync.Once
}

func (c *selfConn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		c.s.closed[c.local] = time.Now()
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}

// others counts the remote addresses that are not letterbox's own connections.
func (s *selfConns) others(remotes []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range remotes {
		if _, own := s.closed[r]; !own {
			n++
		}
	}
	return n
}

// othersOf says who else uses the embedded broker e: its connections less own (the TUI's and
// the workload's, counted when asked), and the admin clients of the last adminWithin that are
// not self's connections.
func othersOf(e *embedded, self *selfConns, own func() int) func() tui.Others {
	return func() tui.Others {
		o := tui.Others{Connections: max(0, e.b.ConnectionCount()-own()), AdminWithin: adminWithin}
		if e.w != nil {
			o.AdminClients = self.others(e.w.Clients(time.Now().Add(-adminWithin)))
		}
		return o
	}
}
