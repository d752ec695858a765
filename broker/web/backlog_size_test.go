package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// backlogSize is the size of what the slowest subscription has not acknowledged, as upstream's
// estimatedBacklogSize, not the whole log's size: ten equal messages, four acknowledged, leave
// six tenths of the storage as backlog; all acknowledged leave none.
func TestPulsarAdminBacklogSizeIsTheUnacknowledgedPart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := "persistent://public/default/backlog-size"
	tn := *topicName(t, topic)
	c := e.client(t)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	must(t, err)
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p.Close()
	const n = 10
	for i := range n {
		_, err := p.Send(context.Background(), &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "message-%02d", i)})
		must(t, err)
	}
	st, err := e.adm.Topics().GetStats(tn)
	must(t, err)
	if st.StorageSize == 0 || st.BacklogSize != st.StorageSize {
		t.Fatalf("nothing acknowledged: backlogSize %d, storageSize %d: want them equal and not 0", st.BacklogSize, st.StorageSize)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last pulsar.MessageID
	for i := range n {
		msg, err := cons.Receive(ctx)
		must(t, err)
		if i < 4 {
			must(t, cons.Ack(msg))
		}
		last = msg.ID()
	}
	want := st.StorageSize * 6 / n
	brokertest.WaitForNil(t, 10*time.Second, "backlogSize after 4 of 10 acknowledged", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if st.BacklogSize != want {
			return fmt.Errorf("backlogSize %d, want %d (storageSize %d)", st.BacklogSize, want, st.StorageSize)
		}
		return nil
	})
	must(t, cons.AckIDCumulative(last))
	brokertest.WaitForNil(t, 10*time.Second, "backlogSize after all acknowledged", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if st.BacklogSize != 0 {
			return fmt.Errorf("backlogSize %d, want 0", st.BacklogSize)
		}
		return nil
	})
}
