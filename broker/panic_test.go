package broker_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
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

// A panic in a connection's authentication refresh (here: sending its AUTH_CHALLENGE) closes
// that connection only, as a handler's does; before, it ended the process.
func TestPanicInAuthRefreshClosesOnlyItsConnection(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	b := startSecureBroker(t, func(cfg *broker.Config) {
		cfg.AuthenticationRefreshCheck = 100 * time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	intercept(t, b.Broker, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Outbound && cmd.GetType() == pb.BaseCommand_AUTH_CHALLENGE {
			panic("boom: the test's interceptor")
		}
		return broker.Verdict{}
	})
	topic := topicName(t)
	c := tokenClient(t, b.ServiceURL(), b.token(t, "admin"))
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "bystander"})
	bystanderRoundTrip(t, p, cons, "before")

	// A token that expires soon, but not before a loaded machine has handled the CONNECT
	// (exp has a one-second resolution).
	victim, first := rawConnect(t, b.Broker, "token", []byte(authtest.Token(t, b.key, "admin", 3*time.Second)), true)
	if first.GetType() != pb.BaseCommand_CONNECTED {
		t.Fatalf("CONNECT: %v", first)
	}
	victim.expectClosed(10 * time.Second)

	bystanderRoundTrip(t, p, cons, "after")
	log := logs.String()
	for _, want := range []string{"panic contained", "refreshing authentication", "boom: the test's interceptor"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the log lacks %q:\n%s", want, log)
		}
	}
}

// Closing a connection after a panic releases its consumers: the active consumer of a
// Failover subscription goes, the other becomes active and is told so, and that send panics
// too. The goroutine closing the first connection contains it and closes the second; before,
// the panic ended the process.
func TestPanicWhileClosingClosesTheBlamedConnection(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	b := startBroker(t, func(cfg *broker.Config) {
		cfg.ActiveConsumerFailoverDelay = 0 // the switch happens inside the close
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	const other = victimID + 10 // the consumer that becomes active
	var armed atomic.Bool
	intercept(t, b, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		switch {
		case dir == broker.Inbound && cmd.GetLookupTopic().GetRequestId() == victimID:
			panic("boom: the test's interceptor, in the victim's handler")
		case armed.Load() && dir == broker.Outbound && cmd.GetActiveConsumerChange().GetConsumerId() == other:
			panic("boom: the test's interceptor, telling the next consumer")
		}
		return broker.Verdict{}
	})
	topic := topicName(t)
	c := newClient(t, b)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "bystander"})
	bystanderRoundTrip(t, p, cons, "before")

	failover := func(conn *rawConn, id uint64, priority int32) {
		sub := victimSubscribe(topic, id)
		sub.Subscribe.Subscription = proto.String("failover")
		sub.Subscribe.SubType = pb.CommandSubscribe_Failover.Enum()
		sub.Subscribe.PriorityLevel = proto.Int32(priority)
		conn.send(sub)
		for conn.next().Cmd.GetType() != pb.BaseCommand_SUCCESS { // ACTIVE_CONSUMER_CHANGE first
		}
	}
	victim, _ := connectRaw(t, b, rawClientVersion, 21)
	failover(victim, victimID+1, 0) // the active one: the higher priority
	next, _ := connectRaw(t, b, rawClientVersion, 21)
	failover(next, other, 1)
	armed.Store(true)
	victim.send(&pb.BaseCommand{Type: pb.BaseCommand_LOOKUP.Enum(), LookupTopic: &pb.CommandLookupTopic{
		Topic: proto.String(topic), RequestId: proto.Uint64(victimID)}})
	victim.expectClosed(rawTimeout)
	next.expectClosed(rawTimeout)

	bystanderRoundTrip(t, p, cons, "after")
	log := logs.String()
	for _, want := range []string{"closing a connection", "telling the next consumer"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the log lacks %q:\n%s", want, log)
		}
	}
}
