package main

// Stalled admin requests: connections to the admin listener that send the start of a request
// and then nothing, as a slow or hostile client leaves them. Each is watched by a goroutine of
// its own until the broker closes it, the bound passes, or the bench closes it; the watchers
// only read, which the broker cannot tell from a client that has gone silent, so the request
// it sees stays stalled.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stalledRequest is what every stalled connection sends: a request line and one header, with
// the blank line that would end the header never coming.
const stalledRequest = "GET " + adminProbePath + " HTTP/1.1\r\nHost: x\r\n"

// stalledConns are the stalled connections of one run and their watchers, which they own:
// close stops them all.
type stalledConns struct {
	bound time.Duration
	conns []net.Conn
	// closedAfter is, by connection, the time from its partial request to the broker closing
	// it; 0 while it is open, and for good when the bound passed first. Each watcher writes
	// its own slot only, and they are read once every watcher has returned.
	closedAfter []time.Duration
	// reply is, by connection, the first line the broker wrote to it, if any.
	reply   []string
	open    atomic.Int64
	watched sync.WaitGroup
	done    chan struct{} // closed once every watcher has returned
	once    sync.Once
}

// openStalled opens n connections to the admin listener at addr, one after the other, and
// sends each the partial request. On an error it returns those already open, which the caller
// closes as it would the full set.
func openStalled(ctx context.Context, addr string, n int, bound time.Duration) (*stalledConns, error) {
	// The slots are made up front: the watchers write theirs while later connections open.
	s := &stalledConns{bound: bound, closedAfter: make([]time.Duration, n), reply: make([]string, n), done: make(chan struct{})}
	d := net.Dialer{Timeout: 5 * time.Second}
	var err error
	for i := range n {
		var c net.Conn
		if c, err = d.DialContext(ctx, "tcp", addr); err != nil {
			err = fmt.Errorf("stalled connection %d of %d: %w", i+1, n, err)
			break
		}
		if err = c.SetWriteDeadline(time.Now().Add(5 * time.Second)); err == nil {
			_, err = c.Write([]byte(stalledRequest))
		}
		if err != nil {
			c.Close()
			err = fmt.Errorf("stalled connection %d of %d: writing the partial request: %w", i+1, n, err)
			break
		}
		s.conns = append(s.conns, c)
		s.open.Add(1)
		s.watched.Add(1)
		go s.watch(i, c, time.Now())
	}
	go func() {
		s.watched.Wait()
		close(s.done)
	}()
	return s, err
}

// watch waits for the broker to close connection i, reading whatever it writes first, until
// the bound passes or the bench closes the connection.
func (s *stalledConns) watch(i int, c net.Conn, sent time.Time) {
	defer s.watched.Done()
	if err := c.SetReadDeadline(sent.Add(s.bound)); err != nil {
		return
	}
	buf := make([]byte, 256)
	var got []byte
	for {
		n, err := c.Read(buf)
		if len(got) < 256 {
			got = append(got, buf[:n]...)
		}
		if err == nil {
			continue
		}
		// Past the bound, or closed by the bench: still open as far as the broker goes.
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed) {
			return
		}
		// EOF or a reset: the broker closed it.
		s.closedAfter[i] = max(time.Since(sent), time.Nanosecond)
		if line, _, _ := strings.Cut(string(got), "\r\n"); line != "" {
			s.reply[i] = line
		}
		s.open.Add(-1)
		return
	}
}

// stillOpen is how many connections the broker has not closed yet.
func (s *stalledConns) stillOpen() int { return int(s.open.Load()) }

// wait returns once every watcher has (the broker closed every connection, or the bound
// passed), or ctx ends.
func (s *stalledConns) wait(ctx context.Context) {
	select {
	case <-s.done:
	case <-ctx.Done():
	}
}

// close closes every connection and waits for the watchers; it may be called again.
func (s *stalledConns) close() {
	s.once.Do(func() {
		for _, c := range s.conns {
			c.Close()
		}
	})
	<-s.done
}

// stallOutcome is what became of the stalled connections, once close returned.
type stallOutcome struct {
	opened int
	// closes are the times the broker took to close each it closed, sorted.
	closes []time.Duration
	// replies counts the connections the broker answered before closing; reply is one answer.
	replies int
	reply   string
}

func (s *stalledConns) outcome() stallOutcome {
	o := stallOutcome{opened: len(s.conns)}
	for i, d := range s.closedAfter[:len(s.conns)] {
		if d > 0 {
			o.closes = append(o.closes, d)
		}
		if s.reply[i] != "" {
			o.replies++
			o.reply = s.reply[i]
		}
	}
	slices.Sort(o.closes)
	return o
}

// raiseFileLimit raises the process's soft limit on open files to need, if it is lower, within
// the hard limit.
func raiseFileLimit(need uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("reading the open-file limit: %w", err)
	}
	if l.Cur >= need {
		return nil
	}
	if l.Max < need {
		return fmt.Errorf("the open-file limit is %d (hard), below the %d needed", l.Max, need)
	}
	l.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("raising the open-file limit to %d: %w", need, err)
	}
	return nil
}
