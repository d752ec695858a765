package web

import (
	"net/http"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The brokers resource: /admin/v2/brokers/..., as upstream's BrokersBase answers it (superuser
// only, auth.go). The embedded broker is a cluster of one: the active brokers and the leader are
// this broker, named as upstream names brokers, by their web service host:port.
//
// Implemented: health, the active brokers (of a cluster, and of this broker's cluster), the
// leader, dynamic configuration (broker/dynamic_config.go). Not yet: owned namespaces, internal
// configuration, the backlog quota check, ready.

func (s *Server) brokerRoutes(rt *router) {
	rt.handle("GET /admin/v2/brokers/health", s.brokerHealth)
	rt.handle("GET /admin/v2/brokers", s.activeBrokers)
	rt.handle("GET /admin/v2/brokers/{cluster}", s.activeBrokers)
	rt.handle("GET /admin/v2/brokers/leaderBroker", s.leaderBroker)
	rt.handle("GET /admin/v2/brokers/configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.b.DynamicConfigurationNames())
	})
	rt.handle("GET /admin/v2/brokers/configuration/values", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.b.DynamicConfiguration())
	})
	rt.handle("GET /admin/v2/brokers/configuration/runtime", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.b.RuntimeConfiguration())
	})
	rt.handle("POST /admin/v2/brokers/configuration/{key}/{value}", func(w http.ResponseWriter, r *http.Request) {
		okEmpty(w, s.b.UpdateDynamicConfiguration(r.PathValue("key"), r.PathValue("value")))
	})
	rt.handle("DELETE /admin/v2/brokers/configuration/{key}", func(w http.ResponseWriter, r *http.Request) {
		okEmpty(w, s.b.DeleteDynamicConfiguration(r.PathValue("key")))
	})
}

// brokerHealth answers 200 "ok" while the server runs. Upstream's check also produces and
// consumes a message on a heartbeat topic; the embedded broker is one process, so answering at
// all is the check.
func (s *Server) brokerHealth(w http.ResponseWriter, r *http.Request) {
	writeText(w, "ok")
}

// activeBrokers lists this broker. With authorization on, upstream redirects a call about
// another cluster to it, or answers 404 when no such cluster is known; without, any cluster
// name is taken for its own.
func (s *Server) activeBrokers(w http.ResponseWriter, r *http.Request) {
	if c := r.PathValue("cluster"); c != "" && c != s.b.Config().ClusterName && s.b.Config().AuthorizationEnabled {
		writeError(w, http.StatusNotFound, "Cluster does not exist: cluster="+c)
		return
	}
	writeJSON(w, http.StatusOK, []string{s.Addr()})
}

// leaderBroker is upstream's BrokerInfo of the leader: this broker.
func (s *Server) leaderBroker(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, adminapi.BrokerInfo{ServiceURL: s.URL(), BrokerID: s.Addr()})
}
