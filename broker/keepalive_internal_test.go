package broker

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
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
	b, tickers := keepAliveBroker(t, interval)
	c := dialKeepAlive(t, b, tickers)

	c.tick <- time.Now()
	c.expect(pb.BaseCommand_PING, "after the first tick")
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}})
	// The answer is older than an interval when the next tick comes.
	time.Sleep(3 * interval)
	c.tick <- time.Now()
	c.expect(pb.BaseCommand_PING, "a tick after an answered PING (the connection kept)")

	// This PING goes unanswered: the next tick closes the connection.
	c.tick <- time.Now()
	typ, err := c.next()
	if err == nil {
		t.Fatalf("a tick after an unanswered PING: %v, want the connection closed", typ)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("a tick after an unanswered PING: %v, want the connection closed", err)
	}
}

// TestKeepAliveClosesAClientThatReadsNothing: a consumer that takes more than the output bound
// and reads none of it is no longer read (backpressure.go), and its answer to a PING, if it
// sends one, is never heard: the keepalive closes it, as docs/protocol.md says, rather than
// keep its queued output forever.
func TestKeepAliveClosesAClientThatReadsNothing(t *testing.T) {
	b, tickers := keepAliveBroker(t, time.Minute)
	const topic = "persistent://public/default/keepalive-unread"
	oc, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(),
		Logger: plog.NewLoggerWithSlog(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	p, err := oc.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 1<<20)
	for range 2 * maxQueued / len(payload) {
		if _, err := p.Send(t.Context(), &pulsar.ProducerMessage{Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	<-tickers // the producer's connection: never ticked

	c := dialKeepAlive(t, b, tickers)
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: &pb.CommandSubscribe{
		Topic: proto.String(topic), Subscription: proto.String("s"), SubType: pb.CommandSubscribe_Exclusive.Enum(),
		ConsumerId: proto.Uint64(1), RequestId: proto.Uint64(1), InitialPosition: pb.CommandSubscribe_Earliest.Enum(),
	}})
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_FLOW.Enum(), Flow: &pb.CommandFlow{ConsumerId: proto.Uint64(1), MessagePermits: proto.Uint32(1000)}})
	cn := b.connOf(t, c.nc.LocalAddr().String())
	deadline := time.Now().Add(10 * time.Second)
	for cn.out.bytes.Load() <= maxQueued {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes queued for a consumer that reads nothing, want more than %d", cn.out.bytes.Load(), maxQueued)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// One frame more: the broker reads it, finds the queue over its bound, and stops reading.
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PING.Enum(), Ping: &pb.CommandPing{}})
	for !cn.out.reading.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the broker still reads a client that reads nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.tick <- time.Now() // heard the PING: pings
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}})
	c.tick <- time.Now() // the answer lies unread
	select {
	case <-cn.done:
	case <-time.After(10 * time.Second):
		t.Fatal("a client that reads nothing is still connected after an unheard PING")
	}
}

// keepAliveBroker starts a broker whose connections' keepalive tickers are handed to the test,
// one per connection in the order they are accepted.
func keepAliveBroker(t *testing.T, interval time.Duration) (*Broker, chan chan time.Time) {
	t.Helper()
	tickers := make(chan chan time.Time, 4)
	b, err := New(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), func(c *Config) {
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
	t.Cleanup(func() { b.Close() })
	return b, tickers
}

// connOf is the broker's side of the connection whose client end is at remote.
func (b *Broker) connOf(t *testing.T, remote string) *conn {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.conns {
		if c.remote == remote {
			return c
		}
	}
	t.Fatalf("no connection from %s", remote)
	return nil
}

// keepAliveConn is a raw client connection and the keepalive ticker of its broker side.
type keepAliveConn struct {
	t    *testing.T
	nc   net.Conn
	r    *wire.Reader
	tick chan time.Time
}

// dialKeepAlive connects to b and completes CONNECT.
func dialKeepAlive(t *testing.T, b *Broker, tickers chan chan time.Time) *keepAliveConn {
	t.Helper()
	nc, err := net.Dial("tcp", b.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &keepAliveConn{t: t, nc: nc, r: wire.NewReader(nc, wire.MaxFrameSize(wire.DefaultMaxMessageSize))}
	select {
	case c.tick = <-tickers:
	case <-time.After(10 * time.Second):
		t.Fatal("no keepalive ticker for the connection")
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
		ClientVersion: proto.String("keepalive-test"), ProtocolVersion: proto.Int32(21),
	}})
	c.expect(pb.BaseCommand_CONNECTED, "after CONNECT")
	return c
}

func (c *keepAliveConn) send(cmd *pb.BaseCommand) {
	c.t.Helper()
	frame, err := wire.AppendCommand(nil, cmd, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.nc.Write(frame); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the broker's next frame, or the error that ends the connection.
func (c *keepAliveConn) next() (pb.BaseCommand_Type, error) {
	c.t.Helper()
	if err := c.nc.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		c.t.Fatal(err)
	}
	f, err := c.r.Next()
	if err != nil {
		return 0, err
	}
	return f.Cmd.GetType(), nil
}

func (c *keepAliveConn) expect(want pb.BaseCommand_Type, when string) {
	c.t.Helper()
	if typ, err := c.next(); err != nil || typ != want {
		c.t.Fatalf("%s: %v, %v; want %v", when, typ, err, want)
	}
}

// isReset reports a connection the peer reset rather than closed in order.
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
