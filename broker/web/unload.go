package web

import "net/http"

// Unloading, as upstream's: a topic (…/{topic}/unload: every partition of a partitioned one),
// a namespace (/admin/v2/namespaces/{tenant}/{ns}/unload) or its bundle
// (…/{ns}/{bundle}/unload; a single broker has one bundle per namespace). Clients are closed
// with reconnect allowed and come back to the reloaded topic (broker/unload.go).
func (s *Server) unloadRoutes(rt *router) {
	s.topicRoute(rt, "PUT", "/unload", func(w http.ResponseWriter, r *http.Request, topic string) {
		noContent(w, s.b.UnloadTopic(topic))
	})
	const ns = nsPath
	rt.handle("PUT "+ns+"/unload", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.UnloadNamespace(nsName(r), ""))
	})
	rt.handle("PUT "+ns+"/{bundle}/unload", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, s.b.UnloadNamespace(nsName(r), r.PathValue("bundle")))
	})
}
