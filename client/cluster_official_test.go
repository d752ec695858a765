//go:build clustertest && !race

package client_test

// The official Go client across the same moves, as the oracle of what a client should see.
// Not under the race detector: the official client (v0.19.0) writes its producer's name and
// epoch in its reconnect goroutine while its event loop reads them for the sends in flight, a
// race of its own that any reconnection with sends pending shows.

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

func TestOfficialClientAcrossMoves(t *testing.T) {
	const n = 3000
	c := startMovesCluster(t)
	ctx := brokertest.Ctx(t, 90*time.Second)
	cl, err := pulsar.NewClient(pulsar.ClientOptions{URL: c.ServiceURL(), OperationTimeout: 20 * time.Second,
		Logger: plog.NewLoggerWithSlog(brokertest.PrefixLogger(t, "official: "))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	cons, err := cl.Subscribe(pulsar.ConsumerOptions{Topic: movesTopic, SubscriptionName: "live",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	// The audit subscription keeps what is stored for the check at the end: the live one acks
	// everything, and the ledgers the moves close would go with no subscription needing them.
	auditOpts := pulsar.ConsumerOptions{Topic: movesTopic, SubscriptionName: "audit",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest}
	audit, err := cl.Subscribe(auditOpts)
	if err != nil {
		t.Fatal(err)
	}
	audit.Close() // read at the end, once: a consumer that lives through the moves gets redeliveries
	prod, err := cl.CreateProducer(pulsar.ProducerOptions{Topic: movesTopic, Name: "official-mover", SendTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()

	received := make(chan error, 1)
	live := map[string][]int{}
	go func() {
		seen := map[int]bool{}
		for len(seen) < n {
			m, err := cons.Receive(ctx)
			if err != nil {
				received <- err
				return
			}
			i, _ := strconv.Atoi(string(m.Payload()))
			if !seen[i] {
				seen[i] = true
				live[m.Topic()] = append(live[m.Topic()], i)
			}
			cons.Ack(m)
		}
		received <- nil
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sendErr error
	moves, closedP, closedC, lost := 0, 0, 0, 0
	for i := range n {
		wg.Add(1)
		prod.SendAsync(ctx, &pulsar.ProducerMessage{Key: "k" + strconv.Itoa(i%60), Payload: []byte(strconv.Itoa(i))},
			func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
				if err != nil {
					mu.Lock()
					sendErr = err
					mu.Unlock()
				}
				wg.Done()
			})
		if i%250 == 125 {
			p, cs, l := moveNext(t, c, moves%6)
			closedP, closedC, lost, moves = closedP+p, closedC+cs, lost+l, moves+1
		}
	}
	wg.Wait()
	if sendErr != nil {
		t.Fatalf("send: %v", sendErr)
	}
	if err := <-received; err != nil {
		t.Fatalf("live consumer: %v", err)
	}
	t.Logf("%d moves closed %d producers and %d consumers; %d receipts lost", moves, closedP, closedC, lost)
	if closedP < moves || closedC < moves || lost == 0 {
		t.Fatalf("the clients did not follow the moves")
	}
	checkPerPartitionOrder(t, "live consumer", live, n)

	if audit, err = cl.Subscribe(auditOpts); err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	stored := map[string][]int{}
	for range n {
		m, err := audit.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i, _ := strconv.Atoi(string(m.Payload()))
		stored[m.Topic()] = append(stored[m.Topic()], i)
		audit.Ack(m)
	}
	checkPerPartitionOrder(t, "the topic", stored, n)
	more, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if m, err := audit.Receive(more); err == nil {
		t.Fatalf("one more message: %q from %s", m.Payload(), m.Topic())
	}
}
