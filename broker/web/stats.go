package web

import (
	"net/http"

	"github.com/letterbox-dev/letterbox/broker"
)

// Topic stats: …/stats, …/partitioned-stats (?perPartition), …/internalStats, and upstream's
// bulk /admin/v2/broker-stats/topics (namespace → bundle → domain → topic → stats), which the
// TUI uses for its topic list.

func (s *Server) statsRoutes(rt *router) {
	s.topicRoute(rt, "GET", "/stats", func(w http.ResponseWriter, r *http.Request, topic string) {
		if opts, ok := statsOptions(w, r); ok {
			st, err := s.b.TopicStats(topic, opts)
			answer(w, st, err)
		}
	})
	s.topicRoute(rt, "GET", "/partitioned-stats", func(w http.ResponseWriter, r *http.Request, topic string) {
		opts, ok := statsOptions(w, r)
		if !ok {
			return
		}
		per, ok := queryBool(w, r, "perPartition")
		if !ok {
			return
		}
		if r.URL.Query().Get("perPartition") == "" {
			per = true // upstream's default
		}
		st, err := s.b.PartitionedTopicStats(topic, per, opts)
		answer(w, st, err)
	})
	s.topicRoute(rt, "GET", "/internalStats", func(w http.ResponseWriter, r *http.Request, topic string) {
		st, err := s.b.InternalStats(topic)
		answer(w, st, err)
	})
	rt.handle("GET /admin/v2/broker-stats/topics", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.b.BrokerTopicStats())
	})
}

func statsOptions(w http.ResponseWriter, r *http.Request) (broker.StatsOptions, bool) {
	var o broker.StatsOptions
	for _, q := range []struct {
		name string
		dst  *bool
	}{
		{"getPreciseBacklog", &o.GetPreciseBacklog},
		{"subscriptionBacklogSize", &o.SubscriptionBacklogSize},
		{"getEarliestTimeInBacklog", &o.GetEarliestTimeInBacklog},
		{"excludePublishers", &o.ExcludePublishers},
		{"excludeConsumers", &o.ExcludeConsumers},
	} {
		v, ok := queryBool(w, r, q.name)
		if !ok {
			return o, false
		}
		*q.dst = v
	}
	return o, true
}
