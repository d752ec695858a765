package broker_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// brokerMaxConnectionsPerIp and brokerMaxConnections: a connection over either is answered
// ERROR NotAllowedError with upstream's message and closed before anything is read from it;
// once one closes, another is accepted.
func TestConnectionLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*broker.Config)
		want string
	}{
		{"per IP", func(c *broker.Config) { c.BrokerMaxConnectionsPerIP = 2 }, "Reached the maximum number of connections on address 127.0.0.1"},
		{"per broker", func(c *broker.Config) { c.BrokerMaxConnections = 2 }, "Reached the maximum number of connections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := startRawBroker(t, tc.edit)
			first, _ := connectRaw(t, b, rawClientVersion, 21)
			connectRaw(t, b, rawClientVersion, 21)
			over := dialRaw(t, b)
			e := over.expect(pb.BaseCommand_ERROR).GetError()
			if e.GetError() != pb.ServerError_NotAllowedError || e.GetMessage() != tc.want || e.GetRequestId() != ^uint64(0) {
				t.Fatalf("ERROR %v, want NotAllowedError %q for request -1", e, tc.want)
			}
			over.expectClosed(rawTimeout)

			first.nc.Close()
			waitFor(t, 10*time.Second, func() bool {
				nc, err := net.DialTimeout("tcp", b.Addr(), rawTimeout)
				if err != nil {
					return false
				}
				defer nc.Close()
				frame, _ := wire.AppendCommand(nil, &pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
					ClientVersion: proto.String(rawClientVersion), ProtocolVersion: proto.Int32(21)}}, nil)
				nc.SetDeadline(time.Now().Add(rawTimeout))
				nc.Write(frame)
				f, err := wire.NewReader(nc, 1<<20).Next()
				return err == nil && f.Cmd.GetType() == pb.BaseCommand_CONNECTED
			})
		})
	}
}

// maxProducersPerTopic, maxConsumersPerTopic, maxConsumersPerSubscription and
// maxSubscriptionsPerTopic refuse the one too many with upstream's error, and the official
// client reports it; the connection goes on serving what it has.
func TestTopicLimits(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(c *broker.Config) {
		c.MaxProducersPerTopic = 1
		c.MaxConsumersPerTopic = 3
		c.MaxConsumersPerSubscription = 1
		c.MaxSubscriptionsPerTopic = 2
	})
	c := newClient(t, b)
	topic := topicName(t)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	if _, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil || !strings.Contains(err.Error(), "reached max producers limit") {
		t.Fatalf("second producer: %v, want ProducerBusy: reached max producers limit", err)
	}

	shared := func(sub string) (pulsar.Consumer, error) {
		return c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: sub, Type: pulsar.Shared,
			SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	}
	a, err := shared("a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if _, err := shared("a"); err == nil || !strings.Contains(err.Error(), "Subscription reached max consumers limit") {
		t.Fatalf("second consumer of a: %v, want ConsumerBusy: Subscription reached max consumers limit", err)
	}
	bc, err := shared("b")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bc.Close)
	if _, err := shared("c"); err == nil || !strings.Contains(err.Error(), "Exceed the maximum number of subscriptions of the topic") {
		t.Fatalf("third subscription: %v, want NotAllowedError: Exceed the maximum number of subscriptions", err)
	}

	// A reader's subscription is one more consumer (and, non-durable, one more subscription
	// only while it lasts): with maxSubscriptionsPerTopic reached it is refused too.
	if _, err := c.CreateReader(pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()}); err == nil {
		t.Fatal("a reader past maxSubscriptionsPerTopic was accepted")
	}

	sendN(t, p, "m", 2)
	receiveN(t, a, 2, 10*time.Second)
	receiveN(t, bc, 2, 10*time.Second)
}

// maxConsumersPerTopic counts consumers over all of a topic's subscriptions.
func TestTopicConsumerLimit(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(c *broker.Config) { c.MaxConsumersPerTopic = 2 })
	c := newClient(t, b)
	topic := topicName(t)
	for _, sub := range []string{"a", "b"} {
		subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: sub})
	}
	if _, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "c"}); err == nil ||
		!strings.Contains(err.Error(), "Topic reached max consumers limit") {
		t.Fatalf("third consumer: %v, want ConsumerBusy: Topic reached max consumers limit", err)
	}
}
