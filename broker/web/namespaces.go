package web

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The namespaces resource: /admin/v2/namespaces/... — list, create (with or without a
// Policies body), get policies, bundles, delete (?force=true deletes the topics too), topics, and the
// policies of data and topic creation: retention, messageTTL, autoTopicCreation,
// autoSubscriptionCreation, deduplication, schemaCompatibilityStrategy and permissions (the
// policies that limit topics are namespace_policies.go's).
// Unset policies answer 204 with no body, as upstream answers null.

// nsPath is a namespace's path, which its routes extend.
const nsPath = "/admin/v2/namespaces/{tenant}/{namespace}"

func (s *Server) namespaceRoutes(rt *router) {
	const ns = nsPath
	rt.handle("GET /admin/v2/namespaces/{tenant}", func(w http.ResponseWriter, r *http.Request) {
		list, err := s.b.Namespaces(r.PathValue("tenant"))
		answer(w, list, err)
	})
	rt.handle("PUT "+ns, func(w http.ResponseWriter, r *http.Request) {
		var p adminapi.Policies
		present, ok := decodeBody(w, r, &p, true)
		if !ok {
			return
		}
		var pp *adminapi.Policies
		if present {
			pp = &p
		}
		noContent(w, s.b.CreateNamespace(nsName(r), pp))
	})
	rt.handle("GET "+ns, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		answer(w, p, err)
	})
	rt.handle("DELETE "+ns, func(w http.ResponseWriter, r *http.Request) {
		if force, ok := queryBool(w, r, "force"); ok {
			noContent(w, s.b.DeleteNamespace(nsName(r), force))
		}
	})
	// The namespace's bundles, as upstream's getBundlesData: how its topics' hash range is cut.
	rt.handle("GET "+ns+"/bundles", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, p.Bundles)
	})
	rt.handle("GET "+ns+"/topics", func(w http.ResponseWriter, r *http.Request) {
		list, err := s.b.Topics(nsName(r), true)
		if err == nil && r.URL.Query().Get("mode") != "PERSISTENT" {
			var np []string
			np, err = s.b.Topics(nsName(r), false)
			if r.URL.Query().Get("mode") == "NON_PERSISTENT" {
				list = np
			} else if r.URL.Query().Get("mode") == "ALL" {
				list = append(list, np...)
			}
		}
		answer(w, list, err)
	})
	s.namespaceDataPolicyRoutes(rt)
	s.namespaceSchemaRoutes(rt)
	s.namespaceClusterRoutes(rt)
	s.namespacePermissionRoutes(rt)
}

// namespaceDataPolicyRoutes serves the policies of data and topic creation, stored whole in
// the namespace's Policies: each endpoint reads or edits one field.
func (s *Server) namespaceDataPolicyRoutes(rt *router) {
	const ns = nsPath
	s.policyRoute(rt, ns+"/retention",
		func(p *adminapi.Policies) any { return nilIfNone(p.RetentionPolicies) },
		func() any { return &adminapi.RetentionPolicies{} },
		func(p *adminapi.Policies, v any) error {
			p.RetentionPolicies = nilOr(v, func(v any) *adminapi.RetentionPolicies { return v.(*adminapi.RetentionPolicies) })
			return nil
		})
	s.policyRoute(rt, ns+"/autoTopicCreation",
		func(p *adminapi.Policies) any { return nilIfNone(p.AutoTopicCreationOverride) },
		func() any { return &adminapi.AutoTopicCreationOverride{} },
		func(p *adminapi.Policies, v any) error {
			p.AutoTopicCreationOverride = nilOr(v, func(v any) *adminapi.AutoTopicCreationOverride { return v.(*adminapi.AutoTopicCreationOverride) })
			return nil
		})
	s.policyRoute(rt, ns+"/autoSubscriptionCreation",
		func(p *adminapi.Policies) any { return nilIfNone(p.AutoSubscriptionCreationOverride) },
		func() any { return &adminapi.AutoSubscriptionCreationOverride{} },
		func(p *adminapi.Policies, v any) error {
			p.AutoSubscriptionCreationOverride = nilOr(v, func(v any) *adminapi.AutoSubscriptionCreationOverride {
				return v.(*adminapi.AutoSubscriptionCreationOverride)
			})
			return nil
		})
	s.policyRoute(rt, ns+"/deduplication",
		func(p *adminapi.Policies) any { return nilIfNone(p.DeduplicationEnabled) },
		func() any { return new(bool) },
		func(p *adminapi.Policies, v any) error {
			p.DeduplicationEnabled = nilOr(v, func(v any) *bool { return v.(*bool) })
			return nil
		})
	s.policyRoute(rt, ns+"/messageTTL",
		func(p *adminapi.Policies) any { return nilIfNone(p.MessageTTLInSeconds) },
		func() any { return new(int) },
		func(p *adminapi.Policies, v any) error {
			p.MessageTTLInSeconds = nilOr(v, func(v any) *int { return v.(*int) })
			return nil
		})
	rt.handle("GET "+ns+"/schemaCompatibilityStrategy", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, p.SchemaCompatibilityStrategy)
	})
	rt.handle("PUT "+ns+"/schemaCompatibilityStrategy", func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		strategy := strategyName(body)
		noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
			p.SchemaCompatibilityStrategy = strategy
			return nil
		}))
	})
}

// namespaceClusterRoutes serves where a namespace lives: the replication clusters (a single
// broker's namespaces replicate to its own cluster only) and the allowed clusters (PIP-321:
// on a single broker, its own cluster).
func (s *Server) namespaceClusterRoutes(rt *router) {
	const ns = nsPath
	rt.handle("GET "+ns+"/replication", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, p.ReplicationClusters)
	})
	rt.handle("POST "+ns+"/replication", func(w http.ResponseWriter, r *http.Request) {
		var clusters []string
		if _, ok := decodeBody(w, r, &clusters, false); ok {
			noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
				p.ReplicationClusters = clusters
				return nil
			}))
		}
	})

	rt.handle("GET "+ns+"/allowedClusters", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, p.AllowedClusters)
	})
	rt.handle("POST "+ns+"/allowedClusters", func(w http.ResponseWriter, r *http.Request) {
		var clusters []string
		if _, ok := decodeBody(w, r, &clusters, false); ok {
			noContent(w, s.b.SetNamespaceAllowedClusters(nsName(r), clusters))
		}
	})
}

// namespacePermissionRoutes serves the roles' permissions on a namespace.
func (s *Server) namespacePermissionRoutes(rt *router) {
	const ns = nsPath
	rt.handle("GET "+ns+"/permissions", func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		perms := p.AuthPolicies.NamespaceAuth
		if perms == nil {
			perms = map[string][]string{}
		}
		writeJSON(w, http.StatusOK, perms)
	})
	rt.handle("POST "+ns+"/permissions/{role}", func(w http.ResponseWriter, r *http.Request) {
		var actions []string
		if _, ok := decodeBody(w, r, &actions, false); ok {
			noContent(w, s.b.GrantNamespacePermission(nsName(r), r.PathValue("role"), actions))
		}
	})
	rt.handle("DELETE "+ns+"/permissions/{role}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.RevokeNamespacePermission(nsName(r), r.PathValue("role")))
	})
}

// namespaceSchemaRoutes serves the namespace's schema policies besides its compatibility
// strategy: isAllowAutoUpdateSchema (the broker's isAllowAutoUpdateSchemaEnabled while unset),
// schemaValidationEnforced (with ?applied=true, the broker's isSchemaValidationEnforced counts
// too) and the deprecated schemaAutoUpdateCompatibilityStrategy (set with PUT, as upstream).
func (s *Server) namespaceSchemaRoutes(rt *router) {
	const ns = nsPath
	withPolicies := func(w http.ResponseWriter, r *http.Request, answer func(*adminapi.Policies) any) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		if v := answer(p); v != nil {
			writeJSON(w, http.StatusOK, v)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
	rt.handle("GET "+ns+"/isAllowAutoUpdateSchema", func(w http.ResponseWriter, r *http.Request) {
		withPolicies(w, r, func(p *adminapi.Policies) any {
			return policy.First(s.b.Config().IsAllowAutoUpdateSchemaEnabled, p.IsAllowAutoUpdateSchema)
		})
	})
	rt.handle("POST "+ns+"/isAllowAutoUpdateSchema", func(w http.ResponseWriter, r *http.Request) {
		var on bool
		if _, ok := decodeBody(w, r, &on, false); ok {
			noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
				p.IsAllowAutoUpdateSchema = &on
				return nil
			}))
		}
	})
	rt.handle("GET "+ns+"/schemaValidationEnforced", func(w http.ResponseWriter, r *http.Request) {
		applied, ok := queryBool(w, r, "applied")
		if ok {
			withPolicies(w, r, func(p *adminapi.Policies) any {
				return p.SchemaValidationEnforced || (applied && s.b.Config().IsSchemaValidationEnforced)
			})
		}
	})
	nsSet(s, rt, ns+"/schemaValidationEnforced", func(p *adminapi.Policies) *bool { return &p.SchemaValidationEnforced })
	rt.handle("GET "+ns+"/schemaAutoUpdateCompatibilityStrategy", func(w http.ResponseWriter, r *http.Request) {
		withPolicies(w, r, func(p *adminapi.Policies) any { return nilIfNone(p.SchemaAutoUpdateCompatibilityStrategy) })
	})
	rt.handle("PUT "+ns+"/schemaAutoUpdateCompatibilityStrategy", func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		var strategy string
		if err := unmarshal(body, &strategy); err != nil {
			strategy = string(body) // pulsar-admin sends the bare name
		}
		noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error {
			p.SchemaAutoUpdateCompatibilityStrategy = &strategy
			return nil
		}))
	})
}

func nsName(r *http.Request) string { return r.PathValue("tenant") + "/" + r.PathValue("namespace") }

// policyRoute registers GET (the value, 204 when unset), POST (set) and DELETE (unset) of one
// namespace policy.
func (s *Server) policyRoute(rt *router, path string, get func(*adminapi.Policies) any, alloc func() any,
	set func(*adminapi.Policies, any) error) {
	s.policyRouteWith(rt, "POST", path, get, alloc, set)
}

// policyRouteWith is policyRoute for a policy upstream sets with setMethod.
func (s *Server) policyRouteWith(rt *router, setMethod, path string, get func(*adminapi.Policies) any, alloc func() any,
	set func(*adminapi.Policies, any) error) {
	rt.handle("GET "+path, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		if err != nil {
			writeAdminError(w, err)
			return
		}
		if v := get(p); v != nil {
			writeJSON(w, http.StatusOK, v)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	rt.handle(setMethod+" "+path, func(w http.ResponseWriter, r *http.Request) {
		v := alloc()
		if _, ok := decodeBody(w, r, v, false); ok {
			noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error { return set(p, v) }))
		}
	})
	rt.handle("DELETE "+path, func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.UpdateNamespacePolicies(nsName(r), func(p *adminapi.Policies) error { return set(p, nil) }))
	})
}

// nilIfNone turns a typed nil pointer into an untyped nil.
func nilIfNone[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

func nilOr[T any](v any, conv func(any) *T) *T {
	if v == nil {
		return nil
	}
	return conv(v)
}

// strategyName reads a schema compatibility strategy body: pulsaradmin sends a JSON string,
// pulsar-admin the bare name.
func strategyName(body []byte) string {
	var strategy string
	if err := json.Unmarshal(body, &strategy); err != nil {
		strategy = string(body)
	}
	return strings.ToUpper(strings.TrimSpace(strategy))
}
