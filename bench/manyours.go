package main

// The many part's busy run carried by our client: on this 2-core machine the official client
// needs about 1.4 cores for 50,000 unbatched messages a second (producers and consumers, 28 µs
// a message), which leaves the broker too little to say anything of its latency. Our client's
// producers (batching off, as the official ones) and consumers take the 100 busy topics over,
// one client and connection each; the 10,000 official producers and the other 9,900 consumers
// stay attached and idle. The same clients run every round, on the letterbox broker and,
// attached the same way, on the null broker.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// ourBusy is our client on each busy topic of one broker: a producer, a consumer that receives
// and acknowledges as long as it is attached, and a goroutine that waits for the producer's
// receipts in turn, as the official client's callback goroutine does.
type ourBusy struct {
	topics   []*ourBusyTopic
	stop     context.CancelFunc
	wg       sync.WaitGroup
	received atomic.Int64
}

type ourBusyTopic struct {
	cl      *client.Client
	prod    *client.Producer
	cons    *client.Consumer
	futures chan func() // each waits for one receipt, in order
}

// attachOurBusy attaches our clients to the busy topics of the broker at serviceURL. Whatever
// it returns, even with an error, is to be closed.
func attachOurBusy(ctx context.Context, serviceURL string) (*ourBusy, error) {
	rctx, stop := context.WithCancel(ctx)
	o := &ourBusy{stop: stop}
	for i := range idleBusyTopics {
		cl, err := client.New(client.Options{ServiceURL: serviceURL, OperationTimeout: 10 * time.Second, Logger: ourLogger})
		if err != nil {
			return o, err
		}
		t := &ourBusyTopic{cl: cl, futures: make(chan func(), 4096)}
		o.topics = append(o.topics, t)
		topic := fmt.Sprintf("persistent://public/default/idle-%05d", i)
		sctx, cancel := context.WithTimeout(ctx, setupTimeout)
		t.cons, err = cl.Subscribe(sctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.Shared})
		if err == nil {
			t.prod, err = cl.CreateProducer(sctx, client.ProducerOptions{Topic: topic, DisableBatching: true})
		}
		cancel()
		if err != nil {
			return o, fmt.Errorf("%s: %w", topic, err)
		}
		o.wg.Add(2)
		go func() {
			defer o.wg.Done()
			for wait := range t.futures {
				wait()
			}
		}()
		go func() {
			defer o.wg.Done()
			for {
				m, err := t.cons.Receive(rctx)
				if err != nil {
					return
				}
				_ = t.cons.Ack(m)
				o.received.Add(1)
			}
		}()
	}
	return o, nil
}

// run paces the busy load at rate through the producers and reports it; pid is the broker's.
func (o *ourBusy) run(ctx context.Context, pid, rate int, failed func(string, error)) *busyReport {
	var pending sync.WaitGroup // sends whose receipt the waiters have not handed to done yet
	payload := make([]byte, payloadSize)
	send := func(i int, done func(error)) {
		t := o.topics[i%len(o.topics)]
		pending.Add(1)
		f := t.prod.SendAsync(ctx, &client.Message{Payload: payload})
		t.futures <- func() {
			defer pending.Done()
			_, err := f.Result()
			done(err)
		}
	}
	flush := func() error {
		for _, t := range o.topics {
			if err := t.prod.Flush(ctx); err != nil {
				return err
			}
		}
		pending.Wait()
		return nil
	}
	before := o.received.Load()
	b, err := paceBusy(ctx, pid, rate, send, flush)
	if err != nil {
		failed("many: our client's busy producers", err)
		return nil
	}
	b.res.received = o.received.Load() - before
	return b
}

// close stops the receivers and waiters and closes the clients.
func (o *ourBusy) close() {
	o.stop()
	for _, t := range o.topics {
		close(t.futures)
	}
	o.wg.Wait()
	for _, t := range o.topics {
		t.cl.Close()
	}
}
