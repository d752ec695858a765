package web

import (
	"net/http"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The namespace policies of what the broker delivers and how fast (broker/policy resolves them
// under each topic's own; the broker enforces them): the publish, dispatch, subscription
// dispatch and subscribe rates (kept by cluster name, as upstream: a single broker reads its
// own cluster's), maxUnackedMessagesPerConsumer and …PerSubscription,
// maxSubscriptionsPerTopic, delayedDelivery, deduplicationSnapshotInterval,
// inactiveTopicPolicies, subscriptionTypesEnabled, subscriptionAuthMode, encryptionRequired
// and dispatcherPauseOnAckStatePersistent. Unset policies answer 204, as upstream answers
// null.

func (s *Server) namespaceDeliveryRoutes(rt *router) {
	const ns = nsPath
	cluster := s.b.Config().ClusterName
	clusterRate(s, rt, ns+"/publishRate", cluster, func(p *adminapi.Policies) []*map[string]adminapi.PublishRate {
		return []*map[string]adminapi.PublishRate{&p.PublishMaxMessageRate}
	})
	// clusterDispatchRate is upstream's deprecated copy of topicDispatchRate, kept in step.
	clusterRate(s, rt, ns+"/dispatchRate", cluster, func(p *adminapi.Policies) []*map[string]adminapi.DispatchRate {
		return []*map[string]adminapi.DispatchRate{&p.TopicDispatchRate, &p.ClusterDispatchRate}
	})
	clusterRate(s, rt, ns+"/subscriptionDispatchRate", cluster, func(p *adminapi.Policies) []*map[string]adminapi.DispatchRate {
		return []*map[string]adminapi.DispatchRate{&p.SubscriptionDispatchRate}
	})
	clusterRate(s, rt, ns+"/subscribeRate", cluster, func(p *adminapi.Policies) []*map[string]adminapi.SubscribeRate {
		return []*map[string]adminapi.SubscribeRate{&p.ClusterSubscribeRate}
	})

	nsField(s, rt, ns+"/maxUnackedMessagesPerConsumer", func(p *adminapi.Policies) **int { return &p.MaxUnackedMessagesPerConsumer })
	nsField(s, rt, ns+"/maxUnackedMessagesPerSubscription", func(p *adminapi.Policies) **int { return &p.MaxUnackedMessagesPerSubscription })
	nsField(s, rt, ns+"/maxSubscriptionsPerTopic", func(p *adminapi.Policies) **int { return &p.MaxSubscriptionsPerTopic })
	nsField(s, rt, ns+"/deduplicationSnapshotInterval", func(p *adminapi.Policies) **int { return &p.DeduplicationSnapshotIntervalSeconds })
	nsField(s, rt, ns+"/delayedDelivery", func(p *adminapi.Policies) **adminapi.DelayedDeliveryPolicies { return &p.DelayedDeliveryPolicies })
	nsField(s, rt, ns+"/inactiveTopicPolicies", func(p *adminapi.Policies) **adminapi.InactiveTopicPolicies { return &p.InactiveTopicPolicies })

	// subscriptionTypesEnabled: removing it leaves the empty set, which means the broker's.
	s.policyRoute(rt, ns+"/subscriptionTypesEnabled",
		func(p *adminapi.Policies) any { return p.SubscriptionTypesEnabled },
		func() any { return new([]string) },
		func(p *adminapi.Policies, v any) error {
			p.SubscriptionTypesEnabled = []string{}
			if v != nil {
				p.SubscriptionTypesEnabled = *v.(*[]string)
			}
			return nil
		})

	// Values upstream keeps as plain fields, never unset: GET answers them, POST sets them.
	nsValue(s, rt, ns+"/subscriptionAuthMode", func(p *adminapi.Policies) *string { return &p.SubscriptionAuthMode })
	nsValue(s, rt, ns+"/encryptionRequired", func(p *adminapi.Policies) *bool { return &p.EncryptionRequired })

	// dispatcherPauseOnAckStatePersistent: POST turns it on, DELETE off, as upstream.
	rt.handle("GET "+ns+"/dispatcherPauseOnAckStatePersistent", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, p.DispatcherPauseOnAckStatePersistentEnabled)
	})
	for method, on := range map[string]bool{"POST": true, "DELETE": false} {
		rt.handle(method+" "+ns+"/dispatcherPauseOnAckStatePersistent", func(w http.ResponseWriter, r *http.Request) {
			noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
				p.DispatcherPauseOnAckStatePersistentEnabled = on
				return nil
			}))
		})
	}
}

// clusterRate registers GET, POST and DELETE of a rate namespaces keep by cluster name: the
// broker's cluster's entry of each of the maps fields returns (the first is answered).
func clusterRate[T any](s *Server, rt *router, path, cluster string, fields func(*adminapi.Policies) []*map[string]T) {
	s.policyRoute(rt, path,
		func(p *adminapi.Policies) any {
			if v, ok := (*fields(p)[0])[cluster]; ok {
				return v
			}
			return nil
		},
		func() any { return new(T) },
		func(p *adminapi.Policies, v any) error {
			for _, m := range fields(p) {
				if *m == nil {
					*m = map[string]T{}
				}
				if v == nil {
					delete(*m, cluster)
				} else {
					(*m)[cluster] = *v.(*T)
				}
			}
			return nil
		})
}

// nsField registers GET, POST and DELETE of a namespace policy kept in one field, nil when
// unset.
func nsField[T any](s *Server, rt *router, path string, field func(*adminapi.Policies) **T) {
	s.policyRoute(rt, path,
		func(p *adminapi.Policies) any { return nilIfNone(*field(p)) },
		func() any { return new(T) },
		func(p *adminapi.Policies, v any) error {
			*field(p) = nilOr(v, func(v any) *T { return v.(*T) })
			return nil
		})
}

// nsValue registers GET and POST of a namespace policy that always has a value.
func nsValue[T any](s *Server, rt *router, path string, field func(*adminapi.Policies) *T) {
	rt.handle("GET "+path, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, *field(p))
	})
	nsSet(s, rt, path, field)
}

// nsSet registers POST of a namespace policy that always has a value.
func nsSet[T any](s *Server, rt *router, path string, field func(*adminapi.Policies) *T) {
	rt.handle("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		var v T
		if _, ok := decodeBody(w, r, &v, false); ok {
			noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
				*field(p) = v
				return nil
			}))
		}
	})
}
