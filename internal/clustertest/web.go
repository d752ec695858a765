//go:build clustertest

package clustertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Each member's admin API is the broker core's, as that member would answer it:
//   - a topic-level call about a topic another member owns: 307 to the owner's web URL, the
//     same path and query (partitioned topics' own calls are served anywhere, as upstream's
//     metadata-store reads are);
//   - broker-stats/topics: the core's, kept to the topics this member owns;
//   - the active brokers and the leader: the three members (or a 307 to a host outside the
//     cluster, RedirectBrokerList); the HTTP lookup: the owner's URLs;
//   - everything else: the core's answer.
// Authentication and authorization are the core's: a call the core refuses is refused here
// with its answer, before anything is rewritten. As upstream, a redirect goes only to a client
// that authenticated: its credentials are checked at the core first.

func (m *Member) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && p == "/admin/v2/broker-stats/topics":
		m.rewrite(w, r, m.ownTopicStats)
		return
	case r.Method == http.MethodGet && (p == "/admin/v2/brokers" || isBrokersOfCluster(p)):
		m.c.mu.Lock()
		elsewhere := m.c.brokerList
		m.c.mu.Unlock()
		if elsewhere != "" {
			if m.authenticated(w, r) {
				w.Header().Set("Location", elsewhere+r.URL.RequestURI())
				w.WriteHeader(http.StatusTemporaryRedirect)
			}
			return
		}
		m.rewrite(w, r, func([]byte) any { return m.c.brokerIDs() })
		return
	case r.Method == http.MethodGet && p == "/admin/v2/brokers/leaderBroker":
		leader := m.c.Members[0]
		m.rewrite(w, r, func([]byte) any {
			return map[string]string{"serviceUrl": leader.WebURL, "brokerId": hostPort(leader.WebURL)}
		})
		return
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/lookup/v2/topic/"):
		if topic, ok := topicOfPath(strings.TrimPrefix(p, "/lookup/v2/topic/")); ok {
			owner := m.c.OwnerOf(topic)
			m.rewrite(w, r, func([]byte) any {
				return map[string]string{"brokerUrl": owner.ServiceURL, "httpUrl": owner.WebURL, "nativeUrl": owner.ServiceURL}
			})
			return
		}
	}
	if rest, ok := strings.CutPrefix(p, "/admin/v2/"); ok {
		if topic, ok := topicOfPath(rest); ok {
			if to := m.c.httpOwner(topic); to != "" && to != m.WebURL {
				if !m.authenticated(w, r) {
					return
				}
				w.Header().Set("Location", to+r.URL.RequestURI())
				w.WriteHeader(http.StatusTemporaryRedirect)
				return
			}
		}
	}
	m.c.proxy.ServeHTTP(w, r)
}

// authenticated checks r's credentials at the core (with a call any authenticated role may
// make) and, when the core refuses them, answers its refusal.
func (m *Member) authenticated(w http.ResponseWriter, r *http.Request) bool {
	probe := httptest.NewRequest(http.MethodGet, "/admin/v2/clusters", nil)
	probe.Header = r.Header.Clone()
	rec := httptest.NewRecorder()
	m.c.proxy.ServeHTTP(rec, probe)
	if rec.Code == http.StatusOK {
		return true
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
	return false
}

// rewrite asks the core and, when it answers 200, answers what body makes of its body instead.
func (m *Member) rewrite(w http.ResponseWriter, r *http.Request, body func(core []byte) any) {
	rec := httptest.NewRecorder()
	m.c.proxy.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return
	}
	out, err := json.Marshal(body(rec.Body.Bytes()))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// ownTopicStats keeps the core's broker-stats/topics to the topics m owns, as upstream's
// broker answers for the topics it has loaded.
func (m *Member) ownTopicStats(core []byte) any {
	var all map[string]map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(core, &all); err != nil {
		return map[string]string{"reason": "clustertest: " + err.Error()}
	}
	out := map[string]map[string]map[string]map[string]json.RawMessage{}
	for ns, bundles := range all {
		for bundle, domains := range bundles {
			for domain, topics := range domains {
				for topic, st := range topics {
					if m.c.OwnerIndex(topic) != m.Index {
						continue
					}
					if out[ns] == nil {
						out[ns] = map[string]map[string]map[string]json.RawMessage{}
					}
					if out[ns][bundle] == nil {
						out[ns][bundle] = map[string]map[string]json.RawMessage{}
					}
					if out[ns][bundle][domain] == nil {
						out[ns][bundle][domain] = map[string]json.RawMessage{}
					}
					out[ns][bundle][domain][topic] = st
				}
			}
		}
	}
	return out
}

// brokerIDs are the members as upstream names active brokers: host:webport.
func (c *Cluster) brokerIDs() []string {
	ids := make([]string, len(c.Members))
	for i, m := range c.Members {
		ids[i] = hostPort(m.WebURL)
	}
	return ids
}

// httpOwner is the web URL topic-level calls about topic belong to: an outsider's, none for a
// partitioned topic's own calls (its partitions have owners, it has none), else the owner's.
func (c *Cluster) httpOwner(topic string) string {
	c.mu.Lock()
	out, ok := c.outsider[topic]
	c.mu.Unlock()
	if ok {
		return out
	}
	if !strings.Contains(topic, "-partition-") {
		if n, err := c.Broker.PartitionedMetadata(topic); err == nil && n > 0 {
			return ""
		}
	}
	return c.OwnerOf(topic).WebURL
}

// topicOfPath reads {domain}/{tenant}/{namespace}/{topic}[/...] into a full topic name; false
// for namespace-level paths and for the calls every broker serves from the metadata store.
func topicOfPath(rest string) (string, bool) {
	parts := strings.Split(rest, "/")
	if len(parts) < 4 || (parts[0] != "persistent" && parts[0] != "non-persistent") || parts[3] == "" {
		return "", false
	}
	if len(parts) == 4 && parts[3] == "partitioned" { // the namespace's partitioned topics
		return "", false
	}
	if len(parts) >= 5 {
		switch parts[4] {
		case "partitions", "partitioned-stats", "partitioned-internalStats":
			return "", false
		}
	}
	return parts[0] + "://" + parts[1] + "/" + parts[2] + "/" + parts[3], true
}

// isBrokersOfCluster matches /admin/v2/brokers/{cluster}.
func isBrokersOfCluster(p string) bool {
	rest, ok := strings.CutPrefix(p, "/admin/v2/brokers/")
	if !ok || rest == "" || strings.Contains(rest, "/") {
		return false
	}
	switch rest {
	case "health", "leaderBroker", "configuration", "version", "ready", "backlog-quota-check":
		return false
	}
	return true
}

func hostPort(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		return u[i+3:]
	}
	return u
}
