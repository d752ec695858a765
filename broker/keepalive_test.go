package broker_test

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
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
	tickers := make(chan chan time.Time, 4)
	b := startRawBroker(t, func(c *broker.Config) {
		c.KeepAliveInterval = interval
		broker.WithKeepAliveTicks(tickers)(c)
	})
	c, _ := connectRaw(t, b, rawClientVersion, 21)
	tick := nextTicker(t, tickers)

	tick <- time.Now()
	expectPing(c, "after the first tick")
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}})
	// The answer is older than an interval when the next tick comes.
	time.Sleep(3 * interval)
	tick <- time.Now()
	expectPing(c, "a tick after an answered PING (the connection kept)")

	// This PING goes unanswered: the next tick closes the connection.
	tick <- time.Now()
	c.nc.SetReadDeadline(time.Now().Add(rawTimeout))
	f, err := c.r.Next()
	if err == nil {
		t.Fatalf("a tick after an unanswered PING: %v, want the connection closed", f.Cmd.GetType())
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("a tick after an unanswered PING: %v, want the connection closed", err)
	}
}

// TestKeepAliveClosesAClientThatReadsNothing: a consumer that takes more than the output bound
// and reads none of it is no longer read (backpressure.go), and its answer to a PING, if it
// sends one, is never heard: the keepalive closes it, as docs/protocol.md says, rather than
// keep its queued output forever.
func TestKeepAliveClosesAClientThatReadsNothing(t *testing.T) {
	tickers := make(chan chan time.Time, 4)
	b := startRawBroker(t, func(c *broker.Config) {
		c.KeepAliveInterval = time.Minute
		broker.WithKeepAliveTicks(tickers)(c)
	})
	const topic = "persistent://public/default/keepalive-unread"
	producer, _ := connectRaw(t, b, rawClientVersion, 21)
	nextTicker(t, tickers) // the producer's connection: never ticked
	payload := strings.Repeat("x", 1<<20)
	// Four times the bound: what the sockets' buffers take besides (many MiB on loopback) must
	// still leave more than the bound to queue.
	payloads := make([]string, 4*broker.MaxQueuedOutput/len(payload))
	for i := range payloads {
		payloads[i] = payload
	}
	producer.produce(topic, payloads...)

	c, _ := connectRaw(t, b, rawClientVersion, 21)
	tick := nextTicker(t, tickers)
	consumerID := c.id()
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("s"),
		SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: proto.Uint64(consumerID),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
	c.flow(consumerID, 1000)
	remote := c.nc.LocalAddr().String()
	// The broker stops reading a connection at the first frame it reads with the queue over
	// the bound. The dispatchers stop at the bound too, and the socket's buffers may then take
	// the queue back under it, where the dispatchers wait for a drain that never comes: a
	// FLOW now and then makes them dispatch again, and is the frame read.
	deadline := time.Now().Add(10 * time.Second)
	for _, paused, _ := broker.QueuedOutput(b, remote); !paused; _, paused, _ = broker.QueuedOutput(b, remote) {
		if time.Now().After(deadline) {
			queued, _, _ := broker.QueuedOutput(b, remote)
			t.Fatalf("the broker still reads a client that reads nothing, %d bytes queued for it", queued)
		}
		c.flow(consumerID, 1)
		time.Sleep(20 * time.Millisecond)
	}
	tick <- time.Now() // heard the FLOW: pings
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}})
	tick <- time.Now() // the answer lies unread
	// Closed before this client reads anything that could let the broker read the answer.
	for _, _, open := broker.QueuedOutput(b, remote); open; _, _, open = broker.QueuedOutput(b, remote) {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("a client that reads nothing is still connected after an unheard PING")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.expectClosed(rawTimeout)
}

// nextTicker is the keepalive ticker of the connection the broker accepted next.
func nextTicker(t *testing.T, tickers chan chan time.Time) chan time.Time {
	t.Helper()
	select {
	case tick := <-tickers:
		return tick
	case <-time.After(rawTimeout):
		t.Fatal("no keepalive ticker for the connection")
		return nil
	}
}

// expectPing reads the next frame, which must be the broker's PING (rawConn.next answers
// those itself).
func expectPing(c *rawConn, when string) {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(rawTimeout))
	f, err := c.r.Next()
	switch {
	case err != nil:
		c.t.Fatalf("%s: %v; want PING", when, err)
	case f.Cmd.GetType() != pb.BaseCommand_PING:
		c.t.Fatalf("%s: %v; want PING", when, f.Cmd.GetType())
	}
}
