package broker_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Terminating a topic closes its producers, as upstream: the official Go client reconnects,
// is refused with TopicTerminatedError, and fails its pending sends with ErrTopicTerminated
// instead of waiting out its send timeout. A send in flight at the termination is held back
// (its SEND dropped) so that there is one pending.
func TestOfficialTerminateClosesProducers(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	var hold, held atomic.Bool
	intercept(t, b, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_SEND && hold.Load() {
			held.Store(true)
			return broker.Verdict{Drop: true}
		}
		return broker.Verdict{}
	})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true, SendTimeout: time.Minute})
	sendN(t, p, "before", 1)

	hold.Store(true)
	done := make(chan error, 1)
	p.SendAsync(context.Background(), &pulsar.ProducerMessage{Payload: []byte("pending")},
		func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { done <- err })
	waitFor(t, 10*time.Second, held.Load)
	if _, err := b.TerminateTopic(topic); err != nil {
		t.Fatalf("terminate: %v", err)
	}

	select {
	case err := <-done:
		if !errors.Is(err, pulsar.ErrTopicTerminated) {
			t.Fatalf("the pending send failed with %v, want ErrTopicTerminated", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the pending send is still waiting 15 s after the termination: the producer was not closed")
	}
	if _, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil || !strings.Contains(err.Error(), "TopicTerminatedError") {
		t.Fatalf("a new producer on the terminated topic: %v, want TopicTerminatedError", err)
	}
}
