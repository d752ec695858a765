// Package web is the embedded broker's HTTP listener: upstream's admin REST v2 paths
// (/admin/v2/...) with upstream's JSON field names, so pulsar-admin, pulsarctl and the official
// Go pulsaradmin work against it unchanged. Beside them it serves the HTTP lookup, the broker's
// health, active brokers and dynamic configuration, and Prometheus /metrics.
//
// New starts a Server on a *broker.Broker. One table lists every route; each resource's handlers
// live together, apart from what every request goes through: authentication and authorization,
// the connection, request and body limits, reading bodies and query parameters, and mapping
// errors. Errors use upstream's shape, {"reason": "..."}, including 404 for unknown paths and 405
// for a known path with the wrong method. The package reaches the broker only through its
// exported API.
//
// The package can be imported, but it is not a stable API: pulsartest starts a broker with its
// admin API behind a stable one.
package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
)

// shutdownTimeout bounds how long Close waits for in-flight requests before cutting them off.
const shutdownTimeout = 5 * time.Second

// Server is the HTTP listener of one broker. Create it with New; Close stops it.
type Server struct {
	b   *broker.Broker
	log *slog.Logger
	ln  net.Listener
	// lnTLS is the https listener beside ln (webServicePortTls), or nil; tlsOnly says ln
	// itself speaks TLS (TLS on without a port of its own).
	lnTLS   net.Listener
	tlsOnly bool
	srv     *http.Server

	clients clients // who made requests lately (clients.go)

	served    sync.WaitGroup // done when srv.Serve has returned for every listener
	closeOnce sync.Once
	closeErr  error
}

// New listens on addr (host:port; port 0 picks a free port) and serves the admin API of b until
// Close. A nil log means slog.Default().
func New(b *broker.Broker, addr string, log *slog.Logger) (*Server, error) {
	if b == nil {
		return nil, errors.New("web: nil broker")
	}
	if log == nil {
		log = slog.Default()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("web: listen on %s: %w", addr, err)
	}
	cfg := b.Config()
	ln = newLimitListener(ln, cfg.MaxHTTPServerConnections) // limits.go
	s := &Server{b: b, log: log, clients: clients{now: time.Now}}
	// The broker's certificate (tls.go in broker): https:// beside http:// on
	// webServicePortTls, or instead of it without that port.
	if tc := b.TLSConfig(); tc != nil {
		if cfg.WebServicePortTLS == "" {
			ln, s.tlsOnly = tls.NewListener(ln, tc), true
		} else {
			host, _, _ := net.SplitHostPort(addr)
			raw, err := net.Listen("tcp", net.JoinHostPort(host, cfg.WebServicePortTLS))
			if err != nil {
				ln.Close()
				return nil, fmt.Errorf("web: listen on port %s (TLS): %w", cfg.WebServicePortTLS, err)
			}
			s.lnTLS = tls.NewListener(newLimitListener(raw, cfg.MaxHTTPServerConnections), tc)
		}
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler: s.recordClients(s.admit(s.logRequests(s.authenticate(s.routes())))),
		// A client that stalls is closed (limits.go): ReadTimeout covers the header and the
		// body of a request, WriteTimeout the answer (a client that does not read it would
		// hold its request slot), IdleTimeout the wait for the next one on a kept-alive
		// connection.
		ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout,
		ReadTimeout:       cfg.HTTPReadTimeout,
		WriteTimeout:      cfg.HTTPWriteTimeout,
		IdleTimeout:       cfg.HTTPIdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	for _, l := range []net.Listener{s.ln, s.lnTLS} {
		if l == nil {
			continue
		}
		s.served.Add(1)
		go func() {
			defer s.served.Done()
			if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("admin HTTP server stopped", "listener", l.Addr().String(), "err", err)
			}
		}()
	}
	return s, nil
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the base URL of the admin API, http://host:port (https:// when the broker has TLS on
// without a TLS port of its own).
func (s *Server) URL() string {
	if s.tlsOnly {
		return "https://" + s.Addr()
	}
	return "http://" + s.Addr()
}

// URLTLS is the base URL of the https listener beside the plain one, or "" when there is none.
func (s *Server) URLTLS() string {
	if s.lnTLS == nil {
		return ""
	}
	return "https://" + s.lnTLS.Addr().String()
}

// Close stops accepting, lets in-flight requests finish (for a few seconds at most, then cuts
// them off) and waits for the server to stop. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			s.log.Warn("admin HTTP server: requests still running at shutdown, closing them", "err", err)
			s.closeErr = s.srv.Close()
		}
		s.served.Wait()
	})
	return s.closeErr
}

// logRequests logs every request at debug level, with its status.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		s.log.Debug("admin request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"remote", r.RemoteAddr, "took", time.Since(start))
	})
}

// statusWriter remembers the status code written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer (flush, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
