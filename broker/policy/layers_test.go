package policy

import (
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

func ptr[T any](v T) *T { return &v }

// Each policy resolves to the topic's value, else the namespace's, else the broker's.
func TestLayersResolveTopicThenNamespaceThenBroker(t *testing.T) {
	d := &Defaults{MaxProducersPerTopic: 1, TTLDurationDefault: time.Minute, DefaultRetentionMinutes: 5,
		BrokerServiceCompactionThreshold: 100, BrokerDeduplicationEnabled: true}
	broker := Layers{Defaults: d}
	ns := Layers{Defaults: d, Namespace: &adminapi.Policies{MaxProducersPerTopic: ptr(2), MessageTTLInSeconds: ptr(30),
		RetentionPolicies: &adminapi.RetentionPolicies{RetentionTimeInMinutes: 10}, CompactionThreshold: ptr(int64(200)),
		DeduplicationEnabled: ptr(false)}}
	topic := ns
	topic.Topic = &adminapi.TopicPolicies{MaxProducerPerTopic: ptr(3), MessageTTLInSeconds: ptr(0),
		RetentionPolicies: &adminapi.RetentionPolicies{RetentionSizeInMB: -1}, CompactionThreshold: ptr(int64(0)),
		DeduplicationEnabled: ptr(true)}

	for _, tc := range []struct {
		name       string
		l          Layers
		producers  int
		ttl        time.Duration
		retention  adminapi.RetentionPolicies
		compaction int64
		dedup      bool
	}{
		{"broker", broker, 1, time.Minute, adminapi.RetentionPolicies{RetentionTimeInMinutes: 5}, 100, true},
		{"namespace", ns, 2, 30 * time.Second, adminapi.RetentionPolicies{RetentionTimeInMinutes: 10}, 200, false},
		{"topic", topic, 3, 0, adminapi.RetentionPolicies{RetentionSizeInMB: -1}, 0, true},
	} {
		if got := tc.l.MaxProducers(); got != tc.producers {
			t.Errorf("%s: MaxProducers = %d, want %d", tc.name, got, tc.producers)
		}
		if got := tc.l.MessageTTL(); got != tc.ttl {
			t.Errorf("%s: MessageTTL = %v, want %v", tc.name, got, tc.ttl)
		}
		if got := tc.l.Retention(); got != tc.retention {
			t.Errorf("%s: Retention = %+v, want %+v", tc.name, got, tc.retention)
		}
		if got := tc.l.CompactionThreshold(); got != tc.compaction {
			t.Errorf("%s: CompactionThreshold = %d, want %d", tc.name, got, tc.compaction)
		}
		if got := tc.l.Deduplication(); got != tc.dedup {
			t.Errorf("%s: Deduplication = %v, want %v", tc.name, got, tc.dedup)
		}
	}
}

// A backlog quota of -1 is none; the broker's quota applies only where neither layer sets one.
func TestLayersBacklogQuota(t *testing.T) {
	d := &Defaults{BacklogQuotaDefaultLimitBytes: 1 << 20, BacklogQuotaDefaultRetentionPolicy: QuotaProducerException}
	l := Layers{Defaults: d}
	if q, ok := l.BacklogQuota(QuotaDestinationStorage); !ok || q.LimitSize != 1<<20 || q.Policy != QuotaProducerException {
		t.Errorf("broker quota = %+v, %v", q, ok)
	}
	if _, ok := l.BacklogQuota(QuotaMessageAge); ok {
		t.Error("message_age quota without any limit: ok")
	}
	l.Namespace = &adminapi.Policies{BacklogQuotaMap: map[string]adminapi.BacklogQuota{QuotaDestinationStorage: {LimitSize: -1}}}
	if _, ok := l.BacklogQuota(QuotaDestinationStorage); ok {
		t.Error("namespace quota of -1: ok, want none")
	}
	l.Topic = &adminapi.TopicPolicies{BackLogQuotaMap: map[string]adminapi.BacklogQuota{QuotaDestinationStorage: {LimitSize: 10, Policy: QuotaProducerRequestHold}}}
	if q, ok := l.BacklogQuota(QuotaDestinationStorage); !ok || q.LimitSize != 10 {
		t.Errorf("topic quota = %+v, %v", q, ok)
	}
}

func TestTopicPoliciesEmpty(t *testing.T) {
	var none *adminapi.TopicPolicies
	if !EmptyTopic(none) || !EmptyTopic(&adminapi.TopicPolicies{}) || !EmptyTopic(&adminapi.TopicPolicies{BackLogQuotaMap: map[string]adminapi.BacklogQuota{}}) {
		t.Error("unset policies are not empty")
	}
	if EmptyTopic(&adminapi.TopicPolicies{MaxProducerPerTopic: ptr(0)}) {
		t.Error("a policy set to 0 is empty")
	}
}

// Namespaces keep their rates by cluster: a broker reads its own cluster's entry, else the
// broker's rate; a topic's rate is over both.
func TestLayersRatesByCluster(t *testing.T) {
	d := &Defaults{MaxPublishRatePerTopicInMessages: 7, DispatchThrottlingRatePerSubscriptionInMsg: 9,
		SubscribeThrottlingRatePerConsumer: 0, SubscribeRatePeriodPerConsumerInSecond: 30}
	l := Layers{Defaults: d, Cluster: "here", Namespace: &adminapi.Policies{
		PublishMaxMessageRate:    map[string]adminapi.PublishRate{"elsewhere": {PublishThrottlingRateInMsg: 1}},
		SubscriptionDispatchRate: map[string]adminapi.DispatchRate{"here": {DispatchThrottlingRateInMsg: 5, RatePeriodInSecond: 2}},
		ClusterSubscribeRate:     map[string]adminapi.SubscribeRate{"here": {SubscribeThrottlingRatePerConsumer: 3, RatePeriodInSecond: 10}},
	}}
	if got := l.PublishRate(); got != (adminapi.PublishRate{PublishThrottlingRateInMsg: 7}) {
		t.Errorf("publish rate with another cluster's entry only = %+v, want the broker's", got)
	}
	if got := l.SubscriptionDispatchRate(); got != (adminapi.DispatchRate{DispatchThrottlingRateInMsg: 5, RatePeriodInSecond: 2}) {
		t.Errorf("subscription dispatch rate = %+v, want the namespace's", got)
	}
	if got := l.SubscribeRate(); got != (adminapi.SubscribeRate{SubscribeThrottlingRatePerConsumer: 3, RatePeriodInSecond: 10}) {
		t.Errorf("subscribe rate = %+v, want the namespace's", got)
	}
	l.Topic = &adminapi.TopicPolicies{PublishRate: &adminapi.PublishRate{PublishThrottlingRateInByte: 100}}
	if got := l.PublishRate(); got != (adminapi.PublishRate{PublishThrottlingRateInByte: 100}) {
		t.Errorf("publish rate = %+v, want the topic's", got)
	}
	if got := (Layers{Defaults: d}).SubscriptionDispatchRate(); got != (adminapi.DispatchRate{DispatchThrottlingRateInMsg: 9, RatePeriodInSecond: 1}) {
		t.Errorf("broker subscription dispatch rate = %+v", got)
	}
}

// Delayed delivery is resolved field by field (upstream keeps three topic fields); schema
// validation and the dispatcher pause are on when the namespace or the broker turns them on,
// unless the topic says otherwise.
func TestLayersDelayedDeliveryAndSwitches(t *testing.T) {
	d := &Defaults{DelayedDeliveryEnabled: true, DelayedDeliveryTick: time.Second, IsSchemaValidationEnforced: true}
	l := Layers{Defaults: d}
	if got := l.DelayedDelivery(); got != (adminapi.DelayedDeliveryPolicies{Active: true, TickTime: 1000}) {
		t.Errorf("broker delayed delivery = %+v", got)
	}
	l.Namespace = &adminapi.Policies{DelayedDeliveryPolicies: &adminapi.DelayedDeliveryPolicies{Active: false, TickTime: 500, MaxDeliveryDelayInMillis: 60000},
		DispatcherPauseOnAckStatePersistentEnabled: true}
	l.Topic = &adminapi.TopicPolicies{DelayedDeliveryTickTimeMillis: ptr(int64(100)), SchemaValidationEnforced: ptr(false)}
	if got := l.DelayedDelivery(); got != (adminapi.DelayedDeliveryPolicies{Active: false, TickTime: 100, MaxDeliveryDelayInMillis: 60000}) {
		t.Errorf("delayed delivery = %+v, want the topic's tick over the namespace's policy", got)
	}
	if l.SchemaValidationEnforced() {
		t.Error("schema validation enforced though the topic turned it off")
	}
	if !(Layers{Defaults: d}).SchemaValidationEnforced() {
		t.Error("schema validation not enforced though the broker enforces it")
	}
	if !l.DispatcherPauseOnAckStatePersistent() {
		t.Error("dispatcher pause off though the namespace turned it on")
	}
}

// Subscription types: the topic's list, else the namespace's, else the broker's; an empty
// list is none set.
func TestLayersSubscriptionTypes(t *testing.T) {
	l := Layers{Defaults: &Defaults{SubscriptionTypesEnabled: []string{"Exclusive", "Shared"}},
		Namespace: &adminapi.Policies{SubscriptionTypesEnabled: []string{}}}
	if got := l.SubscriptionTypesEnabled(); len(got) != 2 {
		t.Errorf("types = %v, want the broker's", got)
	}
	l.Namespace.SubscriptionTypesEnabled = []string{"Failover"}
	if got := l.SubscriptionTypesEnabled(); len(got) != 1 || got[0] != "Failover" {
		t.Errorf("types = %v, want the namespace's", got)
	}
	l.Topic = &adminapi.TopicPolicies{SubscriptionTypesEnabled: []string{"Key_Shared"}}
	if got := l.SubscriptionTypesEnabled(); len(got) != 1 || got[0] != "Key_Shared" {
		t.Errorf("types = %v, want the topic's", got)
	}
}

// A subscription's own dispatch rate is over the topic's subscription dispatch rate, which is
// over the namespace's and the broker's.
func TestLayersSubscriptionLevelDispatchRate(t *testing.T) {
	l := Layers{Defaults: &Defaults{DispatchThrottlingRatePerSubscriptionInMsg: 9}, Topic: &adminapi.TopicPolicies{
		SubscriptionDispatchRate: &adminapi.DispatchRate{DispatchThrottlingRateInMsg: 20, RatePeriodInSecond: 1},
		SubscriptionPolicies:     map[string]adminapi.SubscriptionPolicies{"slow": {DispatchRate: &adminapi.DispatchRate{DispatchThrottlingRateInMsg: 2, RatePeriodInSecond: 1}}},
	}}
	if got := l.SubscriptionDispatchRateOf("slow").DispatchThrottlingRateInMsg; got != 2 {
		t.Errorf("slow subscription's rate = %d, want its own 2", got)
	}
	if got := l.SubscriptionDispatchRateOf("other").DispatchThrottlingRateInMsg; got != 20 {
		t.Errorf("other subscription's rate = %d, want the topic's 20", got)
	}
	if got := l.SubscriptionDispatchRates(); len(got) != 1 || got["slow"].DispatchThrottlingRateInMsg != 2 {
		t.Errorf("subscription rates = %v", got)
	}
}

func TestLayersAutoTopicCreation(t *testing.T) {
	var l Layers
	if allow, part, n := l.AutoTopicCreation(true, false, 1); !allow || part || n != 1 {
		t.Errorf("no override = %v %v %d, want the broker's true false 1", allow, part, n)
	}
	l.Namespace = &adminapi.Policies{AutoTopicCreationOverride: &adminapi.AutoTopicCreationOverride{AllowAutoTopicCreation: true, TopicType: "partitioned", DefaultNumPartitions: ptr(4)}}
	if allow, part, n := l.AutoTopicCreation(false, false, 1); !allow || !part || n != 4 {
		t.Errorf("namespace override = %v %v %d, want true true 4", allow, part, n)
	}
	l.Namespace.AutoTopicCreationOverride = &adminapi.AutoTopicCreationOverride{AllowAutoTopicCreation: false, TopicType: "non-partitioned", DefaultNumPartitions: ptr(0)}
	if allow, part, n := l.AutoTopicCreation(true, true, 3); allow || part || n != 3 {
		t.Errorf("override without partitions = %v %v %d, want false false and the broker's 3", allow, part, n)
	}
}
