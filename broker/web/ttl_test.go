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
// instead of upstream's five minutes).

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

func TestPulsarAdminMessageTTL(t *testing.T) {
	t.Parallel()
	e := newEnv(t, expiryEvery(50*time.Millisecond))
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
	// The sampler behind the rates starts with the first stats request: ask before expiry.
	st, err := e.adm.Topics().GetStats(tn)
	must(t, err)
	if b := st.Subscriptions["audit"].MsgBacklog; b > 5 {
		t.Fatalf("backlog before expiry = %d", b)
	}

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
	if sub.LastExpireTimestamp == 0 || sub.MsgRateExpired <= 0 {
		t.Errorf("lastExpireTimestamp %d, msgRateExpired %v: want both set", sub.LastExpireTimestamp, sub.MsgRateExpired)
	}
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

	// Without the policy, nothing expires any more.
	must(t, ns.RemoveNamespaceMessageTTL("public/dlq"))
	if ttl, err = ns.GetNamespaceMessageTTL("public/dlq"); err != nil || ttl != -1 {
		t.Errorf("TTL after removal = %d, %v; want -1", ttl, err)
	}
	produce(t, c, tn.String(), 2)
	time.Sleep(1500 * time.Millisecond) // past the old TTL, several checks
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
	e := newEnv(t, expiryEvery(50*time.Millisecond), func(c *broker.Config) { c.TTLDurationDefault = time.Second })
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
	brokertest.WaitForNil(t, 10*time.Second, "the default namespace's messages expire", func() error {
		if b, err := backlog("persistent://public/default/t"); err != nil || b != 0 {
			return fmt.Errorf("backlog %d, %v", b, err)
		}
		return nil
	})
	if b, err := backlog("persistent://public/keep/t"); err != nil || b != 3 {
		t.Errorf("namespace with TTL 0: backlog %d, %v; want 3", b, err)
	}
}
