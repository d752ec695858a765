package web

import (
	"net/http"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Resource groups, as upstream's /admin/v2/resourcegroups (superusers only, as upstream): list,
// get, create or update (PUT), delete; and a namespace's resourcegroup: GET (the group's name,
// written as upstream's Jersey writes a String, unquoted; 204 when none), POST …/{group}
// attaches it, DELETE detaches it (broker/admin_resource_groups.go keeps them, and their rates are
// enforced by broker/resourcegroup_rate.go).
func (s *Server) resourceGroupRoutes(rt *router) {
	const rg = "/admin/v2/resourcegroups"
	rt.handle("GET "+rg, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.b.ResourceGroups())
	})
	rt.handle("GET "+rg+"/{group}", func(w http.ResponseWriter, r *http.Request) {
		g, err := s.b.ResourceGroup(r.PathValue("group"))
		answer(w, g, err)
	})
	rt.handle("PUT "+rg+"/{group}", func(w http.ResponseWriter, r *http.Request) {
		var g adminapi.ResourceGroup
		if _, ok := decodeBody(w, r, &g, false); ok {
			noContent(w, s.b.PutResourceGroup(r.PathValue("group"), g))
		}
	})
	rt.handle("DELETE "+rg+"/{group}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.DeleteResourceGroup(r.PathValue("group")))
	})

	const ns = "/admin/v2/namespaces/{tenant}/{namespace}/resourcegroup"
	rt.handle("GET "+ns, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.b.NamespacePolicies(nsName(r))
		switch {
		case err != nil:
			writeAdminError(w, err)
		case p.ResourceGroupName == "":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(p.ResourceGroupName))
		}
	})
	rt.handle("POST "+ns+"/{group}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.SetNamespaceResourceGroup(nsName(r), r.PathValue("group")))
	})
	rt.handle("DELETE "+ns, func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.SetNamespaceResourceGroup(nsName(r), ""))
	})
}
