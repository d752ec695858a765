package broker

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// A connection can be closed by another goroutine (the broker's Close, the keep-alive, an
// unload) while its reader is between registering a SUBSCRIBE's consumer or a PRODUCER's
// producer on the connection and attaching it to the topic. The close must not read what the
// reader is still writing, and what the reader attaches afterwards must not stay on the topic
// for a connection that is gone: an Exclusive subscription or producer would refuse everyone
// else for the broker's lifetime, and a Shared one would hand entries to nobody.
func TestCloseWhileRegistering(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := New(WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const topicName = "persistent://public/default/close-while-registering"
	name, err := parseTopicName(topicName)
	if err != nil {
		t.Fatal(err)
	}
	tp, serr := b.topics.get(name, true, "")
	if serr != nil {
		t.Fatal(serr)
	}
	newTestConn := func() *conn {
		nc, peer := net.Pipe()
		t.Cleanup(func() { peer.Close() })
		return newConn(b, nc)
	}
	subscribe := func(c *conn, id uint64) (*consumer, *pb.CommandSubscribe) {
		cs := &consumer{id: id, name: "ghost", conn: c, topic: tp, since: time.Now()}
		c.mu.Lock()
		c.consumers[cs.id] = cs
		c.mu.Unlock()
		return cs, &pb.CommandSubscribe{Topic: ptr(topicName), Subscription: ptr("sub"),
			SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: ptr(id), RequestId: ptr(id), Durable: ptr(true)}
	}
	produce := func(c *conn, id uint64) *producer {
		p := &producer{id: id, name: "ghost", conn: c, topic: tp, mode: pb.ProducerAccessMode_Exclusive, since: time.Now()}
		c.mu.Lock()
		c.producers[p.id] = p
		c.mu.Unlock()
		return p
	}

	// The close first, the attaching after: both are refused.
	c := newTestConn()
	cs, cmd := subscribe(c, 1)
	p := produce(c, 1)
	c.close("closed while registering")
	if serr := tp.subscribe(subscribeRequest{cmd: cmd, consumer: cs}); serr == nil || serr.code != pb.ServerError_ServiceNotReady {
		t.Fatalf("SUBSCRIBE of a closed connection's consumer: %v, want ServiceNotReady", serr)
	}
	if serr := tp.addProducer(p); serr == nil || serr.code != pb.ServerError_ServiceNotReady {
		t.Fatalf("PRODUCER of a closed connection: %v, want ServiceNotReady", serr)
	}

	// Both at once, many times: the race detector checks the close against the reader.
	for i := range 200 {
		c := newTestConn()
		cs, cmd := subscribe(c, uint64(i))
		p := produce(c, uint64(i))
		var wg sync.WaitGroup
		wg.Go(func() { c.close("closed while registering") })
		// Attached before the close or refused after it: either way, once the close is done,
		// neither is left on the topic (checked below).
		tp.subscribe(subscribeRequest{cmd: cmd, consumer: cs})
		tp.addProducer(p)
		wg.Wait()
	}

	// Nothing of those connections holds the topic: an official client gets the Exclusive
	// subscription and the Exclusive producer.
	oc, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.NewLoggerWithSlog(quiet)})
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	cons, err := oc.Subscribe(pulsar.ConsumerOptions{Topic: topicName, SubscriptionName: "sub", Type: pulsar.Exclusive})
	if err != nil {
		t.Fatalf("Exclusive subscription after the closed connections: %v", err)
	}
	defer cons.Close()
	prod, err := oc.CreateProducer(pulsar.ProducerOptions{Topic: topicName, ProducerAccessMode: pulsar.ProducerAccessModeExclusive})
	if err != nil {
		t.Fatalf("Exclusive producer after the closed connections: %v", err)
	}
	defer prod.Close()
	if _, err := prod.Send(t.Context(), &pulsar.ProducerMessage{Payload: []byte("m")}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if m, err := cons.Receive(ctx); err != nil || string(m.Payload()) != "m" {
		t.Fatalf("receive: %v", err)
	}
}
