//go:build clustertest

package client_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
)

// Our client on the three-broker fixture while partitions change owner: a producer resends
// what was pending to the new owner (the old owner having lost the receipts of what it stored
// last), a consumer resubscribes and resumes from its cursor. Nothing is lost, each partition
// keeps its order, and with deduplication the topic holds every message once.

const movesTopic = "persistent://public/default/moves"

// startMovesCluster starts the fixture with deduplication on and a topic of six partitions,
// two on each broker.
func startMovesCluster(t *testing.T) *clustertest.Cluster {
	t.Helper()
	c := clustertest.Start(t, clustertest.Options{Config: func(cfg *broker.Config) {
		cfg.BrokerDeduplicationEnabled = true
		cfg.Logger = brokertest.PrefixLogger(t, "broker: ")
	}})
	if err := c.Broker.CreatePartitionedTopic(movesTopic, 6, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// moveNext gives partition p of movesTopic to the next broker round the cluster, the old
// owner losing its last receipts, once the partition's producer and consumer are back from
// the last move; it returns how many producers and consumers the move closed and how many
// receipts were lost.
func moveNext(t *testing.T, c *clustertest.Cluster, p int) (producers, consumers, lost int) {
	name := fmt.Sprintf("%s-partition-%d", movesTopic, p)
	if !c.AwaitAttached(name, 1, 1, 20*time.Second) {
		t.Errorf("%s: the producer or the consumer did not come back", name)
	}
	return c.MoveLosingReceipts(name, (c.OwnerIndex(name)+1)%len(c.Members))
}

func TestClientAcrossMoves(t *testing.T) {
	const n = 3000
	c := startMovesCluster(t)
	ctx := brokertest.Ctx(t, 90*time.Second)
	cl, err := client.New(client.Options{ServiceURL: c.ServiceURL(), OperationTimeout: 20 * time.Second, Logger: brokertest.PrefixLogger(t, "client: ")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	cons := mustSubscribe(t, cl, client.ConsumerOptions{Topic: movesTopic, SubscriptionName: "live", InitialPosition: client.Earliest})
	// The audit subscription keeps what is stored for the check at the end: the live one acks
	// everything, and the ledgers the moves close would go with no subscription needing them.
	auditOpts := client.ConsumerOptions{Topic: movesTopic, SubscriptionName: "audit", InitialPosition: client.Earliest}
	mustSubscribe(t, cl, auditOpts).Close() // read at the end, once
	prod := mustProducer(t, cl, client.ProducerOptions{Topic: movesTopic, Name: "mover", SendTimeout: -1})

	received := make(chan error, 1)
	live := map[string][]int{} // partition → indices in the order first received
	go func() {
		seen := map[int]bool{}
		for len(seen) < n {
			m, err := cons.Receive(ctx)
			if err != nil {
				received <- fmt.Errorf("after %d of %d: %w", len(seen), n, err)
				return
			}
			i, _ := strconv.Atoi(string(m.Payload))
			if !seen[i] {
				seen[i] = true
				live[m.Topic] = append(live[m.Topic], i)
			}
			cons.Ack(m)
		}
		received <- nil
	}()
	futures := make([]*client.SendFuture, n)
	moves, closedP, closedC, lost := 0, 0, 0, 0
	for i := range n {
		futures[i] = prod.SendAsync(ctx, &client.Message{Key: "k" + strconv.Itoa(i%60), Payload: []byte(strconv.Itoa(i))})
		if i%250 == 125 { // a partition moves with sends in flight, and the consumer's with it
			p, cs, l := moveNext(t, c, moves%6)
			closedP, closedC, lost, moves = closedP+p, closedC+cs, lost+l, moves+1
		}
	}
	for i, f := range futures {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if err := <-received; err != nil {
		t.Fatalf("live consumer: %v", err)
	}
	t.Logf("%d moves closed %d producers and %d consumers; %d receipts lost", moves, closedP, closedC, lost)
	if closedP < moves || closedC < moves || lost == 0 {
		t.Fatalf("%d moves closed %d producers and %d consumers: the clients did not follow", moves, closedP, closedC)
	}
	checkPerPartitionOrder(t, "live consumer", live, n)

	// The topic itself: every message once, in order within its partition.
	stored := map[string][]int{}
	all := mustSubscribe(t, cl, auditOpts)
	for range n {
		m, err := all.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i, _ := strconv.Atoi(string(m.Payload))
		stored[m.Topic] = append(stored[m.Topic], i)
		all.Ack(m)
	}
	checkPerPartitionOrder(t, "the topic", stored, n)
	expectNoMore(t, all)
}

// checkPerPartitionOrder fails unless got holds each of 0..n-1 once, increasing within each
// partition (a key's messages all go to one partition in the order sent).
func checkPerPartitionOrder(t *testing.T, what string, got map[string][]int, n int) {
	t.Helper()
	seen := map[int]bool{}
	for part, idx := range got {
		for k, i := range idx {
			if seen[i] {
				t.Fatalf("%s: message %d twice", what, i)
			}
			seen[i] = true
			if k > 0 && idx[k-1] > i {
				t.Fatalf("%s: %s has %d after %d", what, part, i, idx[k-1])
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("%s: %d messages, want %d", what, len(seen), n)
	}
}

// expectNoMore fails if cons receives anything within a moment.
func expectNoMore(t *testing.T, cons *client.Consumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if m, err := cons.Receive(ctx); err == nil {
		t.Fatalf("one more message: %q from %s", m.Payload, m.Topic)
	}
}

// A reader and a consumer through the fixture's proxy (lookups answered Connect with
// proxy_through_service_url, connections to the proxy naming the owner), while the topic
// moves, the old owner losing its last receipts: the reader resumes after its last message,
// and the topic holds every message once, in order.
func TestReaderThroughTheProxyAcrossMoves(t *testing.T) {
	const n = 2000
	c := clustertest.Start(t, clustertest.Options{Proxy: true, Config: func(cfg *broker.Config) {
		cfg.BrokerDeduplicationEnabled = true
		cfg.Logger = brokertest.PrefixLogger(t, "broker: ")
	}})
	ctx := brokertest.Ctx(t, 90*time.Second)
	cl, err := client.New(client.Options{ServiceURL: c.ServiceURL(), OperationTimeout: 20 * time.Second, Logger: brokertest.PrefixLogger(t, "client: ")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	topic := c.TopicOwnedBy("proxied", 1)
	// The audit subscription keeps what is sent (nothing else would: a reader retains nothing).
	audit := mustSubscribe(t, cl, client.ConsumerOptions{Topic: topic, SubscriptionName: "audit", InitialPosition: client.Earliest})
	prod := mustProducer(t, cl, client.ProducerOptions{Topic: topic, SendTimeout: -1})
	if _, err := prod.Send(ctx, &client.Message{Payload: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	r, err := cl.CreateReader(ctx, client.ReaderOptions{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })

	read := make(chan error, 1)
	go func() {
		for want := 0; want < n; want++ {
			m, err := r.Next(ctx)
			if err != nil {
				read <- fmt.Errorf("after %d: %w", want, err)
				return
			}
			if got := string(m.Payload); got != strconv.Itoa(want) {
				read <- fmt.Errorf("message %d: got %s", want, got)
				return
			}
		}
		read <- nil
	}()
	futures := make([]*client.SendFuture, 0, n)
	moves, lost := 0, 0
	for i := 1; i < n; i++ {
		futures = append(futures, prod.SendAsync(ctx, &client.Message{Payload: []byte(strconv.Itoa(i))}))
		if i%500 == 250 {
			if !c.AwaitAttached(topic, 1, 2, 20*time.Second) { // the reader's and the audit's
				t.Errorf("the producer, the reader or the audit consumer did not come back")
			}
			_, _, l := c.MoveLosingReceipts(topic, (c.OwnerIndex(topic)+1)%len(c.Members))
			moves, lost = moves+1, lost+l
		}
	}
	for i, f := range futures {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatalf("send %d: %v", i+1, err)
		}
	}
	if err := <-read; err != nil {
		t.Fatalf("reader: %v", err)
	}
	t.Logf("%d moves, %d receipts lost", moves, lost)
	if lost == 0 {
		t.Fatal("no receipt was lost: the moves came between sends")
	}
	for want := range n {
		m, err := audit.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(m.Payload); got != strconv.Itoa(want) {
			t.Fatalf("stored message %d: %s", want, got)
		}
		audit.Ack(m)
	}
	expectNoMore(t, audit)
}
