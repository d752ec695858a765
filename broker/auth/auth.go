// Package auth holds the broker's security mechanisms, kept apart from the protocol so they can
// be tested (and fuzzed) on their own: upstream's authentication providers — token (JWTs signed
// HS256/384/512 with a secret key, or RS256/384/512 or ES256/384/512 with a public key; the role
// is the `sub` claim), TLS (the role is the client certificate's common name) and basic (an
// htpasswd file, apr1 or crypt hashes) — and the service that picks among them with an
// anonymous role (service.go), key loading in upstream's forms (file:///path,
// data:;base64,...), the token tools behind `letterbox token`, and upstream's authorization
// rules (superusers, tenant admin roles, namespace and topic permissions).
//
// The package knows nothing of connections, HTTP or the broker's state: the broker hands it
// credentials and the policies of one namespace, and it answers with a role or a decision.
//
// Secrets: no error or log message of this package contains a token or a key. Errors say what
// is wrong (expired, bad signature, ...) and never quote the credentials.
package auth

import (
	"errors"
	"time"
)

// MethodToken is the auth method name of upstream's token provider, as clients send it in
// CONNECT.auth_method_name.
const MethodToken = "token"

// Why credentials were refused. Every error Authenticate returns wraps exactly one of them.
var (
	ErrNoCredentials  = errors.New("no credentials")
	ErrUnknownMethod  = errors.New("unsupported authentication method")
	ErrMalformedToken = errors.New("malformed token")
	ErrExpiredToken   = errors.New("token expired or not yet valid")
	ErrBadSignature   = errors.New("token signature does not verify")
	ErrAlgorithm      = errors.New("token signing algorithm not accepted for the configured key")
	ErrNoRole         = errors.New("token has no role claim")
	ErrInvalidKey     = errors.New("invalid key")
	ErrTokenTooLarge  = errors.New("token too large")
	errBothKeys       = errors.New("both a secret key and a public key are configured; set one")
	errNoKey          = errors.New("token authentication needs a secret key or a public key")
)

// Principal is who authenticated credentials belong to.
type Principal struct {
	Role string
	// Expires is when the credentials stop being valid; zero means never.
	Expires time.Time
}
