//go:build clustertest

package data

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
)

// The TUI's produce, tail, peek, flow and replay on a topic of six partitions spread over the
// three brokers of the fixture, with token authentication and deduplication on: every
// partition is reached at its owner, redirects followed with the token, and the tail reads on
// across the move of two partitions, nothing missed or repeated.
func TestWorkflowsOnASpreadTopic(t *testing.T) {
	const (
		topic   = "persistent://public/default/orders"
		dlq     = "persistent://public/default/orders-app-DLQ"
		n       = 60
		letters = 30
	)
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true, Config: func(cfg *broker.Config) {
		cfg.BrokerDeduplicationEnabled = true
	}})
	token := c.Token(t, "admin")
	ctx := brokertest.Ctx(t, 90*time.Second)
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the replay's state
	if err := c.Broker.CreatePartitionedTopic(topic, 6, nil); err != nil {
		t.Fatal(err)
	}
	a, err := NewAdmin(AdminOptions{AdminURL: c.AdminURL(), ServiceURL: c.ServiceURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	cl, err := client.New(client.Options{ServiceURL: c.ServiceURL(), Token: token, OperationTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	app, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "app", InitialPosition: client.Earliest})
	if err != nil {
		t.Fatal(err)
	}
	app.Close() // the subscription stays, its backlog for peeking

	// Tail and produce.
	events, stop, err := a.Tail(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	tailed := map[string]int{} // partition → messages
	seen := map[string]bool{}  // payloads
	tail := func(want int) {
		for len(seen) < want {
			select {
			case ev, ok := <-events:
				if !ok || ev.Err != nil {
					t.Fatalf("the tail ended after %d: %v", len(seen), ev.Err)
				}
				if ev.Link != LinkNone {
					continue
				}
				if seen[string(ev.Msg.Payload)] {
					t.Fatalf("the tail read %s twice", ev.Msg.Payload)
				}
				seen[string(ev.Msg.Payload)] = true
				tailed[ev.Msg.Topic]++
			case <-ctx.Done():
				t.Fatalf("tailed %d of %d", len(seen), want)
			}
		}
	}
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if _, err := a.Produce(ctx, topic, ProduceRequest{Key: "k" + strconv.Itoa(i), Payload: []byte(strconv.Itoa(i))}); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, n/2)
	tail(n / 2)
	for _, p := range []int{1, 4} {
		name := fmt.Sprintf("%s-partition-%d", topic, p)
		c.Move(name, (c.OwnerIndex(name)+1)%len(c.Members))
	}
	produce(n/2, n)
	tail(n)
	stop()
	if len(tailed) != 6 {
		t.Fatalf("the tail read %d partitions, want 6: %v", len(tailed), tailed)
	}

	// Peek through every partition's backlog.
	peeked, err := a.Peek(ctx, topic, "app", 1, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked) != n {
		t.Fatalf("peeked %d of %d", len(peeked), n)
	}

	// Dead letters of the topic, then its flow and their replay.
	dp, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: "app-dlq",
		TopicPurpose: client.TopicPurposeDeadLetter})
	if err != nil {
		t.Fatal(err)
	}
	for i := range letters {
		m := &client.Message{Key: "d" + strconv.Itoa(i), Payload: []byte("letter " + strconv.Itoa(i)), Properties: map[string]string{
			client.PropertyRealTopic:       fmt.Sprintf("%s-partition-%d", topic, i%6),
			client.PropertyOriginMessageID: fmt.Sprintf("7:%d:0", i),
			client.PropertyReconsumeTimes:  "3",
		}}
		if _, err := dp.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	dp.Close()
	f, err := LoadFlow(ctx, a, topic, "app", "", time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	// The main topic's backlog on app, not its published count: a moved partition's counters
	// start again at its new owner, as upstream's do when a topic loads.
	if f.DLQ.Topic != dlq || f.DLQPeeked != letters || f.Main.SubBacklog != n {
		t.Fatalf("flow: DLQ %s with %d peeked, main backlog %d; want %s, %d, %d", f.DLQ.Topic, f.DLQPeeked, f.Main.SubBacklog, dlq, letters, n)
	}
	evs := make(chan ReplayEvent)
	go func() {
		for range evs {
		}
	}()
	sum, err := a.Replay(ctx, ReplayRequest{DLQ: dlq, Subscription: "app-dlq"}, evs)
	if err != nil || !sum.OK() || sum.Moved != letters {
		t.Fatalf("replay: %+v, %v", sum, err)
	}
	back, err := a.Peek(ctx, topic, "app", 1, n+letters+1)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != n+letters {
		t.Fatalf("after the replay the topic's backlog holds %d, want %d", len(back), n+letters)
	}
}
