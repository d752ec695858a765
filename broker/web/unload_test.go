package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Unloading a topic closes its producers and consumers with reconnect allowed and closes its
// ledger: the official client comes back on its own, its next message goes to a new ledger,
// the subscription goes on from its cursor, and nothing is lost.
func TestPulsarAdminUnloadTopic(t *testing.T) {
	t.Parallel()
	t.Run("durable", func(t *testing.T) { t.Parallel(); testUnloadTopic(t, durableEnv(t, 64<<20)) })
	t.Run("in-memory", func(t *testing.T) { t.Parallel(); testUnloadTopic(t, newEnv(t)) })
}

func testUnloadTopic(t *testing.T, e *env) {
	topic := "persistent://public/default/unload"
	tn := *topicName(t, topic)
	c := e.client(t)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	must(t, err)
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var first pulsar.MessageID
	for i := range 5 {
		id, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)})
		must(t, err)
		first = id
	}
	for range 3 {
		msg, err := cons.Receive(ctx)
		must(t, err)
		must(t, cons.Ack(msg))
	}
	// The acknowledgements reach the broker before the unload.
	brokertest.WaitForNil(t, 10*time.Second, "three acknowledged", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if b := st.Subscriptions["s"].MsgBacklog; b != 2 {
			return fmt.Errorf("backlog %d", b)
		}
		return nil
	})

	st, err := e.adm.Topics().GetStats(tn)
	must(t, err)
	if len(st.Publishers) != 1 {
		t.Fatalf("publishers before the unload: %+v", st.Publishers)
	}
	before := st.Publishers[0].ConnectedSince

	must(t, e.adm.Topics().Unload(tn))

	// The producer reconnects by itself. The next message goes to a new ledger; it is sent by
	// a producer of its own, because the Go client's reconnection writes the producer's fields
	// after the broker has registered it, racing with a send given meanwhile (the race
	// detector stops such a test), and the broker cannot tell when the client is done.
	brokertest.WaitForNil(t, 10*time.Second, "the producer reconnected", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if len(st.Publishers) != 1 || st.Publishers[0].ConnectedSince == before {
			return fmt.Errorf("publishers %+v", st.Publishers)
		}
		return nil
	})
	p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p2.Close()
	id, err := p2.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("m5")})
	must(t, err)
	if id.LedgerID() == first.LedgerID() {
		t.Errorf("after the unload the message went to ledger %d, the one open before", id.LedgerID())
	}
	// The consumer reconnects and gets what it had not acknowledged, then the new message
	// (what it had prefetched may come twice: at least once, as upstream).
	got := map[string]bool{}
	for !got["m5"] {
		msg, err := cons.Receive(ctx)
		must(t, err)
		got[string(msg.Payload())] = true
		must(t, cons.Ack(msg))
	}
	if len(got) != 3 || !got["m3"] || !got["m4"] {
		t.Errorf("after the unload the consumer got %v, want m3, m4 and m5", got)
	}
	internal, err := e.adm.Topics().GetInternalStats(tn)
	must(t, err)
	if len(internal.Ledgers) < 2 || internal.Ledgers[0].LedgerID != first.LedgerID() || internal.Ledgers[0].Entries != 5 {
		t.Errorf("ledgers %+v: want the closed ledger %d with its 5 entries, then a new one", internal.Ledgers, first.LedgerID())
	}
}

// Unloading a namespace (or its bundle) unloads its topics: their clients reconnect.
func TestPulsarAdminUnloadNamespace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := "persistent://public/default/unload-ns"
	tn := *topicName(t, topic)
	c := e.client(t)
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	must(t, err)
	defer p.Close()
	since := func() string {
		st, err := e.adm.Topics().GetStats(tn)
		must(t, err)
		if len(st.Publishers) != 1 {
			return ""
		}
		return st.Publishers[0].ConnectedSince
	}
	before := since()
	if before == "" {
		t.Fatal("no publisher before the unload")
	}
	for _, unload := range []func() error{
		func() error { return e.adm.Namespaces().Unload("public/default") },
		func() error {
			return e.adm.Namespaces().UnloadNamespaceBundle("public/default", "0x00000000_0xffffffff")
		},
	} {
		must(t, unload())
		brokertest.WaitForNil(t, 10*time.Second, "the producer reconnected", func() error {
			if now := since(); now == "" || now == before {
				return fmt.Errorf("publisher connected since %q", now)
			}
			return nil
		})
		// (No send on it now: see testUnloadTopic for the Go client's race.)
		before = since()
	}
	err = e.adm.Namespaces().UnloadNamespaceBundle("public/default", "0x00000000_0x80000000")
	wantStatus(t, "unload of a bundle the namespace does not have", err, 404)
}
