package client_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// TestBrokerRestart: a durable broker restarted under a live producer and consumer. Sends
// resume, the consumer resumes from its cursor, and every receipted message is received.
func TestBrokerRestart(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Dir(t.TempDir()))
	c := newClient(t, b)
	topic := uniqueTopic(t)
	cons := mustSubscribe(t, c, client.ConsumerOptions{Topic: topic, SubscriptionName: "s", InitialPosition: client.Earliest})
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic})
	ctx := brokertest.Ctx(t, 40*time.Second)

	var mu sync.Mutex
	receipted := map[string]bool{}
	var wg sync.WaitGroup
	restarted := make(chan struct{})
	sent := 0
	wg.Add(1)
	go func() { // sends before, during and after the restart
		defer wg.Done()
		after := -1
		var futs []*client.SendFuture
		for i := 0; after < 0 || i < after+50; i++ {
			if after < 0 {
				select {
				case <-restarted:
					after = i
				default:
				}
			}
			f := p.SendAsync(ctx, &client.Message{Payload: []byte(fmt.Sprint(i))})
			futs = append(futs, f)
			if i%10 == 9 {
				f.Wait(ctx) // pace the sends by the broker's receipts (or the reconnect)
			}
			if i > 100000 {
				t.Error("restart never signalled")
				break
			}
		}
		for i, f := range futs {
			if _, err := f.Wait(ctx); err != nil {
				t.Errorf("send %d: %v", i, err)
				continue
			}
			mu.Lock()
			receipted[fmt.Sprint(i)] = true
			mu.Unlock()
		}
		sent = len(futs)
	}()

	received := map[string]bool{}
	for _, m := range receiveN(t, cons, 20, 10*time.Second) {
		received[string(m.Payload)] = true
		cons.Ack(m)
	}
	if err := cons.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	close(restarted)
	wg.Wait()
	for len(received) < len(receipted) {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("received %d of %d receipted: %v", len(received), len(receipted), err)
		}
		received[string(m.Payload)] = true
		cons.Ack(m)
	}
	for k := range receipted {
		if !received[k] {
			t.Errorf("receipted message %s never received", k)
		}
	}
	if len(receipted) != sent {
		t.Errorf("%d of %d sends receipted", len(receipted), sent)
	}
	t.Logf("%d messages sent across the restart, all received", sent)
}

// A reader says it is disconnected while its broker is away, and reconnects by itself to read
// on from where it was once the broker is back. (The test looks at the reader between the stop
// and the start, which pulsartest's Restart does as one step: it starts the broker itself.)
func TestReaderConnectedAcrossRestart(t *testing.T) {
	t.Parallel()
	start := durableBroker(t)
	b := start("127.0.0.1:0")
	addr := b.Addr()
	c := newClient(t, b)
	topic := uniqueTopic(t)
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
	ctx := brokertest.Ctx(t, 40*time.Second)
	r, err := c.CreateReader(ctx, client.ReaderOptions{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	publish(t, p, 1)
	if m, err := r.Next(ctx); err != nil || string(m.Payload) != "0" {
		t.Fatalf("first message: %v, %v", m, err)
	}
	if !r.Connected() {
		t.Fatal("a reading reader says it is not connected")
	}
	b.Close()
	brokertest.WaitFor(t, 10*time.Second, "the reader still says it is connected with its broker gone", func() bool { return !r.Connected() })
	start(addr)
	brokertest.WaitFor(t, 20*time.Second, "the reader did not reconnect", r.Connected)
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("after")}); err != nil {
		t.Fatal(err)
	}
	if m, err := r.Next(ctx); err != nil || string(m.Payload) != "after" {
		t.Fatalf("after the restart: %v, %v (want the message sent after it)", m, err)
	}
}

// durableBroker returns a function that starts a broker on addr over the same data directory
// each time (the previous one closed first), stopped when the test ends.
func durableBroker(t *testing.T) func(addr string) *broker.Broker {
	dir := t.TempDir()
	return func(addr string) *broker.Broker {
		t.Helper()
		st, err := storage.OpenFileStore(dir, storage.FileStoreOptions{})
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		cfg := broker.DefaultConfig()
		cfg.ListenAddr, cfg.Store, cfg.Logger = addr, st, brokertest.PrefixLogger(t, "broker: ")
		b, err := broker.New(broker.WithConfig(cfg))
		if err != nil {
			t.Fatalf("start broker on %s: %v", addr, err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
}
