package broker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// A second Exclusive producer is fenced (ProducerFenced), as upstream, whether the topic is
// held by an Exclusive producer or by Shared ones; a Shared producer beside an Exclusive one
// stays ProducerBusy.
func TestOfficialSecondExclusiveProducerFenced(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	createProducer(t, c, pulsar.ProducerOptions{Topic: topic, ProducerAccessMode: pulsar.ProducerAccessModeExclusive})

	p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, ProducerAccessMode: pulsar.ProducerAccessModeExclusive})
	if err == nil {
		p2.Close()
		t.Fatal("second Exclusive producer was created; want ProducerFenced")
	}
	if !strings.Contains(err.Error(), "ProducerFenced") {
		t.Errorf("second Exclusive producer: %v; want ProducerFenced", err)
	}

	other := topicName(t, "shared-first")
	createProducer(t, c, pulsar.ProducerOptions{Topic: other})
	p3, err := c.CreateProducer(pulsar.ProducerOptions{Topic: other, ProducerAccessMode: pulsar.ProducerAccessModeExclusive})
	if err == nil {
		p3.Close()
		t.Fatal("Exclusive producer was created beside a Shared one; want ProducerFenced")
	}
	if !strings.Contains(err.Error(), "ProducerFenced") {
		t.Errorf("Exclusive producer beside a Shared one: %v; want ProducerFenced", err)
	}
}

// A PRODUCER for a producer id the connection already has is answered under its own request
// id. The official Go client asks again, with the same producer id and a new request id, when
// its reconnecting PRODUCER timed out; here its answer is dropped and so is the client's
// CLOSE_PRODUCER that follows the timeout (a client that does not send one, as the Java
// client, leaves the broker in the same state). Answered under the first request's id, the
// client never sees an answer and never reconnects; answered under its own, the producer is
// back and its send completes. The reconnection is caused by deleting the topic, which the
// producer then auto-creates again (the deleted name's tombstone is made short, and the
// reconnection waits it out).
func TestOfficialProducerAskedAgainAnsweredWithNewRequestID(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(cfg *broker.Config) { cfg.TopicTombstoneTTL = time.Millisecond })
	// The official producer's reconnection writes its name and epoch on a goroutine of its own
	// while a send being written reads them, unguarded (a data race in the client): the test
	// sends once the client says it has reconnected.
	log, reconnected := notice(t, "client: ", "Reconnected producer to broker")
	c, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:              b.ServiceURL(),
		OperationTimeout: time.Second, // the reconnecting PRODUCER times out soon
		Logger:           plog.NewLoggerWithSlog(log),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	topic := topicName(t)

	var (
		mu         sync.Mutex
		producerID *uint64  // the producer's id, from its first PRODUCER
		armed      bool     // the topic was deleted: watch the producer's reconnection
		requests   []uint64 // request ids of its PRODUCERs since
		dropped    bool     // the first successful answer to them was dropped
	)
	intercept(t, b, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_PRODUCER && cmd.GetProducer().GetTopic() == topic:
			id := cmd.GetProducer().GetProducerId()
			if producerID == nil {
				producerID = &id
			} else if armed && id == *producerID {
				requests = append(requests, cmd.GetProducer().GetRequestId())
				// Handled once the deleted name's tombstone is gone: refused, the client
				// would take the topic for deleted for good and stop reconnecting.
				return broker.Verdict{Delay: 20 * time.Millisecond}
			}
		case dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_CLOSE_PRODUCER && armed &&
			producerID != nil && cmd.GetCloseProducer().GetProducerId() == *producerID:
			return broker.Verdict{Drop: true}
		case dir == broker.Outbound && cmd.GetType() == pb.BaseCommand_PRODUCER_SUCCESS && armed && !dropped:
			for _, r := range requests {
				if r == cmd.GetProducerSuccess().GetRequestId() {
					dropped = true
					return broker.Verdict{Drop: true}
				}
			}
		}
		return broker.Verdict{}
	})

	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "before", 1)
	mu.Lock()
	armed = true
	mu.Unlock()
	if err := b.DeleteTopic(topic, true); err != nil {
		t.Fatalf("delete the topic: %v", err)
	}

	ctx := testCtx(t, 20*time.Second)
	select {
	case <-reconnected:
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the producer did not reconnect (PRODUCER requests %v, an answer dropped: %v)", requests, dropped)
	}
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("after")}); err != nil {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("send after the reconnection (PRODUCER requests %v, an answer dropped: %v): %v", requests, dropped, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !dropped || len(requests) < 2 {
		t.Fatalf("the reconnection's answer was not dropped (%v) or the client did not ask again (requests %v): the case was not exercised",
			dropped, requests)
	}
}

// An Exclusive producer that reconnects after another exclusive producer held the topic in
// between is fenced by its topic epoch, as upstream: the official Go client fails its pending
// send with ErrProducerFenced and gives the producer up. Its connection is cut as it sends,
// and its reconnection is held off (ServiceNotReady, which it retries) until the other
// producer has come and gone.
func TestOfficialExclusiveProducerFencedByTopicEpoch(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := topicName(t)
	p1 := createProducer(t, newClient(t, b), pulsar.ProducerOptions{Topic: topic, DisableBatching: true,
		ProducerAccessMode: pulsar.ProducerAccessModeExclusive})
	sendN(t, p1, "before", 1)

	var armed, cut, reconnecting, open atomic.Bool
	notReady := pb.ServerError_ServiceNotReady
	intercept(t, b, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		switch {
		case dir != broker.Inbound || !armed.Load():
		case cmd.GetType() == pb.BaseCommand_SEND && !cut.Swap(true):
			return broker.Verdict{Disconnect: true}
		case cmd.GetType() == pb.BaseCommand_PRODUCER && cmd.GetProducer().TopicEpoch != nil &&
			cmd.GetProducer().GetProducerName() == p1.Name() && !open.Load():
			reconnecting.Store(true)
			return broker.Verdict{Fail: &notReady}
		}
		return broker.Verdict{}
	})
	armed.Store(true)
	done := make(chan error, 1)
	p1.SendAsync(context.Background(), &pulsar.ProducerMessage{Payload: []byte("pending")},
		func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { done <- err })
	waitFor(t, 10*time.Second, reconnecting.Load)

	p2, err := newClient(t, b).CreateProducer(pulsar.ProducerOptions{Topic: topic, ProducerAccessMode: pulsar.ProducerAccessModeExclusive})
	if err != nil {
		t.Fatalf("an Exclusive producer while the first one is away: %v", err)
	}
	p2.Close()
	open.Store(true)

	select {
	case err := <-done:
		if !errors.Is(err, pulsar.ErrProducerFenced) {
			t.Fatalf("the pending send of the reconnecting producer: %v, want ErrProducerFenced", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the pending send neither failed nor completed within 20 s")
	}
}
