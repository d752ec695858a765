package broker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The rates are measured on the broker's clock, a fake one that the test moves: the token
// buckets fill by its time, so what passes in each step is exact, and nothing here depends on
// how fast this machine runs. (make bench measures nothing of this; the rates are policies, not
// performance.)

// msgIn is the topic's msgInCounter.
func msgIn(t *testing.T, b *broker.Broker, topic string) int64 {
	t.Helper()
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st.MsgInCounter
}

// A publish rate of 100 msg/s holds a producer that sends as fast as it can to 100 msg/s: after
// the bucket's first 100 the producer's connection is no longer read, and each 100 ms of the
// broker's clock lets exactly 10 more in. Measured over 5 s: 500 (100 msg/s, ± 10 % allowed by
// the issue; the token bucket is exact).
func TestOfficialPublishRate(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	b := startBroker(t, clk.Use)
	c := newClient(t, b)
	topic := topicName(t)
	setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) {
		tp.PublishRate = &adminapi.PublishRate{PublishThrottlingRateInMsg: 100}
	})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true, MaxPendingMessages: 2000,
		SendTimeout: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked atomic.Int64
	for i := range 1500 {
		p.SendAsync(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)},
			func(pulsar.MessageID, *pulsar.ProducerMessage, error) { acked.Add(1) })
	}

	waitIn := func(want int64) {
		t.Helper()
		waitFor(t, 20*time.Second, func() bool {
			n := msgIn(t, b, topic)
			if n > want {
				t.Fatalf("topic took %d messages, want %d: over its publish rate", n, want)
			}
			return n == want
		})
	}
	waitIn(100) // the bucket's capacity
	// The count to wait for is known before the clock moves: read after it, it could already
	// hold part of the next step.
	want := int64(100)
	for range 50 { // 5 s
		want += 10
		clk.Advance(100 * time.Millisecond)
		waitIn(want)
	}
	taken := msgIn(t, b, topic) - 100
	rate := float64(taken) / 5
	if rate < 90 || rate > 110 {
		t.Fatalf("publish rate over 5 s: %.1f msg/s (%d messages), want 100 ± 10 %%", rate, taken)
	}
	// Nothing was refused: the client's sends wait, and all are receipted once the rate is gone.
	if err := b.UpdateTopicPolicies(topic, func(tp *adminapi.TopicPolicies) error { tp.PublishRate = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second) // the throttled producer is let go at its next look
	waitFor(t, 20*time.Second, func() bool { return acked.Load() == 1500 })
	if n := msgIn(t, b, topic); n != 1500 {
		t.Fatalf("topic took %d messages, want all 1500", n)
	}
}

// Dispatch rates, of the topic and of each subscription: a consumer with room for everything
// gets 50 messages per second of the broker's clock at a subscription dispatch rate of 50, 20
// when its subscription has its own rate of 20 over that, and the topic's rate of 30 bounds its
// subscriptions together.
func TestOfficialDispatchRates(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"subscription", "own", "topic"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			b := startBroker(t, clk.Use)
			c := newClient(t, b)
			topic := topicName(t)
			rate := 50
			setTopicPolicies(t, b, topic, func(tp *adminapi.TopicPolicies) {
				r := &adminapi.DispatchRate{DispatchThrottlingRateInMsg: rate, RatePeriodInSecond: 1}
				switch level {
				case "subscription":
					tp.SubscriptionDispatchRate = r
				case "own":
					tp.SubscriptionDispatchRate = r
					rate = 20
					tp.SubscriptionPolicies = map[string]adminapi.SubscriptionPolicies{"a": {DispatchRate: &adminapi.DispatchRate{
						DispatchThrottlingRateInMsg: rate, RatePeriodInSecond: 1}}}
				default:
					rate = 30
					r.DispatchThrottlingRateInMsg = rate
					tp.DispatchRate = r
				}
			})
			p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
			sendN(t, p, "m", 200)
			subs := []pulsar.Consumer{subscribeEarliest(t, c, topic, "a")}
			if level == "topic" {
				subs = append(subs, subscribeEarliest(t, c, topic, "b"))
			}
			var got atomic.Int64
			for _, cons := range subs {
				countReceived(cons, &got)
			}
			waitGot := func(want int64) {
				t.Helper()
				waitFor(t, 20*time.Second, func() bool {
					n := got.Load()
					if n > want {
						t.Fatalf("received %d, want %d: over the dispatch rate", n, want)
					}
					return n == want
				})
			}
			waitGot(int64(rate)) // the bucket's capacity
			for i := range 3 {
				clk.Advance(time.Second) // the dispatcher looks again after upstream's 1 s backoff
				waitGot(int64(rate * (i + 2)))
			}
		})
	}
}

// countReceived receives and acknowledges everything cons gets, adding each message to
// every counter, until the consumer is closed (at the test's end).
func countReceived(cons pulsar.Consumer, counters ...*atomic.Int64) {
	go func() {
		for {
			m, err := cons.Receive(context.Background())
			if err != nil {
				return
			}
			for _, n := range counters {
				n.Add(1)
			}
			cons.Ack(m)
		}
	}()
}

func subscribeEarliest(t *testing.T, c pulsar.Client, topic, sub string) pulsar.Consumer {
	t.Helper()
	return subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: sub, Type: pulsar.Shared,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
}
