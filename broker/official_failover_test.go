package broker_test

import (
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

// activeEvents is a failover listener of the official Go client that reports what it is told.
type activeEvents chan bool

func (e activeEvents) BecameActive(pulsar.Consumer, string, int32)   { e <- true }
func (e activeEvents) BecameInactive(pulsar.Consumer, string, int32) { e <- false }

// expectActive waits for the next event of e and fails unless it says active == want.
func expectActive(t *testing.T, e activeEvents, who string, want bool) {
	t.Helper()
	select {
	case got := <-e:
		if got != want {
			t.Fatalf("%s was told active=%v, want active=%v", who, got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s's failover listener was not called within 10 s (want active=%v)", who, want)
	}
}

// A Failover subscription tells its consumers which one is active from its dispatcher, after
// activeConsumerFailoverDelayTimeMillis (upstream's 1 s by default) and so after SUBSCRIBE's
// SUCCESS: the official Go client's failover listeners fire, for the first consumer and for
// the one that is active once the first leaves, which then receives what is left. (Whether the
// second consumer takes over as it joins depends on upstream's hash ring of the names; either
// way the first thing it is told is that it is active.)
func TestOfficialFailoverListenersFire(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	first, second := make(activeEvents, 8), make(activeEvents, 8)
	c1, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Failover, EventListener: first})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	expectActive(t, first, "the first consumer", true)

	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", 1)
	if m := receiveOne(t, c1, 10*time.Second); string(m.Payload()) != "m0" {
		t.Fatalf("the active consumer got %q, want m0", m.Payload())
	} else if err := c1.Ack(m); err != nil {
		t.Fatal(err)
	}
	c2 := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Failover, EventListener: second})
	c1.Close()
	expectActive(t, second, "the second consumer", true)
	sendN(t, p, "n", 1)
	if m := receiveOne(t, c2, 10*time.Second); string(m.Payload()) != "n0" {
		t.Fatalf("the consumer active now got %q, want n0", m.Payload())
	}
}
