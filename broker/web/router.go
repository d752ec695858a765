package web

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// router is an http.ServeMux (method and path patterns, r.PathValue) whose "no route" answers
// have upstream's JSON shape instead of ServeMux's plain text.
type router struct {
	mux *http.ServeMux
}

func newRouter() *router { return &router{mux: http.NewServeMux()} }

// handle registers h for pattern, in ServeMux syntax: "GET /admin/v2/clusters/{cluster}".
// A GET route answers HEAD too.
func (rt *router) handle(pattern string, h http.HandlerFunc) { rt.mux.HandleFunc(pattern, h) }

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := rt.mux.Handler(r); pattern != "" {
		// A route (or ServeMux's redirect to the canonical path). ServeHTTP matches again,
		// which is what sets r.PathValue.
		rt.mux.ServeHTTP(w, r)
		return
	}
	// No route. ServeMux knows whether the path exists for another method: let its own handler
	// decide, then answer that status in upstream's shape.
	rec := &headerRecorder{header: make(http.Header)}
	h, _ := rt.mux.Handler(r)
	h.ServeHTTP(rec, r)
	if rec.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", rec.header.Get("Allow"))
		writeError(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
		return
	}
	writeNotFound(w)
}

// writeNotFound answers a path nothing serves, in upstream's (Jersey's) words.
func writeNotFound(w http.ResponseWriter) { writeError(w, http.StatusNotFound, "HTTP 404 Not Found") }

// headerRecorder captures the status and headers a handler writes and discards the body.
type headerRecorder struct {
	header http.Header
	status int
}

func (r *headerRecorder) Header() http.Header { return r.header }

func (r *headerRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *headerRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return len(p), nil
}

// writeError answers status with upstream's error shape.
func writeError(w http.ResponseWriter, status int, reason string) {
	writeJSON(w, status, adminapi.ErrorData{Reason: reason})
}

// writeJSON answers status with v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	// As upstream's Jackson writes it: <, > and & as they are, not as \u003c and the like.
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only a programming error (an unencodable type) gets here.
		status = http.StatusInternalServerError
		body.Reset()
		_ = enc.Encode(adminapi.ErrorData{Reason: "encoding the response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(bytes.TrimSuffix(body.Bytes(), []byte("\n"))) // the newline Encode adds
}

// writeText answers 200 with a plain-text body, as upstream's health check does.
func writeText(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(text))
}
