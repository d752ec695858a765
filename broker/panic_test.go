package broker_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// victimID marks the victim's commands for the panicking interceptor: request, producer and
// consumer ids no other client of these tests uses.
const victimID = 777_000

// A panic while handling one connection's command closes that connection only: it is logged
// with its stack, the locks the handler held are released on the way out, and a bystander
// official producer and consumer on the same topic keep going. The interceptor panics at each
// place a handler can be interrupted: before the handler runs, while a topic's lock is held
// (SUBSCRIBE's SUCCESS, a SEEK closing consumers, a SEND's receipt from inside the log's
// append), and in the topic's dispatcher goroutine delivering to the victim.
func TestPanicClosesOnlyItsConnection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// panics says whether the interceptor panics on cmd.
		panics func(dir broker.Direction, cmd *pb.BaseCommand) bool
		// victim makes the victim's connection meet the panic.
		victim func(t *testing.T, c *rawConn, topic string)
	}{
		{
			name: "before the handler",
			panics: func(dir broker.Direction, cmd *pb.BaseCommand) bool {
				return dir == broker.Inbound && cmd.GetLookupTopic().GetRequestId() == victimID
			},
			victim: func(t *testing.T, c *rawConn, topic string) {
				c.send(&pb.BaseCommand{Type: pb.BaseCommand_LOOKUP.Enum(), LookupTopic: &pb.CommandLookupTopic{
					Topic: proto.String(topic), RequestId: proto.Uint64(victimID)}})
			},
		},
		{
			name: "holding the topic's lock in SUBSCRIBE",
			panics: func(dir broker.Direction, cmd *pb.BaseCommand) bool {
				return dir == broker.Outbound && cmd.GetSuccess().GetRequestId() == victimID
			},
			victim: func(t *testing.T, c *rawConn, topic string) {
				c.send(victimSubscribe(topic, victimID))
			},
		},
		{
			name: "holding the topic's lock in SEEK",
			panics: func(dir broker.Direction, cmd *pb.BaseCommand) bool {
				return dir == broker.Outbound && cmd.GetCloseConsumer().GetConsumerId() == victimID
			},
			victim: func(t *testing.T, c *rawConn, topic string) {
				sub := victimSubscribe(topic, victimID+1)
				sub.Subscribe.ConsumerId = proto.Uint64(victimID)
				c.send(sub)
				c.expect(pb.BaseCommand_SUCCESS)
				c.send(&pb.BaseCommand{Type: pb.BaseCommand_SEEK.Enum(), Seek: &pb.CommandSeek{
					ConsumerId: proto.Uint64(victimID), RequestId: proto.Uint64(victimID + 2),
					MessagePublishTime: proto.Uint64(0)}})
			},
		},
		{
			name: "holding the topic's lock in SEND's receipt",
			panics: func(dir broker.Direction, cmd *pb.BaseCommand) bool {
				return dir == broker.Outbound && cmd.GetSendReceipt().GetProducerId() == victimID
			},
			victim: func(t *testing.T, c *rawConn, topic string) {
				name := c.createProducer(topic, victimID)
				c.sendPayload(rawSendCommand(victimID, 0), rawMetadata(name, 0), []byte("victim"))
			},
		},
		{
			name: "in the dispatcher delivering to the victim",
			panics: func(dir broker.Direction, cmd *pb.BaseCommand) bool {
				return dir == broker.Outbound && cmd.GetMessage().GetConsumerId() == victimID
			},
			victim: func(t *testing.T, c *rawConn, topic string) {
				sub := victimSubscribe(topic, victimID+1)
				sub.Subscribe.ConsumerId = proto.Uint64(victimID)
				sub.Subscribe.InitialPosition = pb.CommandSubscribe_Earliest.Enum()
				c.send(sub)
				c.expect(pb.BaseCommand_SUCCESS)
				c.flow(victimID, 100)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			b := startBroker(t, func(cfg *broker.Config) {
				cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
			})
			intercept(t, b, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
				if tc.panics(dir, cmd) {
					panic("boom: the test's interceptor")
				}
				return broker.Verdict{}
			})
			topic := topicName(t)
			c := newClient(t, b)
			p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
			cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "bystander"})
			bystanderRoundTrip(t, p, cons, "before")

			victim, _ := connectRaw(t, b, rawClientVersion, 21)
			tc.victim(t, victim, topic)
			victim.expectClosed(rawTimeout)

			bystanderRoundTrip(t, p, cons, "after")
			other, _ := connectRaw(t, b, rawClientVersion, 21) // the broker still accepts
			other.produce(topic, "another client")
			log := logs.String()
			for _, want := range []string{"panic contained", "boom: the test's interceptor", "goroutine ", "panic_test.go"} {
				if !strings.Contains(log, want) {
					t.Fatalf("the log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}

func victimSubscribe(topic string, requestID uint64) *pb.BaseCommand {
	return &pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: &pb.CommandSubscribe{
		Topic: proto.String(topic), Subscription: proto.String("victim"), SubType: pb.CommandSubscribe_Shared.Enum(),
		ConsumerId: proto.Uint64(requestID), RequestId: proto.Uint64(requestID)}}
}

// bystanderRoundTrip sends three messages and receives them, skipping any the victim sent.
func bystanderRoundTrip(t *testing.T, p pulsar.Producer, cons pulsar.Consumer, prefix string) {
	t.Helper()
	sendN(t, p, prefix, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 3; {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("bystander: received %d of 3 %q messages: %v", i, prefix, err)
		}
		cons.Ack(m)
		if string(m.Payload()) == fmt.Sprintf("%s%d", prefix, i) {
			i++
		}
	}
}
