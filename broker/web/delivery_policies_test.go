package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/letterbox-dev/letterbox/broker"
)

// The delivery policies of a topic through pulsaradmin's topic policies: unset (nothing of its
// own), applied from the namespace's entry for this cluster, else the broker's, set on the topic
// over both, and removed.
func TestTopicDeliveryPolicies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *broker.Config) {
		c.MaxPublishRatePerTopicInMessages = 1000
		c.MaxUnackedMessagesPerConsumer = 500
	})
	ctx := context.Background()
	nsn := *mustNS(t, "public/default")
	tn := *topicName(t, "persistent://public/default/delivery")
	must(t, e.adm.Topics().Create(tn, 0))
	tp, err := admin.TopicPoliciesOf(e.adm, false)
	must(t, err)
	ns := e.adm.Namespaces()

	// Publish rate: broker, namespace, topic, removed.
	if r, err := tp.GetPublishRate(ctx, tn, false); err != nil || r != nil {
		t.Errorf("own publish rate unset = %+v, %v; want none", r, err)
	}
	if r, err := tp.GetPublishRate(ctx, tn, true); err != nil || r == nil || r.PublishThrottlingRateInMsg != 1000 {
		t.Errorf("applied publish rate = %+v, %v; want the broker's 1000 msg/s", r, err)
	}
	must(t, ns.SetPublishRate(nsn, utils.PublishRate{PublishThrottlingRateInMsg: 200, PublishThrottlingRateInByte: -1}))
	if r, err := ns.GetPublishRate(nsn); err != nil || r.PublishThrottlingRateInMsg != 200 {
		t.Errorf("namespace publish rate = %+v, %v", r, err)
	}
	if r, err := tp.GetPublishRate(ctx, tn, true); err != nil || r == nil || r.PublishThrottlingRateInMsg != 200 {
		t.Errorf("applied publish rate = %+v, %v; want the namespace's 200", r, err)
	}
	must(t, tp.SetPublishRate(ctx, tn, utils.PublishRateData{PublishThrottlingRateInMsg: 50, PublishThrottlingRateInByte: 4096}))
	if r, err := tp.GetPublishRate(ctx, tn, true); err != nil || r == nil || *r != (utils.PublishRateData{PublishThrottlingRateInMsg: 50, PublishThrottlingRateInByte: 4096}) {
		t.Errorf("applied publish rate = %+v, %v; want the topic's", r, err)
	}
	must(t, tp.RemovePublishRate(ctx, tn))
	if r, err := tp.GetPublishRate(ctx, tn, false); err != nil || r != nil {
		t.Errorf("own publish rate removed = %+v, %v; want none", r, err)
	}

	// Dispatch rates, of the topic and of each subscription, and the subscribe rate.
	must(t, ns.SetDispatchRate(nsn, utils.DispatchRate{DispatchThrottlingRateInMsg: 300, DispatchThrottlingRateInByte: -1, RatePeriodInSecond: 1}))
	if r, err := tp.GetDispatchRate(ctx, tn, true); err != nil || r == nil || r.DispatchThrottlingRateInMsg != 300 {
		t.Errorf("applied dispatch rate = %+v, %v; want the namespace's 300", r, err)
	}
	sub := utils.DispatchRateData{DispatchThrottlingRateInMsg: 10, DispatchThrottlingRateInByte: -1, RatePeriodInSecond: 2}
	must(t, tp.SetSubscriptionDispatchRate(ctx, tn, sub))
	if r, err := tp.GetSubscriptionDispatchRate(ctx, tn, false); err != nil || r == nil || *r != sub {
		t.Errorf("subscription dispatch rate = %+v, %v; want %+v", r, err, sub)
	}
	must(t, ns.SetSubscribeRate(nsn, utils.SubscribeRate{SubscribeThrottlingRatePerConsumer: 4, RatePeriodInSecond: 30}))
	if r, err := tp.GetSubscribeRate(ctx, tn, true); err != nil || r == nil || r.SubscribeThrottlingRatePerConsumer != 4 {
		t.Errorf("applied subscribe rate = %+v, %v; want the namespace's", r, err)
	}

	// Unacknowledged message limits.
	if n, err := tp.GetMaxUnackMessagesPerConsumer(ctx, tn, true); err != nil || n == nil || *n != 500 {
		t.Errorf("applied max unacked per consumer = %v, %v; want the broker's 500", n, err)
	}
	must(t, tp.SetMaxUnackMessagesPerSubscription(ctx, tn, 42))
	if n, err := tp.GetMaxUnackMessagesPerSubscription(ctx, tn, false); err != nil || n == nil || *n != 42 {
		t.Errorf("max unacked per subscription = %v, %v", n, err)
	}
	wantReason(t, "negative max unacked", tp.SetMaxUnackMessagesPerConsumer(ctx, tn, -1), 412, "maxUnackedNum must be 0 or more")

	// Max message size: a topic policy only, never above the broker's.
	if n, err := tp.GetMaxMessageSize(ctx, tn, true); err != nil || n == nil || *n != e.b.Config().MaxMessageSize {
		t.Errorf("applied max message size = %v, %v; want the broker's", n, err)
	}
	must(t, tp.SetMaxMessageSize(ctx, tn, 1024))
	if n, err := tp.GetMaxMessageSize(ctx, tn, false); err != nil || n == nil || *n != 1024 {
		t.Errorf("max message size = %v, %v", n, err)
	}
	wantReason(t, "max message size over the broker's", tp.SetMaxMessageSize(ctx, tn, e.b.Config().MaxMessageSize+1), 412,
		"topic-level maxMessageSize must be greater than or equal to 0 and must be smaller than that in the broker-level")

	// Delayed delivery: the topic's tick over the broker's.
	must(t, tp.SetDelayedDelivery(ctx, tn, utils.DelayedDeliveryData{Active: false, TickTime: 250}))
	if d, err := tp.GetDelayedDelivery(ctx, tn, false); err != nil || d == nil || d.Active || d.TickTime != 250 {
		t.Errorf("delayed delivery = %+v, %v", d, err)
	}
	must(t, tp.RemoveDelayedDelivery(ctx, tn))
	if d, err := tp.GetDelayedDelivery(ctx, tn, true); err != nil || d == nil || !d.Active || d.TickTime != 1000 {
		t.Errorf("applied delayed delivery = %+v, %v; want the broker's (on, 1000 ms)", d, err)
	}

	// Deduplication snapshot interval, inactive topic policies, schema validation.
	if n, err := tp.GetDeduplicationSnapshotInterval(ctx, tn, true); err != nil || n == nil || *n != 120 {
		t.Errorf("applied deduplication snapshot interval = %v, %v; want the broker's 120", n, err)
	}
	must(t, tp.SetDeduplicationSnapshotInterval(ctx, tn, 5))
	if n, err := tp.GetDeduplicationSnapshotInterval(ctx, tn, false); err != nil || n == nil || *n != 5 {
		t.Errorf("deduplication snapshot interval = %v, %v", n, err)
	}
	mode := utils.DeleteWhenSubscriptionsCaughtUp
	must(t, tp.SetInactiveTopicPolicies(ctx, tn, utils.NewInactiveTopicPolicies(&mode, 600, true)))
	if p, err := tp.GetInactiveTopicPolicies(ctx, tn, false); err != nil || p == nil || p.InactiveTopicDeleteMode == nil ||
		*p.InactiveTopicDeleteMode != mode || p.MaxInactiveDurationSeconds != 600 || !p.DeleteWhileInactive {
		t.Errorf("inactive topic policies = %+v, %v", p, err)
	}
	if on, err := tp.GetSchemaValidationEnforced(ctx, tn, false); err != nil || on == nil || *on {
		t.Errorf("schema validation unset = %v, %v; want false", on, err)
	}
	must(t, ns.SetSchemaValidationEnforced(nsn, true))
	if on, err := tp.GetSchemaValidationEnforced(ctx, tn, true); err != nil || on == nil || !*on {
		t.Errorf("applied schema validation = %v, %v; want the namespace's true", on, err)
	}

	// Replication: this cluster only.
	cluster := e.b.Config().ClusterName
	must(t, tp.SetReplicationClusters(ctx, tn, []string{cluster}))
	if c, err := tp.GetReplicationClusters(ctx, tn, false); err != nil || !slices.Equal(c, []string{cluster}) {
		t.Errorf("replication clusters = %v, %v", c, err)
	}
	wantReason(t, "an unknown cluster", tp.SetReplicationClusters(ctx, tn, []string{"elsewhere"}), 403, "Invalid cluster id: elsewhere")
}

// The namespace policies pulsaradmin sets beside the rates: stored, answered, and validated
// with upstream's reasons.
func TestNamespaceDeliveryPolicies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.adm.Namespaces()
	must(t, ns.CreateNamespace("public/delivery"))
	nsn := *mustNS(t, "public/delivery")

	mode := utils.DeleteWhenNoSubscriptions
	must(t, ns.SetInactiveTopicPolicies(nsn, utils.NewInactiveTopicPolicies(&mode, 120, true)))
	if p, err := ns.GetInactiveTopicPolicies(nsn); err != nil || p.MaxInactiveDurationSeconds != 120 || !p.DeleteWhileInactive {
		t.Errorf("inactive topic policies = %+v, %v", p, err)
	}
	must(t, ns.RemoveInactiveTopicPolicies(nsn))

	must(t, ns.SetSubscriptionAuthMode(nsn, utils.Prefix))
	p, err := e.b.NamespacePolicies("public/delivery")
	must(t, err)
	if p.SubscriptionAuthMode != "Prefix" {
		t.Errorf("subscription auth mode = %q, want Prefix", p.SubscriptionAuthMode)
	}
	must(t, ns.SetEncryptionRequiredStatus(nsn, true))
	must(t, ns.SetIsAllowAutoUpdateSchema(nsn, false))
	if on, err := ns.GetIsAllowAutoUpdateSchema(nsn); err != nil || on {
		t.Errorf("allow auto update schema = %v, %v; want false", on, err)
	}
	must(t, ns.SetSchemaAutoUpdateCompatibilityStrategy(nsn, utils.BackwardTransitive))
	if s, err := ns.GetSchemaAutoUpdateCompatibilityStrategy(nsn); err != nil || s != utils.BackwardTransitive {
		t.Errorf("schema auto update strategy = %v, %v", s, err)
	}
	p, err = e.b.NamespacePolicies("public/delivery")
	must(t, err)
	if !p.EncryptionRequired {
		t.Error("encryption required not stored")
	}

	must(t, ns.SetSubscriptionDispatchRate(nsn, utils.DispatchRate{DispatchThrottlingRateInMsg: 5, DispatchThrottlingRateInByte: -1, RatePeriodInSecond: 1}))
	if r, err := ns.GetSubscriptionDispatchRate(nsn); err != nil || r.DispatchThrottlingRateInMsg != 5 {
		t.Errorf("subscription dispatch rate = %+v, %v", r, err)
	}
	must(t, ns.SetNamespaceReplicationClusters("public/delivery", []string{e.b.Config().ClusterName}))
	if c, err := ns.GetNamespaceReplicationClusters("public/delivery"); err != nil || !slices.Equal(c, []string{e.b.Config().ClusterName}) {
		t.Errorf("replication clusters = %v, %v", c, err)
	}
	wantReason(t, "an unknown cluster", ns.SetNamespaceReplicationClusters("public/delivery", []string{"elsewhere"}), 403, "Invalid cluster id: elsewhere")
}

// One subscription's own dispatch rate (pulsar-admin topicPolicies set-subscription-dispatch-rate
// -s), over the topic's subscription dispatch rate; the subscription routes keep their paths.
func TestSubscriptionLevelDispatchRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := topicName(t, "persistent://public/default/sub-dispatch")
	must(t, e.adm.Topics().Create(*tn, 0))
	base := e.s.URL() + "/admin/v2/persistent/public/default/sub-dispatch"
	tp, err := admin.TopicPoliciesOf(e.adm, false)
	must(t, err)
	must(t, tp.SetSubscriptionDispatchRate(context.Background(), *tn, utils.DispatchRateData{DispatchThrottlingRateInMsg: 20,
		DispatchThrottlingRateInByte: -1, RatePeriodInSecond: 1}))

	if resp, _ := do(t, "GET", base+"/slow/dispatchRate"); resp.StatusCode != http.StatusNoContent {
		t.Errorf("unset: HTTP %d, want 204", resp.StatusCode)
	}
	wantRate := func(url string, want int) {
		t.Helper()
		resp, body := do(t, "GET", url)
		var rate utils.DispatchRateData
		if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &rate) != nil || rate.DispatchThrottlingRateInMsg != int64(want) {
			t.Errorf("GET %s: HTTP %d %s, want %d msg/s", url, resp.StatusCode, body, want)
		}
	}
	wantRate(base+"/slow/dispatchRate?applied=true", 20)
	resp, body := send(t, "POST", base+"/slow/dispatchRate", "application/json",
		[]byte(`{"dispatchThrottlingRateInMsg":"2","dispatchThrottlingRateInByte":-1,"ratePeriodInSecond":1}`))
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("set: HTTP %d %s", resp.StatusCode, body)
	}
	wantRate(base+"/slow/dispatchRate", 2)
	wantRate(base+"/slow/dispatchRate?applied=true", 2)
	wantRate(base+"/other/dispatchRate?applied=true", 20)
	a, err := e.b.AppliedTopicPolicies(tn.String())
	must(t, err)
	if got := a.SubscriptionDispatchRates()["slow"].DispatchThrottlingRateInMsg; got != 2 {
		t.Errorf("broker's subscription rate = %d, want 2", got)
	}
	if resp, _ := send(t, "DELETE", base+"/slow/dispatchRate", "", nil); resp.StatusCode != http.StatusNoContent {
		t.Errorf("remove: HTTP %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", base+"/slow/dispatchRate"); resp.StatusCode != http.StatusNoContent {
		t.Errorf("removed: HTTP %d, want 204", resp.StatusCode)
	}
	tpol, err := e.b.TopicPolicies(tn.String())
	must(t, err)
	if len(tpol.SubscriptionPolicies) != 0 {
		t.Errorf("subscription policies after removal = %v, want none", tpol.SubscriptionPolicies)
	}
	if resp, _ := do(t, "GET", base+"/slow/nothing"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another policy of a subscription: HTTP %d, want 404", resp.StatusCode)
	}
	// The subscription named dispatchRate is still deleted through …/subscription/{sub}.
	must(t, e.adm.Subscriptions().Create(*tn, "dispatchRate", utils.Latest))
	if resp, body := send(t, "DELETE", base+"/subscription/dispatchRate", "", nil); resp.StatusCode != http.StatusNoContent {
		t.Errorf("delete subscription dispatchRate: HTTP %d %s", resp.StatusCode, body)
	}
}

// The namespace policies a single broker cannot honour are refused 405 with their reason, by
// every method, and store nothing.
func TestNamespacePoliciesOutOfScope(t *testing.T) {
	t.Parallel()
	_, s := startServer(t)
	base := s.URL() + "/admin/v2/namespaces/public/default/"
	for path, reason := range map[string]string{
		"persistence": "BookKeeper", "persistence/bookieAffinity": "BookKeeper",
		"offloadPolicies": "Tiered storage", "offloadThresholdInSeconds": "Tiered storage",
		"offloadDeletionLagMs": "Tiered storage", "scanOffloadedLedgers": "Tiered storage",
		"replicatorDispatchRate": "Geo-replication", "entryFilters": "entry filters",
		"antiAffinity": "brokers of a cluster", "migration": "migration",
	} {
		for _, method := range []string{"GET", "POST", "DELETE"} {
			resp, body := do(t, method, base+path)
			if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(body, reason) {
				t.Errorf("%s %s = %d %s, want 405 naming %q", method, path, resp.StatusCode, body, reason)
			}
		}
	}
}
