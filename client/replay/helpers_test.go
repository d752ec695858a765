package replay

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// env is a broker with its admin API and a client of ours.
type env struct {
	b     *broker.Broker
	admin *admin.Client
	cl    *client.Client
	state string
}

// newEnv uses internal/brokertest rather than pulsartest: the stall and window tests intercept
// the broker's commands (env.b).
func newEnv(t *testing.T, dedup bool) *env {
	t.Helper()
	be := brokertest.Start(t, func(c *broker.Config) { c.BrokerDeduplicationEnabled = dedup })
	return &env{b: be.Broker, admin: be.Admin, cl: newClient(t, be.Broker), state: t.TempDir()}
}

func newClient(t *testing.T, b *broker.Broker) *client.Client {
	t.Helper()
	cl, err := client.New(client.Options{ServiceURL: b.ServiceURL(), OperationTimeout: 10 * time.Second, Logger: brokertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// deadLetter is a dead letter as the DLQ routers write it.
func deadLetter(origin string, i int, props map[string]string) *client.Message {
	p := map[string]string{
		client.PropertyRealTopic:          origin + "-partition-0",
		client.PropertyOriginMessageID:    fmt.Sprintf("7:%d:0", i),
		client.PropertyOriginMessageIDOld: fmt.Sprintf("7:%d:0", i),
		client.PropertyReconsumeTimes:     "3",
		client.PropertyDelayTime:          "1000",
		"app":                             fmt.Sprintf("v%d", i),
	}
	for k, v := range props {
		p[k] = v
	}
	return &client.Message{
		Payload:    fmt.Appendf(nil, `{"n":%d,"order":{"region":"%s"}}`, i, []string{"eu", "us"}[i%2]),
		Key:        fmt.Sprintf("k%d", i),
		EventTime:  time.UnixMilli(int64(1_700_000_000_000 + i)),
		Properties: p,
	}
}

// fillDLQ creates the DLQ's subscription sub (as a DLQ producer with an initial
// subscription does) and publishes n dead letters of origin to it, made by mk.
func (e *env) fillDLQ(t *testing.T, dlq, sub string, n int, mk func(i int) *client.Message) {
	t.Helper()
	ctx := brokertest.Ctx(t, 60*time.Second)
	p, err := e.cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: sub,
		TopicPurpose: client.TopicPurposeDeadLetter, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	futs := make([]*client.SendFuture, n)
	for i := range n {
		futs[i] = p.SendAsync(ctx, mk(i))
	}
	for i, f := range futs {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatalf("dead letter %d: %v", i, err)
		}
	}
}

// backlog is the subscription's backlog in entries.
func (e *env) backlog(t *testing.T, topic, sub string) int64 {
	t.Helper()
	st, err := e.admin.Stats(brokertest.Ctx(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := st.Subscriptions[sub]
	if !ok {
		t.Fatalf("%s has no subscription %s", topic, sub)
	}
	return s.MsgBacklog
}

// subscribe subscribes to topic at the earliest position, before messages arrive.
func subscribe(t *testing.T, cl *client.Client, topic, sub string) *client.Consumer {
	t.Helper()
	c, err := cl.Subscribe(brokertest.Ctx(t, 10*time.Second), client.ConsumerOptions{Topic: topic, SubscriptionName: sub,
		Type: client.Exclusive, InitialPosition: client.Earliest, EnableBatchIndexAck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// receiveN receives exactly n messages (acking them), then makes sure no more arrive
// within quiet.
func receiveN(t *testing.T, c *client.Consumer, n int, quiet time.Duration) []*client.Message {
	t.Helper()
	ctx := brokertest.Ctx(t, 60*time.Second)
	var out []*client.Message
	for len(out) < n {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatalf("received %d of %d: %v", len(out), n, err)
		}
		c.Ack(m)
		out = append(out, m)
	}
	if quiet > 0 {
		qctx, cancel := context.WithTimeout(ctx, quiet)
		defer cancel()
		if m, err := c.Receive(qctx); err == nil {
			t.Fatalf("one more message than the %d expected: key %q props %v", n, m.Key, m.Properties)
		}
	}
	return out
}

// collect runs a replay gathering its events.
func collect(ctx context.Context, cl *client.Client, opts Options) (Summary, []Event, error) {
	ch := make(chan Event, 64)
	opts.Events = ch
	var evs []Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range ch {
			evs = append(evs, ev)
		}
	}()
	sum, err := Run(ctx, cl, opts)
	<-done
	return sum, evs, err
}
