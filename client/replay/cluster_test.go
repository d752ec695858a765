//go:build clustertest

package replay

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
)

// A replay of 10,000 dead letters to a topic of six partitions spread over the three brokers
// of the fixture, deduplication on, while two of those partitions change owner mid-run (their
// producers closed with a window of sends in flight, the receipts of what the old owner stored
// last lost, so that the replay sends those letters again): the origin receives every letter
// once, each key's in DLQ order, and every letter is acknowledged in the DLQ.
func TestReplayAcrossMoves(t *testing.T) {
	const n = 10_000
	c := clustertest.Start(t, clustertest.Options{Config: func(cfg *broker.Config) {
		cfg.BrokerDeduplicationEnabled = true
		cfg.Logger = brokertest.Logger(t)
	}})
	ctx := brokertest.Ctx(t, 180*time.Second)
	if err := c.Broker.CreatePartitionedTopic(origin, 6, nil); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(client.Options{ServiceURL: c.ServiceURL(), OperationTimeout: 20 * time.Second, Logger: brokertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	ad, err := admin.New(admin.Options{URL: c.AdminURL(), TrustedHosts: []string{"127.0.0.3", "127.0.0.4"}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{b: c.Broker, admin: ad, cl: cl, state: t.TempDir()}
	app := subscribe(t, cl, origin, "app")
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message {
		m := deadLetter(origin, i, nil)
		m.Key = "key" + strconv.Itoa(i%12)
		m.Payload = []byte(strconv.Itoa(i))
		return m
	})

	events := make(chan Event, 64)
	moved := make(chan [3]int, 1)
	go func() {
		seen, closedP, closedC, lost := 0, 0, 0, 0
		for range events {
			seen++
			// Two partitions move, at a fifth and at half way, while sends are in flight.
			for k, at := range []int{n / 5, n / 2} {
				if seen == at {
					name := fmt.Sprintf("%s-partition-%d", origin, k*3+1)
					if !c.AwaitAttached(name, 1, 1, 20*time.Second) {
						t.Errorf("%s: the replay's producer or the app's consumer is not attached", name)
					}
					p, cs, l := c.MoveLosingReceipts(name, (c.OwnerIndex(name)+1)%len(c.Members))
					closedP, closedC, lost = closedP+p, closedC+cs, lost+l
				}
			}
		}
		moved <- [3]int{closedP, closedC, lost}
	}()
	sum, err := Run(ctx, cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Deduplication: true, Events: events})
	if err != nil || !sum.OK() || sum.Moved != n || !sum.ExactlyOnce {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	closed := <-moved
	t.Logf("the moves closed %d producers and %d consumers; %d receipts lost", closed[0], closed[1], closed[2])
	if closed[0] < 2 || closed[1] < 2 || closed[2] == 0 {
		t.Fatalf("the moves closed %d producers and %d consumers and lost %d receipts: want the replay's and the app's on each, and receipts lost",
			closed[0], closed[1], closed[2])
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Fatalf("the DLQ's backlog is %d after the replay", b)
	}
	perKey := map[string][]int{}
	seen := map[int]bool{}
	for _, m := range receiveN(t, app, n, 500*time.Millisecond) {
		i, _ := strconv.Atoi(string(m.Payload))
		if seen[i] {
			t.Fatalf("letter %d arrived twice", i)
		}
		seen[i] = true
		perKey[m.Key] = append(perKey[m.Key], i)
	}
	for k, got := range perKey {
		if !slices.IsSorted(got) {
			t.Errorf("key %s arrived out of DLQ order", k)
		}
	}
}
