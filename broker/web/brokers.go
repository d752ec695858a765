package web

import "net/http"

// The brokers resource: /admin/v2/brokers/...
//
// Implemented: health. Not yet: the list of active brokers, leader broker, dynamic
// configuration, internal configuration.

func (s *Server) brokerRoutes(rt *router) {
	rt.handle("GET /admin/v2/brokers/health", s.brokerHealth)
}

// brokerHealth answers 200 "ok" while the server runs. Upstream's check also produces and
// consumes a message on a heartbeat topic; the embedded broker is one process, so answering at
// all is the check.
func (s *Server) brokerHealth(w http.ResponseWriter, r *http.Request) {
	writeText(w, "ok")
}
