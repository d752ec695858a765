// Package client is letterbox's Pulsar client: producers, consumers and readers speaking the
// Pulsar binary protocol (through package wire), with DLQ and retry routing that matches the
// official Go client's topic names and message properties.
//
// Design rules: every blocking call takes a context; nothing calls back into user code; no
// panics; every goroutine is owned by a Client, connection, Producer, Consumer or Reader and
// stops when its owner is closed. Errors are typed: *ServerError for the broker's errors,
// *BrokerClosedError when the broker closed a producer or consumer for good, and sentinels
// (ErrClosed, ErrTimeout, ...) for the rest, all usable with errors.Is and errors.As.
package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Client is a connection pool to a Pulsar service plus the producers, consumers and readers
// created from it. It is safe for concurrent use. Close it when done.
type Client struct {
	opts    Options
	log     *slog.Logger
	service string
	pool    *pool
	schemas *schemaCache
	codecs  *codecs

	reqID, producerID, consumerID atomic.Uint64

	mu      sync.Mutex
	closed  bool
	handles map[closer]struct{}
}

// closer is anything Client.Close must close: producers, consumers, readers.
type closer interface{ closeForClient() }

// New creates a client. It does not connect until the first request.
func New(opts Options) (*Client, error) {
	opts.setDefaults()
	su, err := parseServiceURL(opts.ServiceURL)
	if err != nil {
		return nil, err
	}
	if opts.TokenSource != nil && (opts.Token != "" || opts.TokenFile != "") {
		return nil, fmt.Errorf("%w: TokenSource excludes Token and TokenFile", ErrInvalidConfig)
	}
	if opts.TLSCertFile != "" || opts.TLSKeyFile != "" {
		if _, err := LoadClientCertificate(opts.TLSCertFile, opts.TLSKeyFile); err != nil {
			return nil, err
		}
	}
	cl := &Client{
		opts:    opts,
		log:     opts.Logger,
		service: su.String(),
		handles: make(map[closer]struct{}),
	}
	cl.pool = newPool(cl)
	cl.schemas = newSchemaCache()
	cl.codecs = &codecs{}
	return cl, nil
}

// Close closes every producer, consumer and reader of the client, then its connections, and
// waits for their goroutines. It is safe to call more than once.
func (cl *Client) Close() error {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil
	}
	cl.closed = true
	hs := make([]closer, 0, len(cl.handles))
	for h := range cl.handles {
		hs = append(hs, h)
	}
	cl.mu.Unlock()
	for _, h := range hs {
		h.closeForClient()
	}
	cl.pool.close()
	cl.codecs.close()
	return nil
}

// Connections is how many connections to brokers the client holds open.
func (cl *Client) Connections() int { return cl.pool.count() }

func (cl *Client) register(h closer) error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.closed {
		return ErrClosed
	}
	cl.handles[h] = struct{}{}
	return nil
}

func (cl *Client) unregister(h closer) {
	cl.mu.Lock()
	delete(cl.handles, h)
	cl.mu.Unlock()
}

func (cl *Client) isClosed() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.closed
}

func (cl *Client) nextRequestID() uint64  { return cl.reqID.Add(1) - 1 }
func (cl *Client) nextProducerID() uint64 { return cl.producerID.Add(1) - 1 }
func (cl *Client) nextConsumerID() uint64 { return cl.consumerID.Add(1) - 1 }

func (cl *Client) clientVersion() string {
	v := "letterbox-" + Version
	if cl.opts.ClientVersionSuffix != "" {
		v += "-" + cl.opts.ClientVersionSuffix
	}
	return v
}

// credentials returns the auth method name and data for CONNECT and AUTH_RESPONSE. A token
// file is read, and a token source asked, on every call, so a rotated token is picked up on the
// next (re)connect. expired is the token the broker challenged ("" on CONNECT): a token source
// that still hands it out is told to refresh, when it can.
func (cl *Client) credentials(ctx context.Context, expired string) (string, []byte, error) {
	switch {
	case cl.opts.TokenSource != nil:
		ts := cl.opts.TokenSource
		tok, err := ts.Token(ctx)
		if r, ok := ts.(TokenRefresher); ok && err == nil && expired != "" && tok == expired {
			tok, err = r.Refresh(ctx)
		}
		if err != nil {
			return "", nil, fmt.Errorf("%w: %w", ErrCredentials, err)
		}
		return "token", []byte(tok), nil
	case cl.opts.TokenFile != "":
		b, err := os.ReadFile(cl.opts.TokenFile)
		if err != nil {
			return "", nil, fmt.Errorf("%w: token file: %w", ErrInvalidConfig, err)
		}
		return "token", []byte(strings.TrimSpace(string(b))), nil
	case cl.opts.Token != "":
		return "token", []byte(cl.opts.Token), nil
	case cl.opts.AuthMethod != "":
		return cl.opts.AuthMethod, cl.opts.AuthData, nil
	case cl.opts.TLSCertFile != "":
		// The certificate is the credential; CONNECT names the method that reads it.
		return "tls", nil, nil
	}
	return "", nil, nil
}

func (cl *Client) tlsConfig(host string) (*tls.Config, error) {
	var tc *tls.Config
	if cl.opts.TLSConfig != nil {
		tc = cl.opts.TLSConfig.Clone()
	} else {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if tc.ServerName == "" {
		tc.ServerName = host
	}
	if cl.opts.TLSAllowInsecureConnection {
		tc.InsecureSkipVerify = true
	}
	if cl.opts.TLSTrustCertsFile != "" && tc.RootCAs == nil {
		pem, err := os.ReadFile(cl.opts.TLSTrustCertsFile)
		if err != nil {
			return nil, fmt.Errorf("%w: tls trust certs: %w", ErrInvalidConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: tls trust certs: no certificate in %s", ErrInvalidConfig, cl.opts.TLSTrustCertsFile)
		}
		tc.RootCAs = pool
	}
	if cl.opts.TLSCertFile != "" {
		certFile, keyFile := cl.opts.TLSCertFile, cl.opts.TLSKeyFile
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return LoadClientCertificate(certFile, keyFile)
		}
	}
	return tc, nil
}

// LoadClientCertificate reads a PEM client certificate and its key, with errors that name the
// files (never the key). Client.New checks the pair with it; the admin client's TLS settings
// can use it too.
func LoadClientCertificate(certFile, keyFile string) (*tls.Certificate, error) {
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("%w: a TLS client certificate needs both the certificate and the key file", ErrInvalidConfig)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: TLS client certificate %s and key %s: %w", ErrInvalidConfig, certFile, keyFile, err)
	}
	return &pair, nil
}

// useTLS reports whether the service URL asks for TLS, which also picks the TLS URLs of
// lookup answers.
func (cl *Client) useTLS() bool { return strings.HasPrefix(cl.service, "pulsar+ssl://") }

type serviceURL struct {
	tls      bool
	host     string
	hostport string
}

func (u serviceURL) String() string {
	if u.tls {
		return "pulsar+ssl://" + u.hostport
	}
	return "pulsar://" + u.hostport
}

// parseServiceURL accepts pulsar://host[:port] and pulsar+ssl://host[:port]; a list of hosts
// uses the first one.
func parseServiceURL(s string) (serviceURL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return serviceURL{}, fmt.Errorf("%w: service URL %q", ErrInvalidConfig, s)
	}
	var out serviceURL
	port := "6650"
	switch u.Scheme {
	case "pulsar":
	case "pulsar+ssl":
		out.tls = true
		port = "6651"
	default:
		return serviceURL{}, fmt.Errorf("%w: service URL %q: want pulsar:// or pulsar+ssl://", ErrInvalidConfig, s)
	}
	hostport, _, _ := strings.Cut(u.Host, ",")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
		p = port
	}
	out.host = host
	out.hostport = net.JoinHostPort(host, p)
	return out, nil
}
