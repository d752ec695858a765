package pulsartest_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/pulsartest"
)

// In a test, pulsartest.Start(t) starts the broker and stops it when the test ends; New and
// Close, as here, serve an example, a TestMain or a program. The official Go client connects
// to it as to any Pulsar.
func Example() {
	b, err := pulsartest.New()
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.DefaultNopLogger()})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	consumer, err := client.Subscribe(pulsar.ConsumerOptions{Topic: "greetings", SubscriptionName: "example"})
	if err != nil {
		panic(err)
	}
	defer consumer.Close()
	producer, err := client.CreateProducer(pulsar.ProducerOptions{Topic: "greetings"})
	if err != nil {
		panic(err)
	}
	defer producer.Close()
	if _, err := producer.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("hello")}); err != nil {
		panic(err)
	}
	msg, err := consumer.Receive(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s from %s\n", msg.Payload(), msg.Topic())
	consumer.Ack(msg)
	// Output: hello from persistent://public/default/greetings
}

// A consumer with the official client's retry topic and DLQ policy: a message that keeps
// failing goes to the retry topic until its last attempt, then to the dead-letter topic, where
// the initial subscription keeps it. WaitForMessages waits for the letter without creating the
// DLQ before the client does.
func Example_deadLetters() {
	// Delayed messages (the retry topic's) are checked for every 10 ms instead of every second.
	b, err := pulsartest.New(pulsartest.Conf("delayedDeliveryTickTimeMillis", "10"))
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.DefaultNopLogger()})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	consumer, err := client.Subscribe(pulsar.ConsumerOptions{
		Topic: "payments", SubscriptionName: "billing", Type: pulsar.Shared, RetryEnable: true,
		DLQ: &pulsar.DLQPolicy{MaxDeliveries: 2, InitialSubscriptionName: "billing-audit"},
	})
	if err != nil {
		panic(err)
	}
	defer consumer.Close()
	producer, err := client.CreateProducer(pulsar.ProducerOptions{Topic: "payments"})
	if err != nil {
		panic(err)
	}
	defer producer.Close()
	if _, err := producer.Send(ctx, &pulsar.ProducerMessage{Key: "payment-7", Payload: []byte(`{"amount":-1}`)}); err != nil {
		panic(err)
	}

	// The application fails the payment each time it gets it: from the topic, then twice from
	// the retry topic; its third ReconsumeLater would go past MaxDeliveries, so the client
	// sends the payment to the DLQ instead.
	go func() {
		for {
			msg, err := consumer.Receive(ctx)
			if err != nil {
				return
			}
			consumer.ReconsumeLaterWithCustomProperties(msg, map[string]string{"reason": "negative amount"}, 10*time.Millisecond)
		}
	}()
	letters, err := b.WaitForMessages(ctx, "payments-billing-DLQ", 1)
	if err != nil {
		panic(err)
	}
	l := letters[0]
	fmt.Printf("%s: %s, from %s, reconsumed %s times\n", l.Key, l.Properties["reason"], l.Properties["REAL_TOPIC"], l.Properties["RECONSUMETIMES"])
	// Output: payment-7: negative amount, from persistent://public/default/payments, reconsumed 3 times
}

// With a data directory, what was receipted before a restart is there after it, at the same
// address: the subscription made before the restart delivers the message sent before it.
func ExampleBroker_Restart() {
	dir, err := os.MkdirTemp("", "pulsartest-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	b, err := pulsartest.New(pulsartest.Dir(dir))
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.DefaultNopLogger()})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	subscribe := func() pulsar.Consumer {
		consumer, err := client.Subscribe(pulsar.ConsumerOptions{Topic: "ledger", SubscriptionName: "books"})
		if err != nil {
			panic(err)
		}
		return consumer
	}
	subscribe().Close() // the subscription keeps what is sent from now on
	producer, err := client.CreateProducer(pulsar.ProducerOptions{Topic: "ledger"})
	if err != nil {
		panic(err)
	}
	if _, err := producer.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("entry 1")}); err != nil {
		panic(err)
	}
	producer.Close()

	if err := b.Restart(); err != nil {
		panic(err)
	}
	consumer := subscribe()
	defer consumer.Close()
	msg, err := consumer.Receive(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", msg.Payload())
	consumer.Ack(msg)
	// Output: entry 1
}
