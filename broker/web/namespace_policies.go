package web

import (
	"io"
	"maps"
	"net/http"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The namespace policies that limit topics (the broker validates and enforces them):
// compactionThreshold (set with PUT, as upstream), maxTopicsPerNamespace,
// subscriptionExpirationTime, maxConsumersPerSubscription, maxConsumersPerTopic,
// maxProducersPerTopic, backlogQuota / backlogQuotaMap, properties, and the subscription
// permissions (permissions/subscription). Unset policies answer 204, as upstream answers null.

func (s *Server) namespacePolicyRoutes(rt *router) {
	const ns = nsPath
	intPolicy := func(method, path string, field func(*adminapi.Policies) **int) {
		s.policyRouteWith(rt, method, ns+"/"+path,
			func(p *adminapi.Policies) any { return nilIfNone(*field(p)) },
			func() any { return new(int) },
			func(p *adminapi.Policies, v any) error {
				*field(p) = nilOr(v, func(v any) *int { return v.(*int) })
				return nil
			})
	}
	intPolicy("POST", "maxTopicsPerNamespace", func(p *adminapi.Policies) **int { return &p.MaxTopicsPerNamespace })
	intPolicy("POST", "subscriptionExpirationTime", func(p *adminapi.Policies) **int { return &p.SubscriptionExpirationTimeMinutes })
	intPolicy("POST", "maxConsumersPerSubscription", func(p *adminapi.Policies) **int { return &p.MaxConsumersPerSubscription })
	intPolicy("POST", "maxConsumersPerTopic", func(p *adminapi.Policies) **int { return &p.MaxConsumersPerTopic })
	intPolicy("POST", "maxProducersPerTopic", func(p *adminapi.Policies) **int { return &p.MaxProducersPerTopic })
	s.policyRouteWith(rt, "PUT", ns+"/compactionThreshold",
		func(p *adminapi.Policies) any { return nilIfNone(p.CompactionThreshold) },
		func() any { return new(int64) },
		func(p *adminapi.Policies, v any) error {
			p.CompactionThreshold = nilOr(v, func(v any) *int64 { return v.(*int64) })
			return nil
		})
	s.namespacePropertyRoutes(rt)
	s.namespaceBacklogQuotaRoutes(rt)
	s.namespaceSubscriptionPermissionRoutes(rt)
}

// namespacePropertyRoutes serves a namespace's properties. All of them: PUT merges, GET lists,
// DELETE removes them all. One: GET answers its value (204 when there is none), PUT sets it,
// DELETE removes it and answers the value it had. As upstream.
func (s *Server) namespacePropertyRoutes(rt *router) {
	const ns = nsPath
	rt.handle("GET "+ns+"/properties", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, p.Properties)
	})
	rt.handle("PUT "+ns+"/properties", func(w http.ResponseWriter, r *http.Request) {
		var props map[string]string
		if _, ok := decodeBody(w, r, &props, false); ok {
			noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
				maps.Copy(p.Properties, props)
				return nil
			}))
		}
	})
	rt.handle("DELETE "+ns+"/properties", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
			clear(p.Properties)
			return nil
		}))
	})

	rt.handle("GET "+ns+"/property/{key}", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeOptional(w, p.Properties, r.PathValue("key"))
	})
	rt.handle("PUT "+ns+"/property/{key}/{value}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
			p.Properties[r.PathValue("key")] = r.PathValue("value")
			return nil
		}))
	})
	rt.handle("DELETE "+ns+"/property/{key}", func(w http.ResponseWriter, r *http.Request) {
		var old map[string]string
		err := s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
			old = maps.Clone(p.Properties)
			delete(p.Properties, r.PathValue("key"))
			return nil
		})
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeOptional(w, old, r.PathValue("key"))
	})
}

// namespaceBacklogQuotaRoutes serves a namespace's backlog quotas, by ?backlogQuotaType=
// (destination_storage when absent, as upstream).
func (s *Server) namespaceBacklogQuotaRoutes(rt *router) {
	const ns = nsPath
	rt.handle("GET "+ns+"/backlogQuotaMap", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, p.BacklogQuotaMap)
	})
	rt.handle("POST "+ns+"/backlogQuota", func(w http.ResponseWriter, r *http.Request) {
		var q adminapi.BacklogQuota
		if _, ok := decodeBody(w, r, &q, false); !ok {
			return
		}
		kind := quotaType(r)
		noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
			return broker.SetNamespaceBacklogQuota(p, kind, q)
		}))
	})
	rt.handle("DELETE "+ns+"/backlogQuota", func(w http.ResponseWriter, r *http.Request) {
		kind := quotaType(r)
		noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
			delete(p.BacklogQuotaMap, kind)
			return nil
		}))
	})
}

// namespaceSubscriptionPermissionRoutes serves the roles allowed on a namespace's
// subscriptions: once a subscription has roles, only they consume through it.
func (s *Server) namespaceSubscriptionPermissionRoutes(rt *router) {
	const ns = nsPath
	rt.handle("GET "+ns+"/permissions/subscription", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		roles := p.AuthPolicies.SubscriptionAuthRoles
		if roles == nil {
			roles = map[string][]string{}
		}
		writeJSON(w, http.StatusOK, roles)
	})
	rt.handle("POST "+ns+"/permissions/subscription/{subscription}", func(w http.ResponseWriter, r *http.Request) {
		var roles []string
		if _, ok := decodeBody(w, r, &roles, false); ok {
			noContent(w, s.b.GrantSubscriptionPermission(nsName(r), r.PathValue("subscription"), roles))
		}
	})
	rt.handle("DELETE "+ns+"/permissions/{subscription}/{role}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.RevokeSubscriptionPermission(nsName(r), r.PathValue("subscription"), r.PathValue("role")))
	})
}

// unsupportedNamespacePolicies are upstream's namespace policy endpoints (paths after the
// namespace) that this broker cannot honour, with the reason it answers 405.
var unsupportedNamespacePolicies = map[string]string{
	"persistence":                reasonBookKeeper,
	"persistence/bookieAffinity": reasonBookKeeper,
	"offloadThreshold":           reasonTieredStorage,
	"offloadThresholdInSeconds":  reasonTieredStorage,
	"offloadDeletionLagMs":       reasonTieredStorage,
	"offloadPolicies":            reasonTieredStorage,
	"migration":                  reasonMigration,
	"removeOffloadPolicies":      reasonTieredStorage,
	"scanOffloadedLedgers":       reasonTieredStorage,
	"replicatorDispatchRate":     reasonGeoReplication,
	"entryFilters":               reasonPlugins,
	"antiAffinity":               reasonOneBroker,
}

func (s *Server) unsupportedNamespaceRoutes(rt *router) {
	const ns = nsPath + "/"
	refuse := func(reason string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { writeError(w, http.StatusMethodNotAllowed, reason) }
	}
	for path, reason := range unsupportedNamespacePolicies {
		for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
			rt.handle(method+" "+ns+path, refuse(reason))
		}
	}
}

// writeOptional answers props[key], or 204 when there is none.
func writeOptional(w http.ResponseWriter, props map[string]string, key string) {
	if v, ok := props[key]; ok {
		// The value itself, not a JSON string: upstream's server writes a String entity bare,
		// and its admin client reads the body as the value ("a", not "\"a\"").
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, v)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// quotaType is the request's backlogQuotaType, destination_storage when absent.
func quotaType(r *http.Request) string {
	if t := r.URL.Query().Get("backlogQuotaType"); t != "" {
		return t
	}
	return policy.QuotaDestinationStorage
}
