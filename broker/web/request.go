package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/letterbox-dev/letterbox/broker"
)

// Request helpers shared by the resource files: bodies (size-limited, JSON), query
// parameters, and the mapping of the broker's admin errors to upstream's status codes.

// readBody reads the request body (admit bounds its size), answering 413 when it is too big
// and 408 when the client stopped sending it (the read timeout), and returning ok=false then.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		var netErr net.Error
		switch {
		case errors.As(err, &tooBig):
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body larger than %d bytes", tooBig.Limit))
		case errors.As(err, &netErr) && netErr.Timeout():
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, "Timed out reading the request body")
		default:
			writeError(w, http.StatusBadRequest, "Cannot read the request body: "+err.Error())
		}
		return nil, false
	}
	return bytes.TrimSpace(body), true
}

// decodeBody decodes a JSON body into v, as upstream's Jackson reads it (jackson.go). An absent body (or the literal null) leaves v alone
// and reports present=false; it is an error (400) unless optional. Malformed JSON and wrong
// types are 400, as upstream.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool) (present, ok bool) {
	body, ok := readBody(w, r)
	if !ok {
		return false, false
	}
	if len(body) == 0 || string(body) == "null" {
		if !optional {
			writeError(w, http.StatusBadRequest, "Request body is required")
			return false, false
		}
		return false, true
	}
	if err := unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid request body: "+err.Error())
		return false, false
	}
	return true, true
}

// queryBool reads a boolean query parameter (absent: false); a bad value answers 400.
func queryBool(w http.ResponseWriter, r *http.Request, name string) (value, ok bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, true
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid value %q for query parameter %s", s, name))
		return false, false
	}
	return v, true
}

// pathInt reads an integer path segment; a bad value answers 400 (upstream: 404 for a path
// that does not parse; 400 says more).
func pathInt(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	s := r.PathValue(name)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid value %q for %s: want an integer", s, name))
		return 0, false
	}
	return v, true
}

// writeAdminError answers err from the broker's admin API with upstream's status and reason.
func writeAdminError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	for _, m := range []struct {
		kind   error
		status int
	}{
		{broker.ErrNotFound, http.StatusNotFound},
		{broker.ErrAlreadyExists, http.StatusConflict},
		{broker.ErrConflict, http.StatusConflict},
		{broker.ErrPreconditionFailed, http.StatusPreconditionFailed},
		{broker.ErrInvalidName, http.StatusPreconditionFailed},
		{broker.ErrNotAllowed, http.StatusMethodNotAllowed},
		{broker.ErrInvalidArgument, http.StatusBadRequest},
		{broker.ErrNotAcceptable, http.StatusNotAcceptable},
		{broker.ErrUnprocessable, http.StatusUnprocessableEntity},
		{broker.ErrForbidden, http.StatusForbidden},
	} {
		if errors.Is(err, m.kind) {
			status = m.status
			break
		}
	}
	writeError(w, status, err.Error())
}

// answer writes v as JSON, or err as upstream's error.
func answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeAdminError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// noContent answers 204, or err.
func noContent(w http.ResponseWriter, err error) {
	if err != nil {
		writeAdminError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// okEmpty answers 200 with no body, or err: upstream's Response.ok() of operations that
// return nothing (most answer 204; a few, such as the dynamic configuration's, 200).
func okEmpty(w http.ResponseWriter, err error) {
	if err != nil {
		writeAdminError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
