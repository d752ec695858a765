package web

import (
	"net/http"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The HTTP lookup, /lookup/v2/topic/{domain}/{tenant}/{ns}/{topic}: every topic is served by
// this broker, at its binary-protocol URL and this server's URL. The topic need not exist
// when it may be auto-created (producers and consumers create it); otherwise it is not found
// (404 "Topic not found …"), as upstream answers.

func (s *Server) lookupRoutes(rt *router) {
	for _, d := range domains {
		rt.handle("GET /lookup/v2/topic/"+d+"/{tenant}/{namespace}/{topic}", func(w http.ResponseWriter, r *http.Request) {
			if !validPart(r.PathValue("tenant")) || !validPart(r.PathValue("namespace")) {
				writeError(w, http.StatusPreconditionFailed, "Invalid topic name")
				return
			}
			topic := d + "://" + r.PathValue("tenant") + "/" + r.PathValue("namespace") + "/" + r.PathValue("topic")
			if err := s.b.CheckLookup(topic); err != nil {
				writeAdminError(w, err)
				return
			}
			s.b.LoadTopic(topic) // a stored topic opens on its first lookup
			out := adminapi.LookupData{BrokerURL: s.b.ServiceURL(), HTTPURL: s.URL(), NativeURL: s.b.ServiceURL(),
				BrokerURLTLS: s.b.ServiceURLTLS(), HTTPURLTLS: s.URLTLS()}
			if s.tlsOnly {
				out.HTTPURLTLS = out.HTTPURL
			}
			writeJSON(w, http.StatusOK, out)
		})
	}
}

func validPart(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '=', c == ':', c == '.':
		default:
			return false
		}
	}
	return true
}
