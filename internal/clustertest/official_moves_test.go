//go:build clustertest && !race

package clustertest_test

// The official Go client's producer across moves. Not under the race detector: the client
// (v0.19.0) writes its producer's name and epoch in its reconnect goroutine while its event
// loop reads them for the sends in flight, a race of its own that any reconnection with sends
// pending shows.

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
)

func TestOfficialProducerFollowsMoves(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{})
	topic := c.TopicOwnedBy("refused", 1)
	cl := officialClient(t, c.Members[0].ServiceURL)
	// The producer follows every move: each CLOSE_PRODUCER sends it to a new lookup, and the
	// broker it comes to owns the topic.
	ctx := brokertest.Ctx(t, 30*time.Second)
	prod, err := cl.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	// A subscription keeps what is sent: a move is an unload, which closes the topic's ledger,
	// and a closed ledger nothing needs goes, as upstream's.
	if err := c.Broker.CreateSubscription(topic, "keep", adminapi.MessageID{LedgerID: -1, EntryID: -1}); err != nil {
		t.Fatal(err)
	}
	var l lookups
	l.watch(c.Broker)
	for i, to := range []int{0, 2, 1} {
		c.Move(topic, to)
		if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Payload: []byte(fmt.Sprint(i))}); err != nil {
			t.Fatalf("send after the move to %d: %v", to, err)
		}
	}
	if got := l.get(); got.closeProducer != 3 {
		t.Fatalf("%d CLOSE_PRODUCER, want one per move", got.closeProducer)
	}
	// Counted by the subscription's backlog: after an unload the topic's message counters
	// start again, as upstream's do when a broker loads a topic.
	st, err := c.Broker.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Subscriptions["keep"].MsgBacklog; got != 3 {
		t.Fatalf("topic holds %d messages, want 3", got)
	}
}
