package main

// The many part's busy run again, the load carried by our client: on this 2-core machine the
// official client needs about 1.4 cores for 50,000 unbatched messages a second (producers and
// consumers, 28 µs a message), which leaves the broker too little to say anything of its
// latency. Our client's producers (batching off, as the official ones) and consumers take the
// 100 busy topics over, one client and connection each as before; the 10,000 official
// producers and the other 9,900 consumers stay attached and idle.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// manyBusyOurs runs the busy load through our client on the topics measureMany created.
func manyBusyOurs(ctx context.Context, p *brokerProc, failed func(string, error)) *busyReport {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	type busyTopic struct {
		cl      *client.Client
		prod    *client.Producer
		cons    *client.Consumer
		futures chan func() // each waits for one receipt, in order
	}
	topics := make([]*busyTopic, idleBusyTopics)
	var wg sync.WaitGroup
	defer func() {
		stop()
		for _, t := range topics {
			if t != nil {
				close(t.futures)
			}
		}
		wg.Wait()
		for _, t := range topics {
			if t != nil {
				t.cl.Close()
			}
		}
	}()
	var received atomic.Int64
	var pending sync.WaitGroup // sends whose receipt the waiters have not handed to done yet
	for i := range topics {
		cl, err := client.New(client.Options{ServiceURL: p.serviceURL, OperationTimeout: 10 * time.Second, Logger: ourLogger})
		if err != nil {
			failed("many: our client", err)
			return nil
		}
		t := &busyTopic{cl: cl, futures: make(chan func(), 4096)}
		topics[i] = t
		topic := fmt.Sprintf("persistent://public/default/idle-%05d", i)
		sctx, cancel := context.WithTimeout(ctx, setupTimeout)
		t.cons, err = cl.Subscribe(sctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: client.Shared})
		if err == nil {
			t.prod, err = cl.CreateProducer(sctx, client.ProducerOptions{Topic: topic, DisableBatching: true})
		}
		cancel()
		if err != nil {
			failed("many: our client on "+topic, err)
			return nil
		}
		// Receipts come in order: one goroutine waits for them in turn, as the official
		// client's callback goroutine does.
		wg.Add(2)
		go func() {
			defer wg.Done()
			for wait := range t.futures {
				wait()
			}
		}()
		go func() {
			defer wg.Done()
			for {
				m, err := t.cons.Receive(rctx)
				if err != nil {
					return
				}
				_ = t.cons.Ack(m)
				received.Add(1)
			}
		}()
	}
	payload := make([]byte, payloadSize)
	send := func(i int, done func(error)) {
		t := topics[i%len(topics)]
		pending.Add(1)
		f := t.prod.SendAsync(rctx, &client.Message{Payload: payload})
		t.futures <- func() {
			defer pending.Done()
			_, err := f.Result()
			done(err)
		}
	}
	flush := func() error {
		for _, t := range topics {
			if err := t.prod.Flush(ctx); err != nil {
				return err
			}
		}
		pending.Wait()
		return nil
	}
	b, err := paceBusy(rctx, p.pid(), send, flush)
	if err != nil {
		failed("many: our client's busy producers", err)
		return nil
	}
	b.res.received = received.Load()
	return b
}
