package web

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The topics resource: /admin/v2/{persistent,non-persistent}/{tenant}/{ns}[/...]: lists (the
// non-persistent ones answer [] when empty: pulsaradmin fires all four and fails if one
// fails), create (non-partitioned with a properties or null body; partitioned with upstream's
// {"partitions":N,"properties":…} or the Java admin's bare N), update partitions, partition
// metadata, delete (?force), properties, lastMessageId, messageid by time, terminate,
// and compaction (broker/compaction.go). Unloading has its own file (unload.go).

var domains = []string{"persistent", "non-persistent"}

// topicRoute registers h for method and suffix under both domains; h gets the full topic name.
func (s *Server) topicRoute(rt *router, method, suffix string, h func(w http.ResponseWriter, r *http.Request, topic string)) {
	for _, d := range domains {
		rt.handle(method+" /admin/v2/"+d+"/{tenant}/{namespace}/{topic}"+suffix, func(w http.ResponseWriter, r *http.Request) {
			h(w, r, d+"://"+r.PathValue("tenant")+"/"+r.PathValue("namespace")+"/"+r.PathValue("topic"))
		})
	}
}

func (s *Server) topicRoutes(rt *router) {
	for _, d := range domains {
		persistent := d == "persistent"
		rt.handle("GET /admin/v2/"+d+"/{tenant}/{namespace}", func(w http.ResponseWriter, r *http.Request) {
			list, err := s.b.Topics(nsName(r), persistent)
			answer(w, list, err)
		})
		rt.handle("GET /admin/v2/"+d+"/{tenant}/{namespace}/partitioned", func(w http.ResponseWriter, r *http.Request) {
			list, err := s.b.PartitionedTopics(nsName(r), persistent)
			answer(w, list, err)
		})
	}
	s.topicRoute(rt, "PUT", "", func(w http.ResponseWriter, r *http.Request, topic string) {
		var props map[string]string
		if _, ok := decodeBody(w, r, &props, true); ok {
			noContent(w, s.b.CreateTopic(topic, props))
		}
	})
	s.topicRoute(rt, "DELETE", "", func(w http.ResponseWriter, r *http.Request, topic string) {
		if force, ok := queryBool(w, r, "force"); ok {
			noContent(w, s.b.DeleteTopic(topic, force))
		}
	})
	s.topicRoute(rt, "PUT", "/partitions", s.createPartitionedTopic)
	s.topicRoute(rt, "POST", "/partitions", func(w http.ResponseWriter, r *http.Request, topic string) {
		var n int
		if _, ok := decodeBody(w, r, &n, false); ok {
			noContent(w, s.b.UpdatePartitions(topic, n))
		}
	})
	s.topicRoute(rt, "GET", "/partitions", func(w http.ResponseWriter, r *http.Request, topic string) {
		var n int
		var err error
		if check, ok := queryBool(w, r, "checkAllowAutoCreation"); !ok {
			return
		} else if check {
			n, err = s.b.PartitionedMetadataAutoCreate(topic) // the clients' HTTP lookup
		} else {
			n, err = s.b.PartitionedMetadata(topic)
		}
		answer(w, adminapi.PartitionedTopicMetadata{Partitions: n}, err)
	})
	s.topicRoute(rt, "DELETE", "/partitions", func(w http.ResponseWriter, r *http.Request, topic string) {
		if force, ok := queryBool(w, r, "force"); ok {
			noContent(w, s.b.DeletePartitionedTopic(topic, force))
		}
	})
	s.topicPropertyRoutes(rt)
	s.topicRoute(rt, "GET", "/lastMessageId", func(w http.ResponseWriter, r *http.Request, topic string) {
		id, err := s.b.LastMessageID(topic)
		answer(w, id, err)
	})
	s.topicRoute(rt, "GET", "/messageid/{timestamp}", func(w http.ResponseWriter, r *http.Request, topic string) {
		if ts, ok := pathInt(w, r, "timestamp"); ok {
			id, err := s.b.MessageIDByTime(topic, ts)
			answer(w, id, err)
		}
	})
	s.topicRoute(rt, "POST", "/terminate", func(w http.ResponseWriter, r *http.Request, topic string) {
		id, err := s.b.TerminateTopic(topic)
		answer(w, id, err)
	})
	// Compaction runs in the background: PUT (and POST, which upstream's older admin clients
	// send) start it, GET reports it.
	for _, method := range []string{"PUT", "POST"} {
		s.topicRoute(rt, method, "/compaction", func(w http.ResponseWriter, r *http.Request, topic string) {
			noContent(w, s.b.TriggerCompaction(topic))
		})
	}
	s.topicRoute(rt, "GET", "/compaction", func(w http.ResponseWriter, r *http.Request, topic string) {
		st, err := s.b.CompactionStatus(topic)
		answer(w, st, err)
	})
}

// createPartitionedTopic creates a partitioned topic from a partition count or, as newer
// admin clients send it, partitioned topic metadata with properties.
func (s *Server) createPartitionedTopic(w http.ResponseWriter, r *http.Request, topic string) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var meta adminapi.PartitionedTopicMetadata
	if bytes.HasPrefix(body, []byte("{")) {
		if err := unmarshal(body, &meta); err != nil {
			writeError(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
			return
		}
		if !partitionsGiven(body) {
			writeError(w, http.StatusBadRequest, "Invalid request body: partitions is missing")
			return
		}
	} else if err := unmarshal(body, &meta.Partitions); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid request body: want a partition count or partitioned topic metadata: "+errText(err, body))
		return
	}
	noContent(w, s.b.CreatePartitionedTopic(topic, meta.Partitions, meta.Properties))
}

// partitionsGiven reports whether partitioned topic metadata (a JSON object that unmarshal
// read) gives a partition count: one left out, null or "" (which Jackson reads as none) is
// refused rather than taken for 0.
func partitionsGiven(body []byte) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return false
	}
	v, ok := fields["partitions"]
	return ok && string(v) != "null" && string(v) != `""`
}

// topicPropertyRoutes serves a topic's properties: GET lists, PUT merges, DELETE ?key= removes one.
func (s *Server) topicPropertyRoutes(rt *router) {
	s.topicRoute(rt, "GET", "/properties", func(w http.ResponseWriter, r *http.Request, topic string) {
		props, err := s.b.TopicProperties(topic)
		answer(w, props, err)
	})
	s.topicRoute(rt, "PUT", "/properties", func(w http.ResponseWriter, r *http.Request, topic string) {
		var props map[string]string
		if _, ok := decodeBody(w, r, &props, true); ok {
			noContent(w, s.b.UpdateTopicProperties(topic, props))
		}
	})
	s.topicRoute(rt, "DELETE", "/properties", func(w http.ResponseWriter, r *http.Request, topic string) {
		key := r.URL.Query().Get("key")
		if key == "" {
			writeError(w, http.StatusBadRequest, "Query parameter key is required")
			return
		}
		noContent(w, s.b.RemoveTopicProperty(topic, key))
	})
}

func errText(err error, body []byte) string {
	if len(body) > 64 {
		return err.Error()
	}
	return err.Error() + " in " + string(body)
}
