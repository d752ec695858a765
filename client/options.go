package client

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"
)

// Version is this library's version, announced to brokers as client_version "letterbox-<Version>".
const Version = "0.1.0"

// Options configure a Client. Only ServiceURL is required.
type Options struct {
	// ServiceURL is pulsar://host:port or pulsar+ssl://host:port.
	ServiceURL string
	// OperationTimeout bounds each request (lookup, subscribe, ...) whose ctx has no earlier
	// deadline. Default 30s.
	OperationTimeout time.Duration
	// ConnectionTimeout bounds dialling and the CONNECT handshake. Default 10s.
	ConnectionTimeout time.Duration
	// KeepAliveInterval is the PING period; a connection that received nothing for two
	// intervals is closed as stale. Default 30s.
	KeepAliveInterval time.Duration
	// Logger receives the client's logs; default slog.Default().
	Logger *slog.Logger

	// Token is a JWT sent with auth method "token". TokenFile names a file to read it from on
	// every (re)connect, so rotated tokens are picked up. AuthMethod/AuthData send any other
	// credentials verbatim.
	Token      string
	TokenFile  string
	AuthMethod string
	AuthData   []byte
	// TokenSource, instead of Token and TokenFile, supplies the token (auth method "token") on
	// every CONNECT and answers the broker's AUTH_CHALLENGE: tokens that expire and are renewed,
	// such as OAuth2 access tokens (package client/oauth2).
	TokenSource TokenSource

	// TLS: TLSTrustCertsFile is a PEM bundle of CAs; TLSAllowInsecureConnection skips
	// verification; TLSConfig, when set, is used as is (cloned) instead. TLSCertFile and
	// TLSKeyFile are a PEM client certificate and its key, presented on every TLS handshake
	// (read again on each, so a renewed pair is picked up) — upstream's AuthenticationTls:
	// without other credentials the client authenticates with auth method "tls", the role
	// being the certificate's common name.
	TLSTrustCertsFile          string
	TLSAllowInsecureConnection bool
	TLSConfig                  *tls.Config
	TLSCertFile                string
	TLSKeyFile                 string

	// ListenerName is sent as advertised_listener_name on lookups.
	ListenerName string
	// ClientVersionSuffix is appended to the announced client version.
	ClientVersionSuffix string
	// MaxConnectionsPerBroker; default 1.
	MaxConnectionsPerBroker int
}

// TokenSource supplies tokens. Token is asked on every CONNECT and AUTH_CHALLENGE (it caches
// as it sees fit), from the connection's own goroutines, so it must be safe for concurrent use
// and honour ctx.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// TokenRefresher is a TokenSource that can be told to renew its token now. When the broker
// challenges a connection (its credentials expired) and Token still returns the token that
// connection presented, Refresh is asked for a new one.
type TokenRefresher interface {
	TokenSource
	Refresh(ctx context.Context) (string, error)
}

func (o *Options) setDefaults() {
	if o.OperationTimeout <= 0 {
		o.OperationTimeout = 30 * time.Second
	}
	if o.ConnectionTimeout <= 0 {
		o.ConnectionTimeout = 10 * time.Second
	}
	if o.KeepAliveInterval <= 0 {
		o.KeepAliveInterval = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxConnectionsPerBroker <= 0 {
		o.MaxConnectionsPerBroker = 1
	}
}
