package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Message TTL through pulsaradmin: the namespace policy's endpoints, and the broker expiring
// what a subscription left unacknowledged for longer than the TTL (checked every 50 ms here
// instead of upstream's five minutes). The broker measures the messages' age on a clock the
// test moves.

func expiryEvery(d time.Duration) broker.Option {
	return func(c *broker.Config) { c.MessageExpiryCheckInterval = d }
}

// produce sends n unbatched messages to topic.
func produce(t *testing.T, c pulsar.Client, topic string, n int) {
	t.Helper()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p.Close()
	for i := range n {
		_, err := p.Send(context.Background(), &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)})
		must(t, err)
	}
}

// ageMessages moves clk more than a second past every message sent so far (the clients stamp
// publish times from the machine's clock), so that a TTL of a second covers them all.
func ageMessages(clk *brokertest.Clock) { clk.AdvanceTo(time.Now().Add(2 * time.Second)) }

// expiryPassed returns once a whole pass of the broker's expiry has gone over every topic
// after the call, with the messages sent before it aged past a TTL of a second: three times a
// message is sent to control (on a namespace whose TTL is a second, its subscription sub never
// reading), the messages aged, and the message has to leave the backlog. Each can only go in
// a pass that begins once the pass that took the one before has finished: the second began
// after the call, and the third shows that it has finished.
func expiryPassed(t *testing.T, e *env, clk *brokertest.Clock, c pulsar.Client, control, sub string) {
	t.Helper()
	for range 3 {
		produce(t, c, control, 1)
		ageMessages(clk)
		brokertest.WaitForNil(t, 10*time.Second, "the control topic's message expires", func() error {
			st, err := e.adm.Topics().GetStats(*topicName(t, control))
			if err != nil {
				return err
			}
			if b := st.Subscriptions[sub].MsgBacklog; b != 0 {
				return fmt.Errorf("backlog of %s: %d", control, b)
			}
			return nil
		})
	}
}

func TestPulsarAdminMessageTTL(t *testing.T) {
	t.Parallel()
	clk := brokertest.NewClock(time.Now())
	e := newEnv(t, expiryEvery(50*time.Millisecond), clk.Use)
	ns := e.adm.Namespaces()
	must(t, ns.CreateNamespace("public/dlq"))

	ttl, err := ns.GetNamespaceMessageTTL("public/dlq")
	must(t, err)
	if ttl != -1 {
		t.Errorf("TTL before any is set = %d, want -1 (unset)", ttl)
	}
	wantStatus(t, "negative TTL", ns.SetNamespaceMessageTTL("public/dlq", -5), 412)
	// The reason as upstream writes it, ">=" and all (not "\u003e=").
	resp, body := send(t, "POST", e.s.URL()+"/admin/v2/namespaces/public/dlq/messageTTL", "application/json", []byte("-5"))
	if want := `{"reason":"Invalid value for message TTL, message TTL must >= 0"}`; resp.StatusCode != 412 || body != want {
		t.Errorf("negative TTL: %d %s, want 412 %s", resp.StatusCode, body, want)
	}
	wantStatus(t, "TTL of a missing namespace", ns.SetNamespaceMessageTTL("public/none", 5), 404)
	must(t, ns.SetNamespaceMessageTTL("public/dlq", 1))
	if ttl, err = ns.GetNamespaceMessageTTL("public/dlq"); err != nil || ttl != 1 {
		t.Errorf("TTL = %d, %v; want 1", ttl, err)
	}
	pol, err := ns.GetPolicies("public/dlq")
	must(t, err)
	if pol.MessageTTLInSeconds == nil || *pol.MessageTTLInSeconds != 1 {
		t.Errorf("policies' message_ttl_in_seconds = %v", pol.MessageTTLInSeconds)
	}

	// A DLQ-like topic whose subscription never reads, and a partitioned one.
	tn := *topicName(t, "persistent://public/dlq/orders-DLQ")
	must(t, e.adm.Topics().Create(tn, 0))
	must(t, e.adm.Subscriptions().Create(tn, "audit", utils.Earliest))
	pn := *topicName(t, "persistent://public/dlq/parts")
	must(t, e.adm.Topics().Create(pn, 2))
	must(t, e.adm.Subscriptions().Create(pn, "audit", utils.Earliest))
	c := e.client(t)
	produce(t, c, tn.String(), 5)
	produce(t, c, pn.String(), 6)
	// The sampler behind the rates starts with the first stats request: ask before expiry,
	// which waits until the clock says that a second has passed.
	st, err := e.adm.Topics().GetStats(tn)
	must(t, err)
	if b := st.Subscriptions["audit"].MsgBacklog; b != 5 {
		t.Fatalf("backlog before expiry = %d, want 5", b)
	}
	ageMessages(clk)

	var sub utils.SubscriptionStats
	brokertest.WaitForNil(t, 10*time.Second, "the messages expire", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		sub = st.Subscriptions["audit"]
		if sub.MsgBacklog != 0 || sub.TotalMsgExpired != 5 {
			return fmt.Errorf("backlog %d, expired %d", sub.MsgBacklog, sub.TotalMsgExpired)
		}
		return nil
	})
	if sub.LastExpireTimestamp == 0 {
		t.Errorf("lastExpireTimestamp unset after expiry")
	}
	// The rates are the sampler's, over the machine's time: the expiry shows once a tenth of a
	// second has passed since the first sample.
	brokertest.WaitForNil(t, 10*time.Second, "the expiry shows in the rate", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if r := st.Subscriptions["audit"].MsgRateExpired; r <= 0 {
			return fmt.Errorf("msgRateExpired %v", r)
		}
		return nil
	})
	brokertest.WaitForNil(t, 10*time.Second, "the partitions' messages expire", func() error {
		ps, err := e.adm.Topics().GetPartitionedStats(pn, false)
		if err != nil {
			return err
		}
		if s := ps.Subscriptions["audit"]; s.MsgBacklog != 0 || s.TotalMsgExpired != 6 {
			return fmt.Errorf("backlog %d, expired %d", s.MsgBacklog, s.TotalMsgExpired)
		}
		return nil
	})

	// Without the policy, nothing expires any more, as a namespace that keeps its TTL shows.
	must(t, ns.CreateNamespace("public/control"))
	must(t, ns.SetNamespaceMessageTTL("public/control", 1))
	control := "persistent://public/control/t"
	must(t, e.adm.Topics().Create(*topicName(t, control), 0))
	must(t, e.adm.Subscriptions().Create(*topicName(t, control), "s", utils.Earliest))
	must(t, ns.RemoveNamespaceMessageTTL("public/dlq"))
	if ttl, err = ns.GetNamespaceMessageTTL("public/dlq"); err != nil || ttl != -1 {
		t.Errorf("TTL after removal = %d, %v; want -1", ttl, err)
	}
	produce(t, c, tn.String(), 2)
	expiryPassed(t, e, clk, c, control, "s")
	st, err = e.adm.Topics().GetStats(tn)
	must(t, err)
	if s := st.Subscriptions["audit"]; s.MsgBacklog != 2 || s.TotalMsgExpired != 5 {
		t.Errorf("after removing the TTL: backlog %d, expired %d; want 2 and still 5", s.MsgBacklog, s.TotalMsgExpired)
	}
}

// The broker's ttlDurationDefaultInSeconds applies where a namespace has no policy, and a
// namespace's policy of 0 turns expiry off there.
func TestBrokerDefaultMessageTTL(t *testing.T) {
	t.Parallel()
	clk := brokertest.NewClock(time.Now())
	e := newEnv(t, expiryEvery(50*time.Millisecond), clk.Use, func(c *broker.Config) { c.TTLDurationDefault = time.Second })
	ns := e.adm.Namespaces()
	must(t, ns.CreateNamespace("public/keep"))
	must(t, ns.SetNamespaceMessageTTL("public/keep", 0))
	c := e.client(t)
	backlog := func(topic string) (int64, error) {
		st, err := e.adm.Topics().GetStats(*topicName(t, topic))
		if err != nil {
			return 0, err
		}
		return st.Subscriptions["s"].MsgBacklog, nil
	}
	for _, topic := range []string{"persistent://public/default/t", "persistent://public/keep/t"} {
		cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", ReceiverQueueSize: 1})
		must(t, err)
		cons.Close() // the subscription stays, with nobody reading
		produce(t, c, topic, 3)
	}
	ageMessages(clk)
	brokertest.WaitForNil(t, 10*time.Second, "the default namespace's messages expire", func() error {
		if b, err := backlog("persistent://public/default/t"); err != nil || b != 0 {
			return fmt.Errorf("backlog %d, %v", b, err)
		}
		return nil
	})
	expiryPassed(t, e, clk, c, "persistent://public/default/t", "s")
	if b, err := backlog("persistent://public/keep/t"); err != nil || b != 3 {
		t.Errorf("namespace with TTL 0: backlog %d, %v; want 3", b, err)
	}
}
