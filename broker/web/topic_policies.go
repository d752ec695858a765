package web

import (
	"net/http"
	"strconv"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Topic-level policies, upstream's /admin/v2/{domain}/{tenant}/{ns}/{topic}/{policy}: GET (the
// topic's own value, 204 when unset; with ?applied=true the value in effect, the topic's else
// its namespace's else the broker's), POST (set) and DELETE (unset). The broker keeps,
// validates and enforces them (broker/admin_topic_policies.go; broker/policy resolves the
// applied values); ?isGlobal is accepted and means nothing on a single cluster. The policies
// that need what a single broker does not have answer 405 with the reason.

// unsupportedTopicPolicies are the last path segments of upstream's topic-level policy
// endpoints that this broker cannot honour, with the reason it answers.
var unsupportedTopicPolicies = map[string]string{
	"persistence":            reasonBookKeeper,
	"offloadPolicies":        reasonTieredStorage,
	"replicatorDispatchRate": reasonGeoReplication,
	"shadowTopics":           "Shadow topics are not supported by this broker: they read another topic's BookKeeper ledgers, which a broker without BookKeeper does not have",
	"entryFilters":           reasonPlugins,
}

// Why the policies a single broker cannot honour answer 405.
const (
	reasonBookKeeper     = "This broker stores data without BookKeeper: persistence policies (ensemble, quorums, mark-delete rate) and bookie affinity have nothing to act on"
	reasonTieredStorage  = "Tiered storage is not supported by this broker: offload policies have nothing to act on"
	reasonGeoReplication = "Geo-replication is not supported by this broker: a single cluster has nothing to replicate to"
	reasonPlugins        = "Broker plugins (entry filters) are not supported by this broker"
	reasonOneBroker      = "This policy places namespaces across the brokers of a cluster; a single broker has none to choose from"
	reasonMigration      = "Cluster migration is not supported by this broker: a single cluster has no other to migrate its namespaces to"
)

// topicPolicy describes one topic-level policy: its value on the topic (nil: unset), its
// applied value, and how a body (nil: unset) is stored.
type topicPolicy struct {
	path    string
	own     func(*adminapi.TopicPolicies) any
	applied func(broker.AppliedTopicPolicies) any
	alloc   func() any
	set     func(*adminapi.TopicPolicies, any)
}

// fieldPolicy is a topicPolicy kept in one field of TopicPolicies.
func fieldPolicy[T any](path string, field func(*adminapi.TopicPolicies) **T, applied func(broker.AppliedTopicPolicies) T) topicPolicy {
	return topicPolicy{path: path,
		own:     func(tp *adminapi.TopicPolicies) any { return nilIfNone(*field(tp)) },
		applied: func(a broker.AppliedTopicPolicies) any { return applied(a) },
		alloc:   func() any { return new(T) },
		set: func(tp *adminapi.TopicPolicies, v any) {
			*field(tp) = nilOr(v, func(v any) *T { return v.(*T) })
		},
	}
}

// listPolicy is a topicPolicy kept as a list, unset when empty, as upstream's.
func listPolicy(path string, field func(*adminapi.TopicPolicies) *[]string, applied func(broker.AppliedTopicPolicies) []string) topicPolicy {
	return topicPolicy{path: path,
		own: func(tp *adminapi.TopicPolicies) any {
			if l := *field(tp); len(l) > 0 {
				return l
			}
			return nil
		},
		applied: func(a broker.AppliedTopicPolicies) any { return applied(a) },
		alloc:   func() any { return new([]string) },
		set: func(tp *adminapi.TopicPolicies, v any) {
			*field(tp) = nil
			if v != nil {
				*field(tp) = *v.(*[]string)
			}
		},
	}
}

func (s *Server) topicPolicyRoutes(rt *router) {
	type tp = adminapi.TopicPolicies
	type ap = broker.AppliedTopicPolicies
	for _, p := range []topicPolicy{
		fieldPolicy("maxProducers", func(t *tp) **int { return &t.MaxProducerPerTopic }, ap.MaxProducers),
		fieldPolicy("maxConsumers", func(t *tp) **int { return &t.MaxConsumerPerTopic }, ap.MaxConsumers),
		fieldPolicy("maxConsumersPerSubscription", func(t *tp) **int { return &t.MaxConsumersPerSubscription }, ap.MaxConsumersPerSubscription),
		fieldPolicy("maxSubscriptionsPerTopic", func(t *tp) **int { return &t.MaxSubscriptionsPerTopic }, ap.MaxSubscriptions),
		fieldPolicy("maxUnackedMessagesOnConsumer", func(t *tp) **int { return &t.MaxUnackedMessagesOnConsumer }, ap.MaxUnackedPerConsumer),
		fieldPolicy("maxUnackedMessagesOnSubscription", func(t *tp) **int { return &t.MaxUnackedMessagesOnSubscription }, ap.MaxUnackedPerSubscription),
		fieldPolicy("maxMessageSize", func(t *tp) **int { return &t.MaxMessageSize }, ap.MaxMessageSizeInEffect),
		fieldPolicy("deduplicationSnapshotInterval", func(t *tp) **int { return &t.DeduplicationSnapshotIntervalSeconds },
			ap.DeduplicationSnapshotInterval),
		fieldPolicy("retention", func(t *tp) **adminapi.RetentionPolicies { return &t.RetentionPolicies }, ap.Retention),
		fieldPolicy("deduplicationEnabled", func(t *tp) **bool { return &t.DeduplicationEnabled }, ap.Deduplication),
		fieldPolicy("compactionThreshold", func(t *tp) **int64 { return &t.CompactionThreshold }, ap.CompactionThreshold),
		fieldPolicy("autoSubscriptionCreation", func(t *tp) **adminapi.AutoSubscriptionCreationOverride { return &t.AutoSubscriptionCreationOverride },
			func(a ap) adminapi.AutoSubscriptionCreationOverride {
				return adminapi.AutoSubscriptionCreationOverride{AllowAutoSubscriptionCreation: a.AutoSubscriptionCreation(a.AllowAutoSubscriptionCreation)}
			}),
		fieldPolicy("publishRate", func(t *tp) **adminapi.PublishRate { return &t.PublishRate }, ap.PublishRate),
		fieldPolicy("dispatchRate", func(t *tp) **adminapi.DispatchRate { return &t.DispatchRate }, ap.DispatchRate),
		fieldPolicy("subscriptionDispatchRate", func(t *tp) **adminapi.DispatchRate { return &t.SubscriptionDispatchRate }, ap.SubscriptionDispatchRate),
		fieldPolicy("subscribeRate", func(t *tp) **adminapi.SubscribeRate { return &t.SubscribeRate }, ap.SubscribeRate),
		fieldPolicy("inactiveTopicPolicies", func(t *tp) **adminapi.InactiveTopicPolicies { return &t.InactiveTopicPolicies }, ap.InactiveTopic),
		fieldPolicy("dispatcherPauseOnAckStatePersistent", func(t *tp) **bool { return &t.DispatcherPauseOnAckStatePersistentEnabled },
			ap.DispatcherPauseOnAckStatePersistent),
		listPolicy("subscriptionTypesEnabled", func(t *tp) *[]string { return &t.SubscriptionTypesEnabled }, ap.SubscriptionTypesEnabled),
		listPolicy("replication", func(t *tp) *[]string { return &t.ReplicationClusters }, ap.ReplicationClusters),
	} {
		s.topicPolicyRoute(rt, p)
	}

	// schemaValidationEnforced: upstream answers false, not nothing, while the topic sets none.
	validation := fieldPolicy("schemaValidationEnforced", func(t *tp) **bool { return &t.SchemaValidationEnforced }, ap.SchemaValidationEnforced)
	validation.own = func(t *tp) any { return policy.First(false, t.SchemaValidationEnforced) }
	s.topicPolicyRoute(rt, validation)

	s.delayedDeliveryRoutes(rt)
	s.subscriptionDispatchRateRoutes(rt)

	// The message TTL is set with ?messageTTL=, as upstream.
	s.topicPolicyGet(rt, topicPolicy{path: "messageTTL",
		own:     func(t *tp) any { return nilIfNone(t.MessageTTLInSeconds) },
		applied: func(a ap) any { return int(a.MessageTTL().Seconds()) }})
	s.topicRoute(rt, "POST", "/messageTTL", func(w http.ResponseWriter, r *http.Request, topic string) {
		ttl, err := strconv.Atoi(r.URL.Query().Get("messageTTL"))
		if err != nil {
			writeError(w, http.StatusBadRequest, "Query parameter messageTTL must be an integer")
			return
		}
		noContent(w, s.b.UpdateTopicPolicies(topic, func(t *tp) error {
			t.MessageTTLInSeconds = &ttl
			return nil
		}))
	})
	s.topicRoute(rt, "DELETE", "/messageTTL", func(w http.ResponseWriter, r *http.Request, topic string) {
		noContent(w, s.b.UpdateTopicPolicies(topic, func(t *tp) error {
			t.MessageTTLInSeconds = nil
			return nil
		}))
	})

	// The schema compatibility strategy is set with PUT and a JSON string (or the bare name).
	s.topicPolicyGet(rt, topicPolicy{path: "schemaCompatibilityStrategy",
		own:     func(t *tp) any { return nilIfNone(t.SchemaCompatibilityStrategy) },
		applied: func(a ap) any { return a.SchemaCompatibilityStrategy() }})
	s.topicRoute(rt, "PUT", "/schemaCompatibilityStrategy", func(w http.ResponseWriter, r *http.Request, topic string) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		strategy := strategyName(body)
		noContent(w, s.b.UpdateTopicPolicies(topic, func(t *tp) error {
			t.SchemaCompatibilityStrategy = &strategy
			return nil
		}))
	})
	s.topicRoute(rt, "DELETE", "/schemaCompatibilityStrategy", func(w http.ResponseWriter, r *http.Request, topic string) {
		noContent(w, s.b.UpdateTopicPolicies(topic, func(t *tp) error {
			t.SchemaCompatibilityStrategy = nil
			return nil
		}))
	})

	s.topicBacklogQuotaRoutes(rt)

	for path, reason := range unsupportedTopicPolicies {
		for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
			s.topicRoute(rt, method, "/"+path, func(w http.ResponseWriter, _ *http.Request, _ string) {
				writeError(w, http.StatusMethodNotAllowed, reason)
			})
		}
	}
}

// delayedDeliveryRoutes serves delayedDelivery: upstream keeps it on a topic as three fields
// and answers it as one DelayedDeliveryPolicies, only when both active and tickTime are set.
func (s *Server) delayedDeliveryRoutes(rt *router) {
	s.topicPolicyRoute(rt, topicPolicy{path: "delayedDelivery",
		own: func(tp *adminapi.TopicPolicies) any {
			if tp.DelayedDeliveryEnabled == nil || tp.DelayedDeliveryTickTimeMillis == nil {
				return nil
			}
			return adminapi.DelayedDeliveryPolicies{Active: *tp.DelayedDeliveryEnabled, TickTime: *tp.DelayedDeliveryTickTimeMillis,
				MaxDeliveryDelayInMillis: policy.First(0, tp.DelayedDeliveryMaxDelayInMillis)}
		},
		applied: func(a broker.AppliedTopicPolicies) any { return a.DelayedDelivery() },
		alloc:   func() any { return &adminapi.DelayedDeliveryPolicies{} },
		set: func(tp *adminapi.TopicPolicies, v any) {
			tp.DelayedDeliveryEnabled, tp.DelayedDeliveryTickTimeMillis, tp.DelayedDeliveryMaxDelayInMillis = nil, nil, nil
			if d, ok := v.(*adminapi.DelayedDeliveryPolicies); ok {
				tp.DelayedDeliveryEnabled, tp.DelayedDeliveryTickTimeMillis = &d.Active, &d.TickTime
				if d.MaxDeliveryDelayInMillis != 0 {
					tp.DelayedDeliveryMaxDelayInMillis = &d.MaxDeliveryDelayInMillis
				}
			}
		},
	})
}

// subscriptionDispatchRateRoutes serves upstream's …/{topic}/{subName}/dispatchRate, one
// subscription's own dispatch rate, kept in the topic's policies; with ?applied=true, unset, it
// is the topic's subscriptionDispatchRate in effect. The pattern takes any last segment, as a
// literal one would conflict with …/subscription/{sub} in the router: the routes of
// subscriptions keep the paths that both would match, as upstream's literal segments do.
func (s *Server) subscriptionDispatchRateRoutes(rt *router) {
	const suffix = "/{subscriptionName}/{policy}"
	served := func(h func(w http.ResponseWriter, r *http.Request, topic, sub string)) func(http.ResponseWriter, *http.Request, string) {
		return func(w http.ResponseWriter, r *http.Request, topic string) {
			if r.PathValue("policy") != "dispatchRate" {
				writeNotFound(w)
				return
			}
			h(w, r, topic, r.PathValue("subscriptionName"))
		}
	}
	update := func(topic, sub string, rate *adminapi.DispatchRate) error {
		return s.b.UpdateTopicPolicies(topic, func(tp *adminapi.TopicPolicies) error {
			p := tp.SubscriptionPolicies[sub]
			p.DispatchRate = rate
			if p == (adminapi.SubscriptionPolicies{}) {
				delete(tp.SubscriptionPolicies, sub)
				return nil
			}
			if tp.SubscriptionPolicies == nil {
				tp.SubscriptionPolicies = map[string]adminapi.SubscriptionPolicies{}
			}
			tp.SubscriptionPolicies[sub] = p
			return nil
		})
	}
	s.topicRoute(rt, "GET", suffix, served(func(w http.ResponseWriter, r *http.Request, topic, sub string) {
		s.answerTopicPolicy(w, r, topic, topicPolicy{
			own:     func(tp *adminapi.TopicPolicies) any { return nilIfNone(tp.SubscriptionPolicies[sub].DispatchRate) },
			applied: func(a broker.AppliedTopicPolicies) any { return a.SubscriptionDispatchRateOf(sub) },
		})
	}))
	s.topicRoute(rt, "POST", suffix, served(func(w http.ResponseWriter, r *http.Request, topic, sub string) {
		var rate adminapi.DispatchRate
		if _, ok := decodeBody(w, r, &rate, false); ok {
			noContent(w, update(topic, sub, &rate))
		}
	}))
	s.topicRoute(rt, "DELETE", suffix, served(func(w http.ResponseWriter, r *http.Request, topic, sub string) {
		noContent(w, update(topic, sub, nil))
	}))
}

// topicBacklogQuotaRoutes serves backlog quotas, by ?backlogQuotaType= (destination_storage when
// absent).
func (s *Server) topicBacklogQuotaRoutes(rt *router) {
	s.topicPolicyGet(rt, topicPolicy{path: "backlogQuotaMap",
		own: func(tp *adminapi.TopicPolicies) any {
			if tp.BackLogQuotaMap == nil {
				return map[string]adminapi.BacklogQuota{}
			}
			return tp.BackLogQuotaMap
		},
		applied: func(a broker.AppliedTopicPolicies) any {
			quotas := map[string]adminapi.BacklogQuota{}
			for _, kind := range []string{policy.QuotaDestinationStorage, policy.QuotaMessageAge} {
				if q, ok := a.BacklogQuota(kind); ok {
					quotas[kind] = q
				}
			}
			return quotas
		}})
	s.topicRoute(rt, "POST", "/backlogQuota", func(w http.ResponseWriter, r *http.Request, topic string) {
		var q adminapi.BacklogQuota
		if _, ok := decodeBody(w, r, &q, false); !ok {
			return
		}
		kind := quotaType(r)
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *adminapi.TopicPolicies) error {
			if tp.BackLogQuotaMap == nil {
				tp.BackLogQuotaMap = map[string]adminapi.BacklogQuota{}
			}
			tp.BackLogQuotaMap[kind] = q
			return nil
		}))
	})
	s.topicRoute(rt, "DELETE", "/backlogQuota", func(w http.ResponseWriter, r *http.Request, topic string) {
		kind := quotaType(r)
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *adminapi.TopicPolicies) error {
			delete(tp.BackLogQuotaMap, kind)
			return nil
		}))
	})
}

// topicPolicyRoute registers GET, POST (a JSON body) and DELETE of one topic-level policy.
func (s *Server) topicPolicyRoute(rt *router, p topicPolicy) {
	s.topicPolicyGet(rt, p)
	s.topicRoute(rt, "POST", "/"+p.path, func(w http.ResponseWriter, r *http.Request, topic string) {
		v := p.alloc()
		if _, ok := decodeBody(w, r, v, false); ok {
			noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *adminapi.TopicPolicies) error {
				p.set(tp, v)
				return nil
			}))
		}
	})
	s.topicRoute(rt, "DELETE", "/"+p.path, func(w http.ResponseWriter, r *http.Request, topic string) {
		noContent(w, s.b.UpdateTopicPolicies(topic, func(tp *adminapi.TopicPolicies) error {
			p.set(tp, nil)
			return nil
		}))
	})
}

// topicPolicyGet registers GET of one topic-level policy: the topic's own value (204 when
// unset), or with ?applied=true the value in effect.
func (s *Server) topicPolicyGet(rt *router, p topicPolicy) {
	s.topicRoute(rt, "GET", "/"+p.path, func(w http.ResponseWriter, r *http.Request, topic string) {
		s.answerTopicPolicy(w, r, topic, p)
	})
}

// answerTopicPolicy answers p on topic: its own value (204 when unset), or with ?applied=true
// the value in effect.
func (s *Server) answerTopicPolicy(w http.ResponseWriter, r *http.Request, topic string, p topicPolicy) {
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
}
