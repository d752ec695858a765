package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

func TestProduceConsume(t *testing.T) {
	goroutineLeakCheck(t)
	b := pulsartest.Start(t)
	for _, batching := range []bool{true, false} {
		t.Run(fmt.Sprintf("batching=%v", batching), func(t *testing.T) {
			c := newClient(t, b)
			topic := uniqueTopic(t)
			cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", InitialPosition: client.Earliest})
			p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: !batching})
			ctx := brokertest.Ctx(t, 10*time.Second)
			var futs []*client.SendFuture
			for i := range 50 {
				futs = append(futs, p.SendAsync(ctx, &client.Message{Payload: []byte(fmt.Sprint(i)), Key: fmt.Sprint("k", i), Properties: map[string]string{"i": fmt.Sprint(i)}}))
			}
			for i, f := range futs {
				id, err := f.Wait(ctx)
				if err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
				if batching && id.BatchIndex < 0 {
					t.Errorf("send %d: batched id without batch index: %+v", i, id)
				}
			}
			msgs := receiveN(t, cons, 50, 10*time.Second)
			for i, m := range msgs {
				if string(m.Payload) != fmt.Sprint(i) || m.Key != fmt.Sprint("k", i) || m.Properties["i"] != fmt.Sprint(i) {
					t.Fatalf("message %d: payload %q key %q props %v", i, m.Payload, m.Key, m.Properties)
				}
				if err := cons.Ack(m); err != nil {
					t.Fatal(err)
				}
			}
			if err := cons.FlushAcks(ctx); err != nil {
				t.Fatalf("flush acks: %v", err)
			}
		})
	}
}
