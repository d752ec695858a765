package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Deletion and termination end to end (PIP-139): deleted topics and namespaces close their
// clients for good and stay deleted, a terminated topic drains; driven by the official Go client
// and by raw frames for what it does not send.

// PIP-139: deleting a topic closes its clients with allow_reconnect=false and a reason.
func TestDeleteClosesForGood(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	topic := topicName(t)
	c, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	if r := rawProducer(c, topic, "", ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("producer: %v", r)
	}
	if err := b.DeleteTopic(topic, true); err != nil {
		t.Fatal(err)
	}
	cp := c.expect(pb.BaseCommand_CLOSE_PRODUCER).GetCloseProducer()
	if cp.GetAllowReconnect() || !strings.Contains(cp.GetReason(), "deleted") {
		t.Fatalf("CLOSE_PRODUCER %v: want allow_reconnect=false and a reason", cp)
	}
	// Within the tombstone the name cannot be auto-created again.
	if r := rawProducer(c, topic, "", ""); r.GetError().GetError() != pb.ServerError_TopicNotFound {
		t.Fatalf("producer on the deleted topic: %v, want TopicNotFound", r)
	}
	// Creating it explicitly lifts the tombstone.
	if err := b.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	if r := rawProducer(c, topic, "", ""); r.GetType() != pb.BaseCommand_PRODUCER_SUCCESS {
		t.Fatalf("producer after an explicit create: %v", r)
	}
}

// In upstream-compat mode the extension fields are not sent.
func TestCompatUpstreamSendsNoExtensions(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, func(c *broker.Config) { c.CompatUpstream = true })
	topic := topicName(t)
	c, connected := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	if connected.GetProtocolVersion() != 20 {
		t.Errorf("compat broker answered protocol %d, want 20", connected.GetProtocolVersion())
	}
	rawProducer(c, topic, "", "")
	if err := b.DeleteTopic(topic, true); err != nil {
		t.Fatal(err)
	}
	cp := c.expect(pb.BaseCommand_CLOSE_PRODUCER).GetCloseProducer()
	if cp.AllowReconnect != nil || cp.Reason != nil {
		t.Fatalf("compat CLOSE_PRODUCER carries extensions: %v", cp)
	}
}

// PIP-139: a namespace is deleted while official producers keep re-creating topics in it, and
// it stays deleted.
func TestNamespaceDeletionWinsOverReconnectingProducers(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	if err := b.CreateTenant("seed", adminapi.TenantInfo{AllowedClusters: []string{"standalone"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateNamespace("seed/ns", nil); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, b)
	ctx, cancel := context.WithCancel(testCtx(t, 30*time.Second))
	var wg sync.WaitGroup
	for i := range 10 {
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: fmt.Sprintf("persistent://seed/ns/t%d", i), SendTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("x")})
			}
		}()
	}
	waitFor(t, 10*time.Second, func() bool {
		topics, _ := b.Topics("seed/ns", true)
		return len(topics) == 10
	})
	if err := b.DeleteNamespace("seed/ns", true); err != nil {
		t.Fatalf("delete namespace under load: %v", err)
	}
	// The producers keep trying for a while; the namespace must stay gone.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := b.NamespacePolicies("seed/ns"); !errors.Is(err, broker.ErrNotFound) {
			t.Fatalf("namespace came back: %v", err)
		}
		if topics, _ := b.Topics("seed/ns", true); len(topics) > 0 {
			t.Fatalf("topics re-created in the deleted namespace: %v", topics)
		}
		time.Sleep(100 * time.Millisecond) // sampling over the window, not synchronisation
	}
	cancel()
	wg.Wait()
}

// PIP-139 with official clients: a deleted topic is not brought back by the producer's
// reconnection during its tombstone.
func TestDeletedTopicStaysDeleted(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := topicName(t)
	c := newClient(t, b)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	sendN(t, p, "m", 3)
	if err := b.DeleteTopic(topic, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := b.TopicStats(topic, broker.StatsOptions{}); !errors.Is(err, broker.ErrNotFound) {
			t.Fatalf("deleted topic is back: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // sampling over the window, not synchronisation
	}
}

// Termination: an official Go consumer drains a terminated topic and its connection (shared
// with another producer) survives; a non-Go client is told the end was reached.
func TestTerminatedTopicDrains(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic, other := topicName(t), topicName(t, "other")
	c := newClient(t, b)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", 5)
	if _, err := b.TerminateTopic(topic); err != nil {
		t.Fatal(err)
	}
	if got := payloads(receiveN(t, cons, 5, 10*time.Second)); got[4] != "m4" {
		t.Fatalf("drained %v", got)
	}
	// The same client (one connection) still works for another topic.
	po := createProducer(t, c, pulsar.ProducerOptions{Topic: other})
	sendN(t, po, "o", 2)
	if _, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil || !strings.Contains(err.Error(), "TopicTerminated") {
		t.Fatalf("producer on a terminated topic: %v, want TopicTerminatedError", err)
	}

	// A Java-like raw consumer gets REACHED_END_OF_TOPIC once it has everything.
	rc, _ := connectRaw(t, b, "Pulsar-Java-v4.0.0", 21)
	id := rc.id()
	rc.request(&pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: &pb.CommandSubscribe{
		Topic: &topic, Subscription: ptrTo("raw"), SubType: pb.CommandSubscribe_Exclusive.Enum(),
		ConsumerId: &id, RequestId: &id, InitialPosition: pb.CommandSubscribe_Earliest.Enum(),
	}}, pb.BaseCommand_SUCCESS)
	rc.send(&pb.BaseCommand{Type: pb.BaseCommand_FLOW.Enum(), Flow: &pb.CommandFlow{ConsumerId: &id, MessagePermits: ptrTo(uint32(100))}})
	for range 5 {
		rc.expectMessage()
	}
	rc.expect(pb.BaseCommand_REACHED_END_OF_TOPIC)
}
