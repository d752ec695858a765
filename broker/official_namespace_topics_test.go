package broker_test

import (
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

// GET_TOPICS_OF_NAMESPACE for a namespace that does not exist answers an empty list, as
// upstream: a pattern consumer over it subscribes at once (an error would be retried until the
// client's operation timeout), and picks up the namespace's first topic once it exists.
func TestOfficialPatternConsumerOnMissingNamespace(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	ns := "public/" + localName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{
		TopicsPattern:               "persistent://" + ns + "/t-.*",
		SubscriptionName:            "s",
		AutoDiscoveryPeriod:         200 * time.Millisecond,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})

	if err := b.CreateNamespace(ns, nil); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	topic := "persistent://" + ns + "/t-1"
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	sendN(t, p, "m", 1)
	if m := receiveOne(t, cons, 15*time.Second); string(m.Payload()) != "m0" || m.Topic() != topic {
		t.Fatalf("got %q from %q, want m0 from %s", m.Payload(), m.Topic(), topic)
	}
}
