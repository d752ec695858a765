package auth

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// Upstream's provider class names, as authenticationProviders lists them.
const (
	ClassToken = "org.apache.pulsar.broker.authentication.AuthenticationProviderToken"
	ClassTLS   = "org.apache.pulsar.broker.authentication.AuthenticationProviderTls"
	ClassBasic = "org.apache.pulsar.broker.authentication.AuthenticationProviderBasic"
)

// MethodOf maps a provider class name to its auth method name; ok is false for a class
// letterbox does not implement.
func MethodOf(class string) (string, bool) {
	switch class {
	case ClassToken:
		return MethodToken, true
	case ClassTLS:
		return MethodTLS, true
	case ClassBasic:
		return MethodBasic, true
	}
	return "", false
}

// Credentials are what one client presents: CONNECT's method and data, or an HTTP request's,
// and the certificate chain its TLS handshake verified (nil on a plain connection).
type Credentials struct {
	Method string
	Data   []byte
	Certs  []*x509.Certificate
}

// Service is upstream's AuthenticationService: the configured providers by method name, and
// the role given to clients that present none of their credentials (anonymousUserRole).
type Service struct {
	Token     *TokenProvider
	Basic     *BasicProvider
	TLS       bool
	Anonymous string
	order     []string // methods in the configured order, for HTTP
}

// NewService returns a service with the providers of methods, in the order HTTP requests try
// them; token and basic are the providers of those methods, when listed.
func NewService(methods []string, token *TokenProvider, basic *BasicProvider, anonymous string) (*Service, error) {
	s := &Service{Anonymous: anonymous}
	seen := map[string]bool{}
	for _, m := range methods {
		if seen[m] {
			continue
		}
		seen[m] = true
		switch m {
		case MethodToken:
			if token == nil {
				return nil, errors.New("the token provider needs tokenSecretKey or tokenPublicKey")
			}
			s.Token = token
		case MethodBasic:
			if basic == nil {
				return nil, errors.New("the basic provider needs basicAuthConf")
			}
			s.Basic = basic
		case MethodTLS:
			s.TLS = true
		default:
			return nil, fmt.Errorf("%w: %q", ErrUnknownMethod, m)
		}
		s.order = append(s.order, m)
	}
	return s, nil
}

// Has reports whether method has a provider.
func (s *Service) Has(method string) bool {
	switch method {
	case MethodToken:
		return s.Token != nil
	case MethodBasic:
		return s.Basic != nil
	case MethodTLS:
		return s.TLS
	}
	return false
}

// Methods are the configured methods in order.
func (s *Service) Methods() []string { return append([]string(nil), s.order...) }

// Authenticate checks c with the provider of c.Method. The caller decides what a method
// without a provider means (the binary protocol: the anonymous role).
func (s *Service) Authenticate(c Credentials) (Principal, error) {
	switch {
	case c.Method == MethodToken && s.Token != nil:
		return s.Token.Authenticate(string(c.Data))
	case c.Method == MethodBasic && s.Basic != nil:
		return s.Basic.Authenticate(c.Data)
	case c.Method == MethodTLS && s.TLS:
		return TLSRole(c.Certs)
	}
	return Principal{}, ErrUnknownMethod
}

// Connect authenticates a binary-protocol CONNECT as upstream's ServerCnx: a method with a
// provider must succeed; any other method (none given included) gets the anonymous role when
// one is configured and is refused otherwise. anonymous says the role is the anonymous one.
func (s *Service) Connect(c Credentials) (pr Principal, anonymous bool, err error) {
	if s.Has(c.Method) {
		pr, err = s.Authenticate(c)
		return pr, false, err
	}
	if s.Anonymous != "" {
		return Principal{Role: s.Anonymous}, true, nil
	}
	if c.Method == "" || c.Method == "none" {
		return Principal{}, false, ErrNoCredentials
	}
	return Principal{}, false, ErrUnknownMethod
}

// HTTPCredentials are an admin request's: its Authorization header values, the
// X-Pulsar-Auth-Method-Name header (empty when absent) and the verified client certificates.
type HTTPCredentials struct {
	Authorization []string
	Method        string
	Certs         []*x509.Certificate
}

// HTTP authenticates an admin request as upstream's AuthenticationService does: with the
// method the request names, that method's provider alone; otherwise each provider in turn, the
// first that accepts wins, and when none does, the anonymous role if configured. The error of
// a refusal is the last provider's (for the log), or ErrNoCredentials.
func (s *Service) HTTP(h HTTPCredentials) (Principal, error) {
	if h.Method != "" {
		if !s.Has(h.Method) {
			return Principal{}, ErrUnknownMethod
		}
		return s.httpWith(h.Method, h)
	}
	err := ErrNoCredentials
	for _, m := range s.order {
		pr, e := s.httpWith(m, h)
		if e == nil {
			return pr, nil
		}
		if !errors.Is(e, ErrNoCredentials) {
			err = e
		}
	}
	if s.Anonymous != "" {
		return Principal{Role: s.Anonymous}, nil
	}
	return Principal{}, err
}

func (s *Service) httpWith(method string, h HTTPCredentials) (Principal, error) {
	switch method {
	case MethodTLS:
		if len(h.Certs) == 0 {
			return Principal{}, ErrNoCredentials
		}
		return TLSRole(h.Certs)
	case MethodToken, MethodBasic:
		if len(h.Authorization) != 1 {
			return Principal{}, ErrNoCredentials
		}
		var data []byte
		var ok bool
		if method == MethodToken {
			var tok string
			tok, ok = BearerFromHeader(h.Authorization[0])
			data = []byte(tok)
		} else {
			data, ok = BasicFromHeader(h.Authorization[0])
		}
		if !ok {
			return Principal{}, ErrNoCredentials
		}
		return s.Authenticate(Credentials{Method: method, Data: data})
	}
	return Principal{}, ErrUnknownMethod
}

// BearerFromHeader returns the token of an HTTP "Authorization: Bearer <token>" value.
func BearerFromHeader(v string) (string, bool) {
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
