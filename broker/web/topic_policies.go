package web

import (
	"net/http"
	"strconv"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/policy"
)

// Topic-level policies, upstream's /admin/v2/{domain}/{tenant}/{ns}/{topic}/{policy}: GET (the
// topic's own value, 204 when unset; with ?applied=true the value in effect, the topic's else
// its namespace's else the broker's), POST (set) and DELETE (unset). The broker keeps and
// enforces the ones below (broker/admin_topic_policies.go); ?isGlobal is accepted and means
// nothing on a single cluster. The policies upstream has and this broker does not enforce
// answer 405 with a reason, as a broker with topic policies off would, rather than store
// something that has no effect.

// unsupportedTopicPolicies are the last path segments of upstream's topic-level policy
// endpoints that this broker does not keep.
var unsupportedTopicPolicies = []string{
	"deduplicationSnapshotInterval", "delayedDelivery", "dispatchRate",
	"dispatcherPauseOnAckStatePersistent", "entryFilters", "inactiveTopicPolicies",
	"maxMessageSize", "maxUnackedMessagesOnConsumer", "maxUnackedMessagesOnSubscription",
	"offloadPolicies", "persistence", "publishRate", "replicationClusters",
	"replicatorDispatchRate", "schemaValidationEnforced",
	"shadowTopics", "subscribeRate", "subscriptionDispatchRate", "subscriptionTypesEnabled",
}

const unsupportedTopicPolicy = "This topic-level policy is not supported by this broker: set it on the topic's namespace (/admin/v2/namespaces/{tenant}/{namespace}/...) where it exists"

// topicPolicy describes one topic-level policy: its value on the topic (nil: unset), its
// applied value, and how a body (nil: unset) is stored.
type topicPolicy struct {
	path    string
	own     func(*policy.TopicPolicies) any
	applied func(broker.AppliedTopicPolicies) any
	alloc   func() any
	set     func(*policy.TopicPolicies, any)
}

func (s *Server) topicPolicyRoutes(rt *router) {
	intPolicy := func(path string, field func(*policy.TopicPolicies) **int, applied func(broker.AppliedTopicPolicies) int) topicPolicy {
		return topicPolicy{path: path,
			own:     func(tp *policy.TopicPolicies) any { return nilIfNone(*field(tp)) },
			applied: func(a broker.AppliedTopicPolicies) any { return applied(a) },
			alloc:   func() any { return new(int) },
			set: func(tp *policy.TopicPolicies, v any) {
				*field(tp) = nilOr(v, func(v any) *int { return v.(*int) })
			},
		}
	}
	for _, p := range []topicPolicy{
		intPolicy("maxProducers", func(tp *policy.TopicPolicies) **int { return &tp.MaxProducerPerTopic },
			func(a broker.AppliedTopicPolicies) int { return a.MaxProducers() }),
		intPolicy("maxConsumers", func(tp *policy.TopicPolicies) **int { return &tp.MaxConsumerPerTopic },
			func(a broker.AppliedTopicPolicies) int { return a.MaxConsumers() }),
		intPolicy("maxConsumersPerSubscription", func(tp *policy.TopicPolicies) **int { return &tp.MaxConsumersPerSubscription },
			func(a broker.AppliedTopicPolicies) int { return a.MaxConsumersPerSubscription() }),
		intPolicy("maxSubscriptionsPerTopic", func(tp *policy.TopicPolicies) **int { return &tp.MaxSubscriptionsPerTopic },
			func(a broker.AppliedTopicPolicies) int { return a.MaxSubscriptions() }),
		{path: "retention",
			own:     func(tp *policy.TopicPolicies) any { return nilIfNone(tp.RetentionPolicies) },
			applied: func(a broker.AppliedTopicPolicies) any { return a.Retention() },
			alloc:   func() any { return &policy.RetentionPolicies{} },
			set: func(tp *policy.TopicPolicies, v any) {
				tp.RetentionPolicies = nilOr(v, func(v any) *policy.RetentionPolicies { return v.(*policy.RetentionPolicies) })
			}},
		{path: "deduplicationEnabled",
			own:     func(tp *policy.TopicPolicies) any { return nilIfNone(tp.DeduplicationEnabled) },
			applied: func(a broker.AppliedTopicPolicies) any { return a.Deduplication() },
			alloc:   func() any { return new(bool) },
			set: func(tp *policy.TopicPolicies, v any) {
				tp.DeduplicationEnabled = nilOr(v, func(v any) *bool { return v.(*bool) })
			}},
		{path: "autoSubscriptionCreation",
			own: func(tp *policy.TopicPolicies) any { return nilIfNone(tp.AutoSubscriptionCreationOverride) },
			applied: func(a broker.AppliedTopicPolicies) any {
				return policy.AutoSubscriptionCreationOverride{AllowAutoSubscriptionCreation: a.AutoSubscriptionCreation(a.AllowAutoSubscriptionCreation)}
			},
			alloc: func() any { return &policy.AutoSubscriptionCreationOverride{} },
			set: func(tp *policy.TopicPolicies, v any) {
				tp.AutoSubscriptionCreationOverride = nilOr(v, func(v any) *policy.AutoSubscriptionCreationOverride {
					return v.(*policy.AutoSubscriptionCreationOverride)
				})
			}},
		{path: "compactionThreshold",
			own:     func(tp *policy.TopicPolicies) any { return nilIfNone(tp.CompactionThreshold) },
			applied: func(a broker.AppliedTopicPolicies) any { return a.CompactionThreshold() },
			alloc:   func() any { return new(int64) },
			set: func(tp *policy.TopicPolicies, v any) {
				tp.CompactionThreshold = nilOr(v, func(v any) *int64 { return v.(*int64) })
			}},
	} {
		s.topicPolicyRoute(rt, p)
	}

	// The message TTL is set with ?messageTTL=, as upstream.
	s.topicPolicyGet(rt, topicPolicy{path: "messageTTL",
		own:     func(tp *policy.TopicPolicies) any { return nilIfNone(tp.MessageTTLInSeconds) },
		applied: func(a broker.AppliedTopicPolicies) any { return int(a.MessageTTL().Seconds()) }})
	s.topicRoute(rt, "POST", "/messageTTL", func(w http.ResponseWriter, r *http.Request, topic string) {
		ttl, err := strconv.Atoi(r.URL.Query().Get("messageTTL"))
		if err != nil {
			writeError(w, http.StatusBadRequest, "Query parameter messageTTL must be an integer")
			return
		}
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *policy.TopicPolicies) error {
			tp.MessageTTLInSeconds = &ttl
			return nil
		}))
	})
	s.topicRoute(rt, "DELETE", "/messageTTL", func(w http.ResponseWriter, r *http.Request, topic string) {
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *policy.TopicPolicies) error {
			tp.MessageTTLInSeconds = nil
			return nil
		}))
	})

	// The schema compatibility strategy is set with PUT and a JSON string (or the bare name).
	s.topicPolicyGet(rt, topicPolicy{path: "schemaCompatibilityStrategy",
		own:     func(tp *policy.TopicPolicies) any { return nilIfNone(tp.SchemaCompatibilityStrategy) },
		applied: func(a broker.AppliedTopicPolicies) any { return a.SchemaCompatibilityStrategy() }})
	s.topicRoute(rt, "PUT", "/schemaCompatibilityStrategy", func(w http.ResponseWriter, r *http.Request, topic string) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		strategy := strategyName(body)
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *policy.TopicPolicies) error {
			tp.SchemaCompatibilityStrategy = &strategy
			return nil
		}))
	})
	s.topicRoute(rt, "DELETE", "/schemaCompatibilityStrategy", func(w http.ResponseWriter, r *http.Request, topic string) {
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *policy.TopicPolicies) error {
			tp.SchemaCompatibilityStrategy = nil
			return nil
		}))
	})

	// Backlog quotas, by ?backlogQuotaType= (destination_storage when absent).
	s.topicPolicyGet(rt, topicPolicy{path: "backlogQuotaMap",
		own: func(tp *policy.TopicPolicies) any {
			if tp.BackLogQuotaMap == nil {
				return map[string]policy.BacklogQuota{}
			}
			return tp.BackLogQuotaMap
		},
		applied: func(a broker.AppliedTopicPolicies) any {
			quotas := map[string]policy.BacklogQuota{}
			for _, kind := range []string{policy.QuotaDestinationStorage, policy.QuotaMessageAge} {
				if q, ok := a.BacklogQuota(kind); ok {
					quotas[kind] = q
				}
			}
			return quotas
		}})
	s.topicRoute(rt, "POST", "/backlogQuota", func(w http.ResponseWriter, r *http.Request, topic string) {
		var q policy.BacklogQuota
		if _, ok := decodeBody(w, r, &q, false); !ok {
			return
		}
		kind := quotaType(r)
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *policy.TopicPolicies) error {
			if tp.BackLogQuotaMap == nil {
				tp.BackLogQuotaMap = map[string]policy.BacklogQuota{}
			}
			tp.BackLogQuotaMap[kind] = q
			return nil
		}))
	})
	s.topicRoute(rt, "DELETE", "/backlogQuota", func(w http.ResponseWriter, r *http.Request, topic string) {
		kind := quotaType(r)
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *policy.TopicPolicies) error {
			delete(tp.BackLogQuotaMap, kind)
			return nil
		}))
	})

	for _, p := range unsupportedTopicPolicies {
		for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
			s.topicRoute(rt, method, "/"+p, func(w http.ResponseWriter, _ *http.Request, _ string) {
				writeError(w, http.StatusMethodNotAllowed, unsupportedTopicPolicy)
			})
		}
	}
}

// topicPolicyRoute registers GET, POST (a JSON body) and DELETE of one topic-level policy.
func (s *Server) topicPolicyRoute(rt *router, p topicPolicy) {
	s.topicPolicyGet(rt, p)
	s.topicRoute(rt, "POST", "/"+p.path, func(w http.ResponseWriter, r *http.Request, topic string) {
		v := p.alloc()
		if _, ok := decodeBody(w, r, v, false); ok {
			noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *policy.TopicPolicies) error {
				p.set(tp, v)
				return nil
			}))
		}
	})
	s.topicRoute(rt, "DELETE", "/"+p.path, func(w http.ResponseWriter, r *http.Request, topic string) {
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *policy.TopicPolicies) error {
			p.set(tp, nil)
			return nil
		}))
	})
}

// topicPolicyGet registers GET of one topic-level policy: the topic's own value (204 when
// unset), or with ?applied=true the value in effect.
func (s *Server) topicPolicyGet(rt *router, p topicPolicy) {
	s.topicRoute(rt, "GET", "/"+p.path, func(w http.ResponseWriter, r *http.Request, topic string) {
		applied, ok := queryBool(w, r, "applied")
		if !ok {
			return
		}
		if applied {
			a, err := s.b.AppliedTopicPolicies(topic)
			if err != nil {
				writeAdminError(w, err)
				return
			}
			writeJSON(w, http.StatusOK, p.applied(a))
			return
		}
		tp, err := s.b.TopicPolicies(topic)
		if err != nil {
			writeAdminError(w, err)
			return
		}
		if v := p.own(tp); v != nil {
			writeJSON(w, http.StatusOK, v)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
