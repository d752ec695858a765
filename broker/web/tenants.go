package web

import (
	"net/http"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The tenants resource: /admin/v2/tenants/... — list, get, create (PUT), update (POST),
// delete (?force=true also deletes the tenant's namespaces).

func (s *Server) tenantRoutes(rt *router) {
	rt.handle("GET /admin/v2/tenants", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.b.Tenants())
	})
	rt.handle("GET /admin/v2/tenants/{tenant}", func(w http.ResponseWriter, r *http.Request) {
		info, err := s.b.Tenant(r.PathValue("tenant"))
		answer(w, info, err)
	})
	rt.handle("PUT /admin/v2/tenants/{tenant}", func(w http.ResponseWriter, r *http.Request) {
		if info, ok := s.tenantBody(w, r); ok {
			noContent(w, s.b.CreateTenant(r.PathValue("tenant"), info))
		}
	})
	rt.handle("POST /admin/v2/tenants/{tenant}", func(w http.ResponseWriter, r *http.Request) {
		if info, ok := s.tenantBody(w, r); ok {
			noContent(w, s.b.UpdateTenant(r.PathValue("tenant"), info))
		}
	})
	rt.handle("DELETE /admin/v2/tenants/{tenant}", func(w http.ResponseWriter, r *http.Request) {
		if force, ok := queryBool(w, r, "force"); ok {
			noContent(w, s.b.DeleteTenant(r.PathValue("tenant"), force))
		}
	})
}

// tenantBody reads a TenantInfo; an absent body means "every cluster, no admin roles", as
// pulsar-admin's defaults.
func (s *Server) tenantBody(w http.ResponseWriter, r *http.Request) (adminapi.TenantInfo, bool) {
	var info adminapi.TenantInfo
	present, ok := decodeBody(w, r, &info, true)
	if !ok {
		return info, false
	}
	if !present {
		info.AllowedClusters = []string{s.b.Config().ClusterName}
	}
	if info.AdminRoles == nil {
		info.AdminRoles = []string{}
	}
	return info, true
}
