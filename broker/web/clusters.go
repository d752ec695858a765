package web

import "net/http"

// The clusters resource: /admin/v2/clusters/...
//
// The embedded broker is a single-node broker, never a cluster: the list holds its own cluster
// name (clusterName, "standalone" by default). Not yet: a cluster's data, failure domains,
// namespace isolation policies.

func (s *Server) clusterRoutes(rt *router) {
	rt.handle("GET /admin/v2/clusters", s.listClusters)
}

func (s *Server) listClusters(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []string{s.b.Config().ClusterName})
}
