package web

import (
	"net/http"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The schemas resource: /admin/v2/schemas/{tenant}/{ns}/{topic}/...: schema (latest; POST
// registers, DELETE removes every version), schema/{version}, schemas (all versions), version
// (the version of a given schema) and compatibility.

func toSchemaJSON(si broker.SchemaInfo) adminapi.GetSchemaResponse {
	data := string(si.Data)
	if si.Type == "KEY_VALUE" {
		if kv, ok := broker.KeyValueSchemaJSON(si.Data); ok {
			data = kv
		}
	}
	return adminapi.GetSchemaResponse{Version: si.Version, Type: si.Type, Timestamp: si.Timestamp, Data: data, Properties: si.Properties}
}

func (s *Server) schemaRoutes(rt *router) {
	const base = "/admin/v2/schemas/{tenant}/{namespace}/{topic}"
	topic := func(r *http.Request) string {
		return "persistent://" + r.PathValue("tenant") + "/" + r.PathValue("namespace") + "/" + r.PathValue("topic")
	}
	rt.handle("GET "+base+"/schema", func(w http.ResponseWriter, r *http.Request) {
		si, err := s.b.Schema(topic(r), -1)
		answer(w, toSchemaJSON(si), err)
	})
	rt.handle("GET "+base+"/schema/{version}", func(w http.ResponseWriter, r *http.Request) {
		if v, ok := pathInt(w, r, "version"); ok {
			if v < 0 {
				writeError(w, http.StatusBadRequest, "Schema version must not be negative")
				return
			}
			si, err := s.b.Schema(topic(r), v)
			answer(w, toSchemaJSON(si), err)
		}
	})
	rt.handle("GET "+base+"/schemas", func(w http.ResponseWriter, r *http.Request) {
		all, err := s.b.Schemas(topic(r))
		out := adminapi.GetAllVersionsSchemaResponse{GetSchemaResponses: []adminapi.GetSchemaResponse{}}
		for _, si := range all {
			out.GetSchemaResponses = append(out.GetSchemaResponses, toSchemaJSON(si))
		}
		answer(w, out, err)
	})
	body := func(w http.ResponseWriter, r *http.Request) (broker.SchemaInfo, bool) {
		var p adminapi.PostSchemaPayload
		if _, ok := decodeBody(w, r, &p, false); !ok {
			return broker.SchemaInfo{}, false
		}
		return broker.SchemaInfo{Type: p.Type, Data: []byte(p.Schema), Properties: p.Properties}, true
	}
	rt.handle("POST "+base+"/schema", func(w http.ResponseWriter, r *http.Request) {
		if si, ok := body(w, r); ok {
			v, err := s.b.CreateSchema(topic(r), si)
			answer(w, adminapi.PostSchemaResponse{Version: adminapi.LongSchemaVersion{Version: v}}, err)
		}
	})
	rt.handle("DELETE "+base+"/schema", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := queryBool(w, r, "force"); ok {
			err := s.b.DeleteSchema(topic(r))
			answer(w, adminapi.DeleteSchemaResponse{}, err)
		}
	})
	rt.handle("POST "+base+"/version", func(w http.ResponseWriter, r *http.Request) {
		if si, ok := body(w, r); ok {
			v, err := s.b.SchemaVersionOf(topic(r), si)
			answer(w, adminapi.LongSchemaVersion{Version: v}, err)
		}
	})
	rt.handle("POST "+base+"/compatibility", func(w http.ResponseWriter, r *http.Request) {
		if si, ok := body(w, r); ok {
			compatible, strategy, err := s.b.SchemaCompatibility(topic(r), si)
			answer(w, adminapi.IsCompatibilityResponse{Compatible: compatible, Strategy: strategy}, err)
		}
	})
}
