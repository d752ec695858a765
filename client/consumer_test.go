package client_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

func payloads(ms []*client.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.Payload)
	}
	return out
}

func TestPartitionedAndMultiTopic(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Conf("allowAutoTopicCreationType", "partitioned"),
		pulsartest.Conf("defaultNumPartitions", "3"))
	c := newClient(t, b)
	t1, t2 := uniqueTopic(t), uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topics: []string{t1, t2}, SubscriptionName: "s", InitialPosition: client.Earliest})
	if got := len(cons.Topics()); got != 6 {
		t.Fatalf("attached to %d partitions, want 6: %v", got, cons.Topics())
	}
	p1 := mustProducer(t, c, client.ProducerOptions{Topic: t1, DisableBatching: true})
	p2 := mustProducer(t, c, client.ProducerOptions{Topic: t2})
	publish(t, p1, 30)
	publish(t, p2, 30)
	msgs := receiveN(t, cons, 60, 10*time.Second)
	parts := map[string]int{}
	for _, m := range msgs {
		parts[m.Topic]++
		if m.ID.Partition < 0 {
			t.Fatalf("message from %s without partition: %+v", m.Topic, m.ID)
		}
		cons.Ack(m)
	}
	if len(parts) < 4 {
		t.Errorf("messages spread over %d partitions only: %v", len(parts), parts)
	}
}

func TestPatternSubscription(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)
	prefix := "persistent://public/default/pattern-" + fmt.Sprint(time.Now().UnixNano())
	mustProducer(t, c, client.ProducerOptions{Topic: prefix + "-a"}) // exists before
	cons := mustSubscribe(t, c, client.ConsumerOptions{
		TopicsPattern: prefix + "-.*", SubscriptionName: "s", InitialPosition: client.Earliest,
		AutoDiscoveryPeriod: 50 * time.Millisecond,
	})
	pb := mustProducer(t, c, client.ProducerOptions{Topic: prefix + "-b"}) // appears later
	mustProducer(t, c, client.ProducerOptions{Topic: "persistent://public/default/other-" + fmt.Sprint(time.Now().UnixNano())})
	brokertest.WaitFor(t, 10*time.Second, "discovery of the new topic", func() bool { return len(cons.Topics()) == 2 })
	if _, err := pb.Send(ctx, &client.Message{Payload: []byte("b")}); err != nil {
		t.Fatal(err)
	}
	m, err := cons.Receive(ctx)
	if err != nil || string(m.Payload) != "b" {
		t.Fatalf("receive: %v %v", m, err)
	}
}

func TestAcks(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)

	reopen := func(topic string, o client.ConsumerOptions) *client.Consumer {
		o.Topic, o.SubscriptionName, o.InitialPosition = topic, "s", client.Earliest
		return mustSubscribe(t, c, o)
	}
	t.Run("individual", func(t *testing.T) {
		topic := uniqueTopic(t)
		p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
		publish(t, p, 5)
		cons := reopen(topic, client.ConsumerOptions{})
		for _, m := range receiveN(t, cons, 5, 5*time.Second) {
			if string(m.Payload) != "2" {
				cons.Ack(m)
			}
		}
		cons.FlushAcks(ctx)
		cons.Close()
		cons = reopen(topic, client.ConsumerOptions{})
		if got := payloads(receiveN(t, cons, 1, 5*time.Second)); got[0] != "2" {
			t.Fatalf("redelivered %v, want [2]", got)
		}
	})
	t.Run("cumulative", func(t *testing.T) {
		topic := uniqueTopic(t)
		p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
		publish(t, p, 5)
		cons := reopen(topic, client.ConsumerOptions{})
		ms := receiveN(t, cons, 5, 5*time.Second)
		if err := cons.AckCumulative(ms[2]); err != nil {
			t.Fatal(err)
		}
		cons.FlushAcks(ctx)
		cons.Close()
		cons = reopen(topic, client.ConsumerOptions{})
		if got := payloads(receiveN(t, cons, 2, 5*time.Second)); !slices.Equal(got, []string{"3", "4"}) {
			t.Fatalf("redelivered %v, want [3 4]", got)
		}
	})
	t.Run("batch index", func(t *testing.T) {
		topic := uniqueTopic(t)
		p := mustProducer(t, c, client.ProducerOptions{Topic: topic, BatchingMaxPublishDelay: time.Second, BatchingMaxMessages: 5})
		publish(t, p, 5) // one batch
		cons := reopen(topic, client.ConsumerOptions{EnableBatchIndexAck: true})
		for _, m := range receiveN(t, cons, 5, 5*time.Second) {
			if m.ID.BatchSize != 5 {
				t.Fatalf("not one batch of 5: %+v", m.ID)
			}
			if m.ID.BatchIndex%2 == 0 {
				cons.Ack(m)
			}
		}
		cons.FlushAcks(ctx)
		cons.Close()
		cons = reopen(topic, client.ConsumerOptions{EnableBatchIndexAck: true})
		if got := payloads(receiveN(t, cons, 2, 5*time.Second)); !slices.Equal(got, []string{"1", "3"}) {
			t.Fatalf("redelivered %v, want [1 3]", got)
		}
	})
	t.Run("nack", func(t *testing.T) {
		topic := uniqueTopic(t)
		p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
		publish(t, p, 3)
		cons := reopen(topic, client.ConsumerOptions{Type: client.Shared, NackRedeliveryDelay: 50 * time.Millisecond})
		for _, m := range receiveN(t, cons, 3, 5*time.Second) {
			if string(m.Payload) == "1" {
				cons.Nack(m)
			} else {
				cons.Ack(m)
			}
		}
		// The whole batch entry comes back; 0 and 2 were acknowledged only locally, since
		// without batch-index ack an entry is acknowledged once all its messages are.
		var again []*client.Message
		for len(again) == 0 || string(again[len(again)-1].Payload) != "1" {
			again = append(again, receiveN(t, cons, 1, 5*time.Second)...)
		}
		if m := again[len(again)-1]; m.RedeliveryCount != 1 {
			t.Errorf("redelivery count %d, want 1", m.RedeliveryCount)
		}
	})
}

func TestKeyShared(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	topic := uniqueTopic(t)
	c1 := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.KeyShared})
	c2 := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.KeyShared})
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
	ctx := brokertest.Ctx(t, 20*time.Second)
	const n = 40
	for i := range n {
		if _, err := p.Send(ctx, &client.Message{Payload: []byte(fmt.Sprint(i)), Key: fmt.Sprint("k", i%8)}); err != nil {
			t.Fatal(err)
		}
	}
	owner := map[string]string{}
	got := 0
	for got < n {
		var m *client.Message
		var who string
		select {
		case m = <-c1.Chan():
			who = "c1"
		case m = <-c2.Chan():
			who = "c2"
		case <-ctx.Done():
			t.Fatalf("received %d of %d", got, n)
		}
		if prev, ok := owner[m.Key]; ok && prev != who {
			t.Fatalf("key %s went to %s and %s", m.Key, prev, who)
		}
		owner[m.Key] = who
		got++
	}
	var keys []string
	for k := range owner {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("owners: %v", owner)
}

func TestConsumerSeekAndUnsubscribe(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	ctx := brokertest.Ctx(t, 20*time.Second)
	topic := uniqueTopic(t)
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
	ids := publish(t, p, 5)
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", InitialPosition: client.Earliest})
	receiveN(t, cons, 5, 5*time.Second)
	if err := cons.Seek(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if got := payloads(receiveN(t, cons, 2, 5*time.Second)); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("after seek: %v", got)
	}
	if err := cons.SeekByTime(ctx, time.UnixMilli(0)); err != nil {
		t.Fatal(err)
	}
	if got := payloads(receiveN(t, cons, 1, 5*time.Second)); got[0] != "0" {
		t.Fatalf("after seek by time: %v", got)
	}
	if err := cons.Unsubscribe(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Receive(ctx); err == nil {
		t.Fatal("receive after unsubscribe succeeded")
	}
	// A new subscription at Latest sees nothing of the old backlog.
	cons2 := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	publish(t, p, 1)
	if got := payloads(receiveN(t, cons2, 1, 5*time.Second)); got[0] != "0" {
		t.Fatalf("new subscription got %v", got)
	}
}
