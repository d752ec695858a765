package client_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// TestReconnectAfterConnectionLoss: connections dropped in the middle of sending and of
// receiving; every message is receipted and received (at least once).
func TestReconnectAfterConnectionLoss(t *testing.T) {
	goroutineLeakCheck(t)
	// internal/brokertest, not pulsartest: the test intercepts the broker's commands.
	b := brokertest.StartBroker(t)
	c := newClient(t, b)
	topic := uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", InitialPosition: client.Earliest, ReceiverQueueSize: 10})
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})

	var sends, msgs atomic.Int32
	b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		switch {
		case dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_SEND && sends.Add(1) == 30:
			return broker.Verdict{Disconnect: true}
		case dir == broker.Outbound && cmd.GetType() == pb.BaseCommand_MESSAGE && msgs.Add(1) == 60:
			return broker.Verdict{Disconnect: true}
		}
		return broker.Verdict{}
	})
	ctx := brokertest.Ctx(t, 30*time.Second)
	const n = 100
	var futs []*client.SendFuture
	for i := range n {
		futs = append(futs, p.SendAsync(ctx, &client.Message{Payload: []byte(fmt.Sprint(i))}))
	}
	for i, f := range futs {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	seen := map[string]bool{}
	for len(seen) < n {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("received %d distinct of %d: %v", len(seen), n, err)
		}
		seen[string(m.Payload)] = true
		cons.Ack(m)
	}
	if sends.Load() < 30 || msgs.Load() < 60 {
		t.Fatalf("interceptor did not fire: %d sends, %d messages", sends.Load(), msgs.Load())
	}
}

// TestReconnectAfterBrokerClose: a broker-initiated CLOSE_CONSUMER with reconnect allowed
// (an admin cursor reset) makes the consumer resubscribe and read from the new position.
func TestReconnectAfterBrokerClose(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	topic := uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
	publish(t, p, 3)
	for _, m := range receiveN(t, cons, 3, 10*time.Second) {
		cons.Ack(m)
	}
	if err := cons.FlushAcks(brokertest.Ctx(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := b.Admin().ResetCursorToTime(brokertest.Ctx(t, 5*time.Second), topic, "s", 0); err != nil {
		t.Fatalf("reset cursor: %v", err)
	}
	for i, m := range receiveN(t, cons, 3, 10*time.Second) {
		if string(m.Payload) != fmt.Sprint(i) {
			t.Fatalf("after reset: message %d is %q", i, m.Payload)
		}
	}
}

// TestTopicDeleted: deleting a topic closes its producers and consumers for good (PIP-139,
// allow_reconnect=false), and Send/Receive report the broker's reason.
func TestTopicDeleted(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	topic := uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
	ctx := brokertest.Ctx(t, 20*time.Second)
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("before")}); err != nil {
		t.Fatal(err)
	}
	if m, err := cons.Receive(ctx); err != nil || string(m.Payload) != "before" {
		t.Fatalf("before: %v %v", m, err)
	}
	if err := b.Admin().DeleteTopic(ctx, topic, false, true); err != nil {
		t.Fatalf("delete topic: %v", err)
	}
	var sendErr error
	brokertest.WaitFor(t, 10*time.Second, "the producer to notice", func() bool {
		sctx := brokertest.Ctx(t, time.Second)
		_, sendErr = p.Send(sctx, &client.Message{Payload: []byte("after")})
		return sendErr == nil || errors.Is(sendErr, client.ErrClosed)
	})
	var be *client.BrokerClosedError
	if !errors.As(sendErr, &be) {
		t.Fatalf("send after the topic was deleted: %v, want the broker's close-for-good error", sendErr)
	}
	if _, err := cons.Receive(ctx); !errors.As(err, &be) || be.Reason == "" {
		t.Fatalf("receive after delete: %v", err)
	}
}

// TestClosedForGood: allow_reconnect=false from the broker closes the producer or consumer
// and surfaces the broker's reason.
func TestClosedForGood(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)

	t.Run("producer fenced", func(t *testing.T) {
		topic := uniqueTopic(t)
		p := mustProducer(t, c, client.ProducerOptions{Topic: topic, AccessMode: client.AccessExclusive})
		if _, err := p.Send(ctx, &client.Message{Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		mustProducer(t, c, client.ProducerOptions{Topic: topic, AccessMode: client.AccessExclusiveWithFencing})
		var err error
		brokertest.WaitFor(t, 5*time.Second, "the fenced producer to fail", func() bool {
			_, err = p.Send(ctx, &client.Message{Payload: []byte("y")})
			return err != nil
		})
		var be *client.BrokerClosedError
		if !errors.As(err, &be) || !errors.Is(err, client.ErrClosed) || be.Reason == "" {
			t.Fatalf("send after fencing: %v", err)
		}
		t.Logf("fenced: %v", err)
	})

	t.Run("consumer's subscription deleted", func(t *testing.T) {
		topic := uniqueTopic(t)
		other := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.Shared})
		a := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.Shared})
		if err := other.Unsubscribe(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := a.Receive(ctx)
		var be *client.BrokerClosedError
		if !errors.As(err, &be) || be.Reason == "" {
			t.Fatalf("receive after the subscription was deleted: %v", err)
		}
		t.Logf("closed: %v", err)
	})
}

// TestKeepaliveStale: a broker that goes silent is detected after two keepalive intervals
// and the client reconnects.
func TestKeepaliveStale(t *testing.T) {
	t.Parallel()
	// internal/brokertest, not pulsartest: the test intercepts the broker's commands.
	b := brokertest.StartBroker(t)
	c := newClient(t, b, func(o *client.Options) { o.KeepAliveInterval = 100 * time.Millisecond })
	topic := uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	var silent atomic.Bool
	var connects, pings atomic.Int32
	silent.Store(true)
	b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_CONNECT {
			connects.Add(1)
			silent.Store(false)
		}
		if dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_PING {
			pings.Add(1)
		}
		if dir == broker.Outbound && silent.Load() {
			return broker.Verdict{Drop: true}
		}
		return broker.Verdict{}
	})
	brokertest.WaitFor(t, 5*time.Second, "a reconnect after the connection went stale", func() bool { return connects.Load() > 0 })
	if pings.Load() == 0 {
		t.Errorf("no PING sent")
	}
	b.Intercept(nil)
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
	ctx := brokertest.Ctx(t, 10*time.Second)
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Receive(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestUnsubscribeForceClosesOthers: a forced unsubscribe by the consumer that attached last
// closes the others for good.
func TestUnsubscribeForceClosesOthers(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 10*time.Second)
	topic := uniqueTopic(t)
	a := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.Shared})
	other := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.Shared})
	if err := other.Unsubscribe(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Receive(ctx); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("receive after the subscription was deleted: %v", err)
	}
}
