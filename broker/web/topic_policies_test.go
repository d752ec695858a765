package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Topic-level policies, on as upstream has them by default: set, read (own and applied) and
// removed through pulsaradmin, validated with upstream's reasons, and overriding the
// namespace's.
func TestTopicLevelPolicies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := *topicName(t, "persistent://public/default/policies")
	must(t, e.adm.Topics().Create(tn, 0))
	topics := e.adm.Topics()
	tp, err := admin.TopicPoliciesOf(e.adm, false)
	must(t, err)
	ctx := context.Background()

	if ttl, err := topics.GetMessageTTL(tn); err != nil || ttl != -1 {
		t.Errorf("message TTL unset = %d, %v; want -1", ttl, err)
	}
	must(t, topics.SetMessageTTL(tn, 600))
	if ttl, err := topics.GetMessageTTL(tn); err != nil || ttl != 600 {
		t.Errorf("message TTL = %d, %v", ttl, err)
	}
	wantReason(t, "negative TTL", topics.SetMessageTTL(tn, -1), 412, "Invalid value for message TTL")
	must(t, topics.RemoveMessageTTL(tn))
	if ttl, err := topics.GetMessageTTL(tn); err != nil || ttl != -1 {
		t.Errorf("message TTL removed = %d, %v; want -1", ttl, err)
	}

	// Applied values fall back to the namespace's policy.
	must(t, e.adm.Namespaces().SetNamespaceMessageTTL("public/default", 120))
	if ttl, err := tp.GetMessageTTL(ctx, tn, true); err != nil || ttl == nil || *ttl != 120 {
		t.Errorf("applied TTL = %v, %v; want the namespace's 120", ttl, err)
	}
	if ttl, err := tp.GetMessageTTL(ctx, tn, false); err != nil || ttl != nil {
		t.Errorf("own TTL = %v, %v; want unset", ttl, err)
	}
	must(t, topics.SetMessageTTL(tn, 30))
	if ttl, err := tp.GetMessageTTL(ctx, tn, true); err != nil || ttl == nil || *ttl != 30 {
		t.Errorf("applied TTL = %v, %v; want the topic's 30", ttl, err)
	}

	must(t, topics.SetRetention(tn, utils.RetentionPolicies{RetentionTimeInMinutes: 60, RetentionSizeInMB: 10}))
	if r, err := topics.GetRetention(tn, false); err != nil || r == nil || r.RetentionTimeInMinutes != 60 || r.RetentionSizeInMB != 10 {
		t.Errorf("retention = %+v, %v", r, err)
	}
	must(t, topics.RemoveRetention(tn))
	if r, err := topics.GetRetention(tn, false); err != nil || r != nil {
		t.Errorf("retention removed = %+v, %v; want nil", r, err)
	}

	wantReason(t, "negative max producers", topics.SetMaxProducers(tn, -1), 412, "maxProducers must be 0 or more")
	wantReason(t, "negative max consumers", topics.SetMaxConsumers(tn, -1), 412, "maxConsumers must be 0 or more")
	must(t, topics.SetMaxConsumersPerSubscription(tn, 3))
	if n, err := topics.GetMaxConsumersPerSubscription(tn); err != nil || n != 3 {
		t.Errorf("max consumers per subscription = %d, %v", n, err)
	}
	must(t, topics.SetMaxSubscriptionsPerTopic(tn, 4))
	if n, err := topics.GetMaxSubscriptionsPerTopic(tn); err != nil || n != 4 {
		t.Errorf("max subscriptions = %d, %v", n, err)
	}
	must(t, topics.SetCompactionThreshold(tn, 1<<20))
	if n, err := topics.GetCompactionThreshold(tn, false); err != nil || n != 1<<20 {
		t.Errorf("compaction threshold = %d, %v", n, err)
	}
	must(t, topics.SetDeduplicationStatus(tn, true))
	if on, err := topics.GetDeduplicationStatus(tn); err != nil || !on {
		t.Errorf("deduplication = %v, %v", on, err)
	}
	must(t, topics.SetBacklogQuota(tn, utils.NewBacklogQuota(1<<20, -1, utils.ProducerRequestHold), utils.DestinationStorage))
	quotas, err := topics.GetBacklogQuotaMap(tn, false)
	must(t, err)
	if q := quotas[utils.DestinationStorage]; q.LimitSize != 1<<20 || q.Policy != utils.ProducerRequestHold {
		t.Errorf("backlog quotas = %+v", quotas)
	}

	// The policies survive as the topic does, and go with it.
	missing := *topicName(t, "persistent://public/default/never-created")
	wantStatus(t, "a policy of a missing topic", topics.SetMaxProducers(missing, 1), 404)
	must(t, topics.Delete(tn, true, true))
	must(t, topics.Create(tn, 0))
	if n, err := topics.GetMaxSubscriptionsPerTopic(tn); err != nil || n != -1 {
		t.Errorf("max subscriptions of the re-created topic = %d, %v; want unset", n, err)
	}

	// Policies this broker does not keep are refused with a reason, not stored.
	_, err = topics.GetPersistence(tn)
	if re, ok := err.(rest.Error); !ok || re.Code != 405 || !strings.Contains(re.Reason, "BookKeeper") {
		t.Errorf("persistence: %v, want 405", err)
	}
}

// Topic-level policies are enforced, over the namespace's: producers, consumers and
// subscriptions limits, deduplication, and a backlog quota.
func TestTopicLevelPoliciesEnforced(t *testing.T) {
	t.Parallel()
	e := newEnv(t, quotaEvery(50*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := e.adm.Namespaces()
	must(t, ns.CreateNamespace("public/tp"))
	nsn := *mustNS(t, "public/tp")
	const topic = "persistent://public/tp/t"
	tn := *topicName(t, topic)
	must(t, e.adm.Topics().Create(tn, 0))
	c := e.client(t)

	// The namespace allows 5 producers; the topic 1.
	must(t, ns.SetMaxProducersPerTopic(nsn, 5))
	must(t, e.adm.Topics().SetMaxProducers(tn, 1))
	p1, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p1.Close()
	if p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil {
		p2.Close()
		t.Error("a second producer beyond the topic's max producers was accepted")
	}
	must(t, e.adm.Topics().RemoveMaxProducers(tn))
	p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatalf("a second producer under the namespace's limit: %v", err)
	}
	p2.Close()

	must(t, e.adm.Topics().SetMaxSubscriptionsPerTopic(tn, 1))
	c1, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "only"})
	must(t, err)
	defer c1.Close()
	if c2, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "another"}); err == nil {
		c2.Close()
		t.Error("a subscription beyond the topic's max subscriptions was accepted")
	}
	must(t, e.adm.Topics().SetMaxConsumers(tn, 1))
	if c3, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "only", Type: pulsar.Shared}); err == nil {
		c3.Close()
		t.Error("a consumer beyond the topic's max consumers was accepted")
	}

	// Deduplication on the topic only: a resent sequence id is stored once.
	must(t, e.adm.Topics().SetDeduplicationStatus(tn, true))
	dp, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Name: "dedup", DisableBatching: true})
	must(t, err)
	for _, m := range []struct {
		seq     int64
		payload string
	}{{1, "a"}, {1, "a again"}, {2, "b"}} {
		seq := m.seq
		_, err := dp.Send(ctx, &pulsar.ProducerMessage{Payload: []byte(m.payload), SequenceID: &seq})
		must(t, err)
	}
	dp.Close()
	for _, want := range []string{"a", "b"} {
		msg, err := c1.Receive(ctx)
		must(t, err)
		c1.Ack(msg)
		if string(msg.Payload()) != want {
			t.Errorf("received %q, want %q (the resent sequence id stored once)", msg.Payload(), want)
		}
	}

	// A backlog quota on the topic refuses producers while "only" lags behind. The backlog is
	// stored before the quota is set: with the quota in place, the broker's check (every 50 ms)
	// may disconnect p1 between two of these sends.
	payload := make([]byte, 1024)
	for range 4 {
		_, err := p1.Send(ctx, &pulsar.ProducerMessage{Payload: payload})
		must(t, err)
	}
	must(t, e.adm.Topics().SetBacklogQuota(tn, utils.NewBacklogQuota(2048, -1, utils.ProducerException), utils.DestinationStorage))
	brokertest.WaitForNil(t, 10*time.Second, "a producer is refused over the topic's backlog quota", func() error {
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
		if err == nil {
			p.Close()
			return fmt.Errorf("accepted")
		}
		return nil
	})
	must(t, e.adm.Topics().RemoveBacklogQuota(tn, utils.DestinationStorage))
	p3, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatalf("producer once the topic's quota is removed: %v", err)
	}
	p3.Close()
}

// The message TTL set on a topic expires its messages where its namespace has none, once the
// broker's clock says they are older than that.
func TestTopicLevelMessageTTLExpires(t *testing.T) {
	t.Parallel()
	clk := brokertest.NewClock(time.Now())
	e := newEnv(t, expiryEvery(50*time.Millisecond), clk.Use)
	tn := *topicName(t, "persistent://public/default/ttl-topic")
	must(t, e.adm.Topics().Create(tn, 0))
	must(t, e.adm.Subscriptions().Create(tn, "audit", utils.Earliest))
	must(t, e.adm.Topics().SetMessageTTL(tn, 1))
	produce(t, e.client(t), tn.String(), 3)
	ageMessages(clk)
	brokertest.WaitForNil(t, 10*time.Second, "the topic's messages expire", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if s := st.Subscriptions["audit"]; s.MsgBacklog != 0 || s.TotalMsgExpired != 3 {
			return fmt.Errorf("backlog %d, expired %d", s.MsgBacklog, s.TotalMsgExpired)
		}
		return nil
	})
}

// The topic-level autoSubscriptionCreation and schemaCompatibilityStrategy override the
// namespace's, on the official client's consumers and producers.
func TestTopicLevelSubscriptionCreationAndSchemaStrategy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.adm.Namespaces()
	must(t, ns.CreateNamespace("public/tps"))
	nsn := *mustNS(t, "public/tps")
	const topic = "persistent://public/tps/t"
	tn := *topicName(t, topic)
	must(t, e.adm.Topics().Create(tn, 0))
	c := e.client(t)

	// The namespace allows automatic subscription creation (the broker's default); the topic not.
	must(t, e.adm.Topics().SetAutoSubscriptionCreation(tn, utils.AutoSubscriptionCreationOverride{AllowAutoSubscriptionCreation: false}))
	if cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "new"}); err == nil {
		cons.Close()
		t.Error("a subscription was auto-created against the topic's policy")
	}
	must(t, e.adm.Topics().RemoveAutoSubscriptionCreation(tn))
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "new"})
	if err != nil {
		t.Fatalf("subscribe once the topic's policy is removed: %v", err)
	}
	cons.Close()

	// Schemas: the namespace accepts anything, the topic nothing new.
	must(t, ns.SetSchemaCompatibilityStrategy(nsn, utils.SchemaCompatibilityStrategyAlwaysCompatible))
	must(t, e.adm.Topics().SetSchemaCompatibilityStrategy(tn, utils.SchemaCompatibilityStrategyAlwaysIncompatible))
	if s, err := e.adm.Topics().GetSchemaCompatibilityStrategy(tn); err != nil || s != utils.SchemaCompatibilityStrategyAlwaysIncompatible {
		t.Errorf("applied strategy = %v, %v", s, err)
	}
	schema := func(field string) pulsar.Schema {
		return pulsar.NewJSONSchema(`{"type":"record","name":"E","fields":[{"name":"`+field+`","type":"int"}]}`, nil)
	}
	p1, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Schema: schema("a")})
	must(t, err)
	p1.Close()
	if p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Schema: schema("b")}); err == nil {
		p2.Close()
		t.Error("a new schema was accepted under the topic's ALWAYS_INCOMPATIBLE")
	}
	must(t, e.adm.Topics().RemoveSchemaCompatibilityStrategy(tn))
	p3, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Schema: schema("b")})
	if err != nil {
		t.Fatalf("a new schema under the namespace's ALWAYS_COMPATIBLE: %v", err)
	}
	p3.Close()
}

// A topic's stats say the deduplication in effect, as upstream's deduplicationStatus does:
// the topic's policy, else its namespace's, else the broker's brokerDeduplicationEnabled.
// letterbox's replay reads it to know whether a replay is exactly once.
func TestDeduplicationStatusInEffect(t *testing.T) {
	t.Parallel()
	status := func(e *env, topic string) string {
		t.Helper()
		tn, err := utils.GetTopicName(topic)
		must(t, err)
		must(t, e.adm.Topics().Create(*tn, 0))
		st, err := e.adm.Topics().GetStats(*tn)
		must(t, err)
		return st.DeDuplicationStatus
	}
	on := newEnv(t, func(c *broker.Config) { c.BrokerDeduplicationEnabled = true })
	if got := status(on, "persistent://public/default/everywhere"); got != "Enabled" {
		t.Errorf("on a broker that deduplicates everywhere: %q, want Enabled", got)
	}
	must(t, on.adm.Namespaces().CreateNamespace("public/nodedup"))
	must(t, on.adm.Namespaces().SetDeduplicationStatus("public/nodedup", false))
	if got := status(on, "persistent://public/nodedup/off"); got != "Disabled" {
		t.Errorf("in a namespace that turns it off: %q, want Disabled", got)
	}

	off := newEnv(t)
	if got := status(off, "persistent://public/default/plain"); got != "Disabled" {
		t.Errorf("on a broker that does not deduplicate: %q, want Disabled", got)
	}
	tn, err := utils.GetTopicName("persistent://public/default/own")
	must(t, err)
	must(t, off.adm.Topics().Create(*tn, 0))
	must(t, off.adm.Topics().SetDeduplicationStatus(*tn, true))
	st, err := off.adm.Topics().GetStats(*tn)
	must(t, err)
	if st.DeDuplicationStatus != "Enabled" {
		t.Errorf("a topic whose own policy turns it on: %q, want Enabled", st.DeDuplicationStatus)
	}
}
