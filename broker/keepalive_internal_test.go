package broker

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// TestKeepAliveClosesOnlyAnUnansweredPing ticks a connection's keepalive by hand: a client
// that answered the last PING stays connected however long ago it answered (upstream's rule:
// anything heard since the PING), and one that answered nothing until the next tick is closed.
// The rule it replaced, nothing heard for a whole interval, closed the first client too, since
// the second tick comes more than an interval after its answer: what a late tick of a busy
// broker did to idle connections.
func TestKeepAliveClosesOnlyAnUnansweredPing(t *testing.T) {
	const interval = 50 * time.Millisecond
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tickers := make(chan chan time.Time, 1)
	b, err := New(WithLogger(quiet), func(c *Config) {
		c.KeepAliveInterval = interval
		c.keepAliveTicks = func() (<-chan time.Time, func()) {
			ch := make(chan time.Time)
			tickers <- ch
			return ch, func() {}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	nc, err := net.Dial("tcp", b.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := wire.NewReader(nc, wire.MaxFrameSize(wire.DefaultMaxMessageSize))
	send := func(cmd *pb.BaseCommand) {
		t.Helper()
		frame, err := wire.AppendCommand(nil, cmd, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(frame); err != nil {
			t.Fatal(err)
		}
	}
	// next reads the broker's next frame, or the error that ends the connection.
	next := func() (pb.BaseCommand_Type, error) {
		t.Helper()
		if err := nc.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		f, err := r.Next()
		if err != nil {
			return 0, err
		}
		return f.Cmd.GetType(), nil
	}
	var tick chan time.Time
	select {
	case tick = <-tickers:
	case <-time.After(10 * time.Second):
		t.Fatal("no keepalive ticker for the connection")
	}
	send(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
		ClientVersion: proto.String("keepalive-test"), ProtocolVersion: proto.Int32(21),
	}})
	if typ, err := next(); err != nil || typ != pb.BaseCommand_CONNECTED {
		t.Fatalf("after CONNECT: %v, %v; want CONNECTED", typ, err)
	}

	tick <- time.Now()
	if typ, err := next(); err != nil || typ != pb.BaseCommand_PING {
		t.Fatalf("after the first tick: %v, %v; want PING", typ, err)
	}
	send(&pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}})
	// The answer is older than an interval when the next tick comes.
	time.Sleep(3 * interval)
	tick <- time.Now()
	if typ, err := next(); err != nil || typ != pb.BaseCommand_PING {
		t.Fatalf("a tick after an answered PING: %v, %v; want another PING, the connection kept", typ, err)
	}

	// This PING goes unanswered: the next tick closes the connection.
	tick <- time.Now()
	typ, err := next()
	if err == nil {
		t.Fatalf("a tick after an unanswered PING: %v, want the connection closed", typ)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("a tick after an unanswered PING: %v, want the connection closed", err)
	}
}

// isReset reports a connection the peer reset rather than closed in order.
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
