package web_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// The namespace policies that limit topics, through pulsaradmin: stored, validated with
// upstream's reasons, and enforced on the official client's producers and consumers.
func TestNamespaceLimitPolicies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.adm.Namespaces()
	must(t, ns.CreateNamespace("public/limits"))
	nsn := *mustNS(t, "public/limits")

	// Unset: the getters' sentinels (upstream answers no content).
	if v, err := ns.GetMaxProducersPerTopic(nsn); err != nil || v != -1 {
		t.Errorf("max producers unset = %d, %v; want -1", v, err)
	}
	if v, err := ns.GetCompactionThreshold(nsn); err != nil || v != -1 {
		t.Errorf("compaction threshold unset = %d, %v; want -1", v, err)
	}
	for _, tc := range []struct {
		what   string
		err    error
		reason string
	}{
		{"max topics", ns.SetMaxTopicsPerNamespace(nsn, -1), "maxTopicsPerNamespace must be 0 or more"},
		{"subscription expiration", ns.SetSubscriptionExpirationTime(nsn, -60), "Invalid value for subscription expiration time"},
		{"max consumers per subscription", ns.SetMaxConsumersPerSubscription(nsn, -1), "maxConsumersPerSubscription must be 0 or more"},
		{"max consumers per topic", ns.SetMaxConsumersPerTopic(nsn, -1), "maxConsumersPerTopic must be 0 or more"},
		{"max producers per topic", ns.SetMaxProducersPerTopic(nsn, -1), "maxProducersPerTopic must be 0 or more"},
		{"compaction threshold", ns.SetCompactionThreshold(nsn, -1), "compactionThreshold must be 0 or more"},
	} {
		wantReason(t, "negative "+tc.what, tc.err, 412, tc.reason)
	}
	must(t, ns.SetCompactionThreshold(nsn, 1<<20))
	if v, err := ns.GetCompactionThreshold(nsn); err != nil || v != 1<<20 {
		t.Errorf("compaction threshold = %d, %v", v, err)
	}
	if v, err := e.b.CompactionThreshold("persistent://public/limits/any"); err != nil || v != 1<<20 {
		t.Errorf("effective compaction threshold = %d, %v; want the namespace's", v, err)
	}
	must(t, ns.SetSubscriptionExpirationTime(nsn, 30))
	if v, err := ns.GetSubscriptionExpirationTime(nsn); err != nil || v != 30 {
		t.Errorf("subscription expiration = %d, %v", v, err)
	}
	must(t, ns.RemoveSubscriptionExpirationTime(nsn))

	// Properties: merged, listed, removed.
	must(t, ns.UpdateProperties(nsn, map[string]string{"team": "billing"}))
	must(t, ns.UpdateProperties(nsn, map[string]string{"tier": "gold"}))
	props, err := ns.GetProperties(nsn)
	must(t, err)
	if !maps.Equal(props, map[string]string{"team": "billing", "tier": "gold"}) {
		t.Errorf("properties = %v", props)
	}
	// One property, as upstream's Java admin reads it: the body is the value, bare.
	prop := e.s.URL() + "/admin/v2/namespaces/" + nsn.String() + "/property/"
	if resp, body := do(t, "GET", prop+"team"); resp.StatusCode != 200 || body != "billing" {
		t.Errorf("GET property team = %d %q; want 200 and the bare value billing", resp.StatusCode, body)
	}
	if resp, body := do(t, "GET", prop+"absent"); resp.StatusCode != 204 || body != "" {
		t.Errorf("GET property absent = %d %q; want 204", resp.StatusCode, body)
	}
	if resp, body := do(t, "DELETE", prop+"tier"); resp.StatusCode != 200 || body != "gold" {
		t.Errorf("DELETE property tier = %d %q; want 200 and the value it had, bare", resp.StatusCode, body)
	}
	must(t, ns.RemoveProperties(nsn))
	if props, err = ns.GetProperties(nsn); err != nil || len(props) != 0 {
		t.Errorf("properties after removal = %v, %v", props, err)
	}

	// Subscription permissions.
	must(t, ns.GrantSubPermission(nsn, "audit", []string{"alice", "bob"}))
	perms, err := ns.GetSubPermissions(nsn)
	must(t, err)
	if got := perms["audit"]; len(got) != 2 {
		t.Errorf("subscription permissions = %v", perms)
	}
	must(t, ns.RevokeSubPermission(nsn, "audit", "alice"))
	if perms, err = ns.GetSubPermissions(nsn); err != nil || len(perms["audit"]) != 1 || perms["audit"][0] != "bob" {
		t.Errorf("after revoking alice: %v, %v", perms, err)
	}

	// Enforcement, with the official client.
	c := e.client(t)
	must(t, ns.SetMaxProducersPerTopic(nsn, 1))
	must(t, ns.SetMaxConsumersPerSubscription(nsn, 1))
	must(t, ns.SetMaxTopicsPerNamespace(nsn, 2))
	const topic = "persistent://public/limits/t"
	p1, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	must(t, err)
	defer p1.Close()
	if p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, SendTimeout: time.Second}); err == nil {
		p2.Close()
		t.Error("a second producer beyond max_producers_per_topic=1 was accepted")
	}
	c1, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Shared})
	must(t, err)
	defer c1.Close()
	if c2, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Shared}); err == nil {
		c2.Close()
		t.Error("a second consumer beyond max_consumers_per_subscription=1 was accepted")
	}
	must(t, ns.SetMaxConsumersPerTopic(nsn, 1))
	if c3, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "other"}); err == nil {
		c3.Close()
		t.Error("a consumer beyond max_consumers_per_topic=1 was accepted")
	}
	// Topics: t exists; one more fits, a third does not (admin or producer).
	must(t, e.adm.Topics().Create(*topicName(t, "persistent://public/limits/u"), 0))
	wantReason(t, "a topic beyond max_topics_per_namespace", e.adm.Topics().Create(*topicName(t, "persistent://public/limits/v"), 0),
		412, "Exceed maximum number of topics in namespace.")
	if p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: "persistent://public/limits/w"}); err == nil {
		p.Close()
		t.Error("auto-creating a topic beyond max_topics_per_namespace was accepted")
	}

	// Removed: the broker's (no limits) again.
	must(t, ns.RemoveMaxProducersPerTopic(nsn))
	p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatalf("a second producer once the limit is removed: %v", err)
	}
	p2.Close()
	must(t, ns.RemoveMaxTopicsPerNamespace(nsn))
	must(t, e.adm.Topics().Create(*topicName(t, "persistent://public/limits/v"), 0))
}

func quotaEvery(d time.Duration) broker.Option {
	return func(c *broker.Config) { c.BacklogQuotaCheckInterval = d }
}

// A namespace backlog quota, as upstream: producer_exception refuses producers (and
// disconnects those connected) while a subscription's backlog is over the limit;
// consumer_backlog_eviction drops the oldest backlog instead.
func TestNamespaceBacklogQuota(t *testing.T) {
	t.Parallel()
	e := newEnv(t, quotaEvery(50*time.Millisecond))
	ns := e.adm.Namespaces()
	must(t, ns.CreateNamespace("public/quota"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Validation: a quota beyond the namespace's retention is refused, as upstream.
	must(t, ns.SetRetention("public/quota", utils.RetentionPolicies{RetentionSizeInMB: 1, RetentionTimeInMinutes: 10}))
	wantReason(t, "quota beyond retention",
		ns.SetBacklogQuota("public/quota", utils.NewBacklogQuota(2<<20, -1, utils.ProducerException), utils.DestinationStorage), 412,
		"Backlog Quota exceeds configured retention quota for namespace. Please increase retention quota and retry")
	must(t, ns.RemoveRetention("public/quota"))

	const topic = "persistent://public/quota/held"
	tn := *topicName(t, topic)
	must(t, e.adm.Topics().Create(tn, 0))
	must(t, e.adm.Subscriptions().Create(tn, "slow", utils.Earliest))
	c := e.client(t)
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p.Close()
	// 8 KiB of backlog, stored before the 4 KiB quota is set: with the quota in place, the
	// broker's check (every 50 ms) may disconnect the producer between two of these sends.
	payload := make([]byte, 1024)
	for range 8 {
		_, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: payload})
		must(t, err)
	}

	must(t, ns.SetBacklogQuota("public/quota", utils.NewBacklogQuota(4096, -1, utils.ProducerException), utils.DestinationStorage))
	quotas, err := ns.GetBacklogQuotaMap("public/quota")
	must(t, err)
	if q := quotas[utils.DestinationStorage]; q.LimitSize != 4096 || q.Policy != utils.ProducerException {
		t.Errorf("backlog quota map = %+v", quotas)
	}
	brokertest.WaitForNil(t, 10*time.Second, "a new producer is refused over the quota", func() error {
		p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
		if err == nil {
			p2.Close()
			return fmt.Errorf("accepted")
		}
		if !strings.Contains(err.Error(), "ProducerBlockedQuotaExceededException") && !strings.Contains(err.Error(), "quota") {
			return fmt.Errorf("refused with %v, want the backlog quota", err)
		}
		return nil
	})
	// The connected producer was disconnected and cannot come back: its sends fail.
	brokertest.WaitForNil(t, 10*time.Second, "the connected producer is held back", func() error {
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
		defer scancel()
		if _, err := p.Send(sctx, &pulsar.ProducerMessage{Payload: payload}); err == nil {
			return fmt.Errorf("a send over the quota succeeded")
		}
		return nil
	})

	// Eviction: the slowest subscription's oldest messages are dropped down to the quota.
	must(t, ns.SetBacklogQuota("public/quota", utils.NewBacklogQuota(4096, -1, utils.ConsumerBacklogEviction), utils.DestinationStorage))
	brokertest.WaitForNil(t, 10*time.Second, "the backlog is evicted down to the quota", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if b := st.Subscriptions["slow"].MsgBacklog; b == 0 || b > 4 {
			return fmt.Errorf("backlog %d entries of 1 KiB, want 1 to 4", b)
		}
		return nil
	})
	// And producers are accepted again.
	p3, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatalf("producer under consumer_backlog_eviction: %v", err)
	}
	p3.Close()
	must(t, ns.RemoveBacklogQuota("public/quota"))
	if quotas, err = ns.GetBacklogQuotaMap("public/quota"); err != nil || len(quotas) != 0 {
		t.Errorf("quotas after removal = %v, %v", quotas, err)
	}
}
