package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth"
)

// Authentication and authorization of admin requests, as upstream's web service does with its
// providers: `Authorization: Bearer <JWT>` (token), `Authorization: Basic` (basic), the client
// certificate of the https listener (tls); the X-Pulsar-Auth-Method-Name header picks one, else
// each is tried and anonymousUserRole, when set, is the role of requests none takes. Without
// authentication on the broker, nothing here runs. Missing or invalid credentials answer 401; a
// role without the permission the route needs answers 401 too, as upstream does ("refused", with a
// reason saying which).
//
// What each route needs, by path (what upstream's resources check):
//
//	/metrics                                         nothing (upstream authenticateMetricsEndpoint=false)
//	GET /admin/v2/clusters...                        any authenticated role
//	/admin/v2/tenants/{t} GET                        admin of t
//	/admin/v2/namespaces/{t}[/{ns}/...]              admin of t; GET .../topics: consume on ns
//	/admin/v2/{domain}/{t}/{ns} GET (list)           consume on ns
//	/admin/v2/{domain}/{t}/{ns}/{topic}/...          stats, metadata, last id: lookup;
//	                                                 subscriptions, peek: consume; others: admin of t
//	/admin/v2/schemas/{t}/{ns}/{topic}/...           GET and checks: lookup; POST schema: produce;
//	                                                 DELETE: admin of t
//	/lookup/v2/topic/{domain}/{t}/{ns}/{topic}       lookup
//	anything else (tenants list, brokers, ...)       superuser
//
// Superusers may do anything and tenant admins anything within their tenant.

// requirement is what a request needs: op on resource (and subscription, for consume).
type requirement struct {
	op           broker.Operation
	resource     string
	subscription string
	open         bool // no authentication at all
	anyRole      bool // any authenticated role
}

func (s *Server) authenticate(next http.Handler) http.Handler {
	if !s.b.AuthenticationEnabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := requirementOf(r)
		if req.open {
			next.ServeHTTP(w, r)
			return
		}
		creds := auth.HTTPCredentials{Authorization: r.Header.Values("Authorization"),
			Method: r.Header.Get("X-Pulsar-Auth-Method-Name")}
		if r.TLS != nil {
			creds.Certs = r.TLS.PeerCertificates
		}
		role, err := s.b.AuthenticateHTTP(creds)
		if err != nil {
			if errors.Is(err, auth.ErrNoCredentials) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="pulsar"`)
			} else {
				// The reason is logged, never the credentials.
				s.log.Warn("admin request: authentication failed", "method", r.Method, "path", r.URL.Path,
					"remote", r.RemoteAddr, "reason", err.Error())
				w.Header().Set("WWW-Authenticate", `Bearer realm="pulsar", error="invalid_token"`)
			}
			writeError(w, http.StatusUnauthorized, "Authentication required")
			return
		}
		// As upstream's validateAdminAccessForTenant, a tenant that does not exist is 404 before
		// anything about the role: no tenant has admins to compare it with.
		if req.op == broker.OpTenantAdmin {
			if _, err := s.b.Tenant(req.resource); errors.Is(err, broker.ErrNotFound) {
				writeAdminError(w, err)
				return
			}
		}
		if !req.anyRole && !s.b.Authorize(role, req.op, req.resource, req.subscription) {
			s.log.Warn("admin request: not authorized", "method", r.Method, "path", r.URL.Path,
				"role", role, "needs", req.op.String())
			writeError(w, http.StatusUnauthorized, "Unauthorized: role "+role+" may not "+what(req.op))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func what(op broker.Operation) string {
	switch op {
	case broker.OpTenantAdmin:
		return "administrate resources on this tenant"
	case broker.OpSuperUser:
		return "perform this operation: it requires super-user access"
	}
	return op.String() + " here"
}

// requirementOf maps a request to what it needs. It reads the escaped path segment by segment,
// as the router matches it, so an encoded slash cannot shift a segment into another role.
func requirementOf(r *http.Request) requirement {
	raw := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	seg := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil {
			return requirement{op: broker.OpSuperUser}
		}
		seg[i] = u
	}
	at := func(i int) string {
		if i < len(seg) {
			return seg[i]
		}
		return ""
	}
	superuser := requirement{op: broker.OpSuperUser}
	tenantAdmin := func(t string) requirement { return requirement{op: broker.OpTenantAdmin, resource: t} }
	get := r.Method == http.MethodGet || r.Method == http.MethodHead

	if at(0) == "metrics" {
		return requirement{open: true}
	}
	if at(0) == "lookup" && at(1) == "v2" && at(2) == "topic" && len(seg) == 7 {
		return requirement{op: broker.OpLookup, resource: at(3) + "://" + at(4) + "/" + at(5) + "/" + at(6)}
	}
	if at(0) != "admin" || at(1) != "v2" {
		return superuser
	}
	switch at(2) {
	case "clusters":
		if get {
			return requirement{anyRole: true}
		}
	case "tenants":
		if len(seg) == 4 && get {
			return tenantAdmin(at(3))
		}
	case "namespaces":
		switch {
		case len(seg) == 4 && get:
			return tenantAdmin(at(3))
		case len(seg) == 6 && at(5) == "topics" && get:
			return requirement{op: broker.OpNamespaceConsume, resource: at(3) + "/" + at(4)}
		case len(seg) >= 5:
			return tenantAdmin(at(3))
		}
	case "persistent", "non-persistent":
		if len(seg) < 5 {
			break
		}
		if len(seg) == 5 || (len(seg) == 6 && at(5) == "partitioned") {
			if get {
				return requirement{op: broker.OpNamespaceConsume, resource: at(3) + "/" + at(4)}
			}
			return tenantAdmin(at(3))
		}
		return topicRequirement(r.Method, at(2)+"://"+at(3)+"/"+at(4)+"/"+at(5), seg[6:], tenantAdmin(at(3)))
	case "schemas":
		if len(seg) < 7 {
			return tenantAdmin(at(3))
		}
		topic := "persistent://" + at(3) + "/" + at(4) + "/" + at(5)
		switch {
		case get, r.Method == http.MethodPost && (at(6) == "compatibility" || at(6) == "version"):
			return requirement{op: broker.OpLookup, resource: topic}
		case r.Method == http.MethodPost && at(6) == "schema":
			return requirement{op: broker.OpProduce, resource: topic}
		}
		return tenantAdmin(at(3))
	}
	return superuser
}

// topicRequirement is what an operation on one topic needs; rest is the path after the topic.
func topicRequirement(method, topic string, rest []string, admin requirement) requirement {
	get := method == http.MethodGet || method == http.MethodHead
	first := ""
	if len(rest) > 0 {
		first = rest[0]
	}
	lookup := requirement{op: broker.OpLookup, resource: topic}
	consume := func(sub string) requirement {
		return requirement{op: broker.OpConsume, resource: topic, subscription: sub}
	}
	switch first {
	case "stats", "partitioned-stats", "internalStats", "partitions", "lastMessageId", "messageid", "properties":
		if get {
			return lookup
		}
	case "subscriptions", "examinemessage", "ledger":
		if get {
			return consume("")
		}
	case "subscription":
		if len(rest) >= 2 {
			return consume(rest[1])
		}
	case "all_subscription":
		return consume("")
	}
	return admin
}
