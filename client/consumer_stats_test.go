package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// BrokerStats is the broker's CONSUMER_STATS answer, summed over partitions.
func TestConsumerBrokerStats(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	topic := uniqueTopic(t)
	if err := b.Admin().CreateTopic(brokertest.Ctx(t, 10*time.Second), topic, 2, nil); err != nil {
		t.Fatal(err)
	}
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.Shared, ReceiverQueueSize: 10})
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
	ctx := brokertest.Ctx(t, 20*time.Second)
	for i := range 6 {
		if _, err := p.Send(ctx, &client.Message{Payload: fmt.Appendf(nil, "m%d", i), Key: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	msgs := receiveN(t, cons, 6, 10*time.Second)
	for _, m := range msgs[:2] {
		if err := cons.Ack(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := cons.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 10*time.Second, "stats", func() bool {
		st, err := cons.BrokerStats(ctx)
		return err == nil && st.BacklogEntries == 4 && st.UnackedMessages == 4
	})
}
