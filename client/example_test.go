package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// startExampleBroker starts a broker for the example (pulsartest's, on free ports); the
// examples use it the way an application uses any Pulsar service URL.
func startExampleBroker() (*pulsartest.Broker, *slog.Logger) {
	quiet := slog.New(slog.DiscardHandler)
	b, err := pulsartest.New(pulsartest.Logger(quiet))
	if err != nil {
		panic(err)
	}
	return b, quiet
}

func Example_producer() {
	b, quiet := startExampleBroker()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.New(client.Options{ServiceURL: b.ServiceURL(), Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	p, err := c.CreateProducer(ctx, client.ProducerOptions{
		Topic:       "orders",
		Compression: client.LZ4,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	// Send waits for the broker's receipt; SendAsync returns a future at once.
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("order 1"), Key: "customer-7"}); err != nil {
		fmt.Println(err)
		return
	}
	f := p.SendAsync(ctx, &client.Message{Payload: []byte("order 2"), Properties: map[string]string{"priority": "high"}})
	if _, err := f.Wait(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sent 2 messages to", p.Topic())
	// Output: sent 2 messages to persistent://public/default/orders
}

func Example_consumerWithRetryAndDLQ() {
	b, quiet := startExampleBroker()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.New(client.Options{ServiceURL: b.ServiceURL(), Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// RetryEnable subscribes to orders-billing-RETRY too; after MaxDeliveries retries a
	// message goes to orders-billing-DLQ, where the "audit" subscription keeps it.
	cons, err := c.Subscribe(ctx, client.ConsumerOptions{
		Topic:            "orders",
		SubscriptionName: "billing",
		Type:             client.Shared,
		InitialPosition:  client.Earliest,
		RetryEnable:      true,
		DLQ:              &client.DLQPolicy{MaxDeliveries: 2, InitialSubscriptionName: "audit"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cons.Close()

	p, err := c.CreateProducer(ctx, client.ProducerOptions{Topic: "orders"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("order 1")}); err != nil {
		fmt.Println(err)
		return
	}

	// Processing fails every time: retry a little later, until it lands in the DLQ.
	for range 3 {
		m, err := cons.Receive(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("attempt from %s (reconsumed %q times)\n", m.Topic, m.Properties[client.PropertyReconsumeTimes])
		if err := cons.ReconsumeLater(ctx, m, 10*time.Millisecond, nil); err != nil {
			fmt.Println(err)
			return
		}
	}

	dead, err := c.Subscribe(ctx, client.ConsumerOptions{Topic: "orders-billing-DLQ", SubscriptionName: "audit"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dead.Close()
	m, err := dead.Receive(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("dead letter %q from %s after %s retries\n", m.Payload,
		m.Properties[client.PropertyRealTopic], m.Properties[client.PropertyReconsumeTimes])
	dead.Ack(m)
	// Output:
	// attempt from persistent://public/default/orders (reconsumed "" times)
	// attempt from persistent://public/default/orders-billing-RETRY (reconsumed "1" times)
	// attempt from persistent://public/default/orders-billing-RETRY (reconsumed "2" times)
	// dead letter "order 1" from persistent://public/default/orders after 3 retries
}

func Example_reader() {
	b, quiet := startExampleBroker()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.New(client.Options{ServiceURL: b.ServiceURL(), Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	p, err := c.CreateProducer(ctx, client.ProducerOptions{Topic: "events"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	for _, e := range []string{"created", "paid", "shipped"} {
		p.SendAsync(ctx, &client.Message{Payload: []byte(e)})
	}
	if err := p.Flush(ctx); err != nil {
		fmt.Println(err)
		return
	}

	r, err := c.CreateReader(ctx, client.ReaderOptions{Topic: "events", StartMessageID: client.EarliestMessageID()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for {
		more, err := r.HasNext(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		if !more {
			break
		}
		m, err := r.Next(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(string(m.Payload))
	}
	// Output:
	// created
	// paid
	// shipped
}
