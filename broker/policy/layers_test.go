package policy

import (
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// Each policy resolves to the topic's value, else the namespace's, else the broker's.
func TestLayersResolveTopicThenNamespaceThenBroker(t *testing.T) {
	d := &Defaults{MaxProducersPerTopic: 1, TTLDurationDefault: time.Minute, DefaultRetentionMinutes: 5,
		BrokerServiceCompactionThreshold: 100, BrokerDeduplicationEnabled: true}
	broker := Layers{Defaults: d}
	ns := Layers{Defaults: d, Namespace: &Policies{MaxProducersPerTopic: ptr(2), MessageTTLInSeconds: ptr(30),
		RetentionPolicies: &RetentionPolicies{RetentionTimeInMinutes: 10}, CompactionThreshold: ptr(int64(200)),
		DeduplicationEnabled: ptr(false)}}
	topic := ns
	topic.Topic = &TopicPolicies{MaxProducerPerTopic: ptr(3), MessageTTLInSeconds: ptr(0),
		RetentionPolicies: &RetentionPolicies{RetentionSizeInMB: -1}, CompactionThreshold: ptr(int64(0)),
		DeduplicationEnabled: ptr(true)}

	for _, tc := range []struct {
		name       string
		l          Layers
		producers  int
		ttl        time.Duration
		retention  RetentionPolicies
		compaction int64
		dedup      bool
	}{
		{"broker", broker, 1, time.Minute, RetentionPolicies{RetentionTimeInMinutes: 5}, 100, true},
		{"namespace", ns, 2, 30 * time.Second, RetentionPolicies{RetentionTimeInMinutes: 10}, 200, false},
		{"topic", topic, 3, 0, RetentionPolicies{RetentionSizeInMB: -1}, 0, true},
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
	l.Namespace = &Policies{BacklogQuotaMap: map[string]BacklogQuota{QuotaDestinationStorage: {LimitSize: -1}}}
	if _, ok := l.BacklogQuota(QuotaDestinationStorage); ok {
		t.Error("namespace quota of -1: ok, want none")
	}
	l.Topic = &TopicPolicies{BackLogQuotaMap: map[string]BacklogQuota{QuotaDestinationStorage: {LimitSize: 10, Policy: QuotaProducerRequestHold}}}
	if q, ok := l.BacklogQuota(QuotaDestinationStorage); !ok || q.LimitSize != 10 {
		t.Errorf("topic quota = %+v, %v", q, ok)
	}
}

func TestTopicPoliciesEmpty(t *testing.T) {
	var none *TopicPolicies
	if !none.Empty() || !(&TopicPolicies{}).Empty() || !(&TopicPolicies{BackLogQuotaMap: map[string]BacklogQuota{}}).Empty() {
		t.Error("unset policies are not Empty")
	}
	if (&TopicPolicies{MaxProducerPerTopic: ptr(0)}).Empty() {
		t.Error("a policy set to 0 is Empty")
	}
}
