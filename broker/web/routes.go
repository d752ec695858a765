package web

import "net/http"

// routes lists every route of the admin API. Each resource group registers its routes from its
// own file; a new group adds one line here.
func (s *Server) routes() http.Handler {
	rt := newRouter()
	s.brokerRoutes(rt)
	s.clusterRoutes(rt)
	return rt
}
