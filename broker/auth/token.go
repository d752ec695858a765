package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MaxTokenSize bounds the credentials parsed, so a huge auth_data or header costs nothing.
const MaxTokenSize = 16 << 10

// SecretKeySize is the size of the keys NewSecretKey makes, and the smallest secret key
// accepted: upstream (jjwt) refuses HMAC keys under 256 bits.
const SecretKeySize = 32

// minRSABits is the smallest RSA public key accepted, as upstream (jjwt) requires.
const minRSABits = 2048

// TokenConfig configures a TokenProvider. Exactly one of SecretKey and PublicKey is set.
type TokenConfig struct {
	// SecretKey is the raw HMAC key (upstream tokenSecretKey, after loading).
	SecretKey []byte
	// PublicKey is an RSA or EC public key, DER (X.509 SubjectPublicKeyInfo, what upstream's
	// `tokens create-key-pair` writes) or PEM (upstream tokenPublicKey, after loading).
	PublicKey []byte
	// AuthClaim is the claim holding the role; default "sub" (upstream tokenAuthClaim).
	AuthClaim string
	// Now is the clock expiry is checked against; default time.Now.
	Now func() time.Time
}

// TokenProvider verifies tokens as upstream's AuthenticationProviderToken does.
type TokenProvider struct {
	key     any
	methods []string
	claim   string
	parser  *jwt.Parser
}

// NewTokenProvider checks the key and returns a provider for it. A key of a type or size that
// no accepted algorithm can use is an error wrapping ErrInvalidKey.
func NewTokenProvider(cfg TokenConfig) (*TokenProvider, error) {
	p := &TokenProvider{claim: cfg.AuthClaim}
	if p.claim == "" {
		p.claim = "sub"
	}
	switch {
	case len(cfg.SecretKey) > 0 && len(cfg.PublicKey) > 0:
		return nil, errBothKeys
	case len(cfg.SecretKey) > 0:
		if looksLikePEM(cfg.SecretKey) {
			return nil, fmt.Errorf("%w: the secret key is a PEM document; a public key belongs in tokenPublicKey", ErrInvalidKey)
		}
		if len(cfg.SecretKey) < SecretKeySize {
			return nil, fmt.Errorf("%w: secret key of %d bits; HS256 needs at least 256", ErrInvalidKey, 8*len(cfg.SecretKey))
		}
		p.key = append([]byte(nil), cfg.SecretKey...)
		// Each HMAC algorithm needs a key at least as long as its hash, as in jjwt.
		p.methods = []string{"HS256"}
		if len(cfg.SecretKey) >= 48 {
			p.methods = append(p.methods, "HS384")
		}
		if len(cfg.SecretKey) >= 64 {
			p.methods = append(p.methods, "HS512")
		}
	case len(cfg.PublicKey) > 0:
		pub, err := ParsePublicKey(cfg.PublicKey)
		if err != nil {
			return nil, err
		}
		switch k := pub.(type) {
		case *rsa.PublicKey:
			if k.N.BitLen() < minRSABits {
				return nil, fmt.Errorf("%w: RSA key of %d bits; at least %d needed", ErrInvalidKey, k.N.BitLen(), minRSABits)
			}
			p.methods = []string{"RS256", "RS384", "RS512"}
		case *ecdsa.PublicKey:
			switch k.Curve {
			case elliptic.P256():
				p.methods = []string{"ES256"}
			case elliptic.P384():
				p.methods = []string{"ES384"}
			case elliptic.P521():
				p.methods = []string{"ES512"}
			default:
				return nil, fmt.Errorf("%w: unsupported elliptic curve", ErrInvalidKey)
			}
		}
		p.key = pub
	default:
		return nil, errNoKey
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	p.parser = jwt.NewParser(jwt.WithValidMethods(p.methods), jwt.WithTimeFunc(now))
	return p, nil
}

// Methods are the signing algorithms the provider accepts, by JWT name.
func (p *TokenProvider) Methods() []string { return append([]string(nil), p.methods...) }

// Authenticate verifies token and returns its principal. The error wraps one of the Err*
// sentinels of this package and never contains the token.
func (p *TokenProvider) Authenticate(token string) (Principal, error) {
	switch {
	case token == "":
		return Principal{}, ErrNoCredentials
	case len(token) > MaxTokenSize:
		return Principal{}, ErrTokenTooLarge
	}
	claims := jwt.MapClaims{}
	tok, err := p.parser.ParseWithClaims(token, claims, p.keyFor)
	if err != nil {
		if tok != nil && tok.Method != nil && !slices.Contains(p.methods, tok.Method.Alg()) {
			return Principal{}, ErrAlgorithm
		}
		return Principal{}, classify(err)
	}
	role, _ := claims[p.claim].(string)
	if role == "" {
		return Principal{}, ErrNoRole
	}
	var pr Principal
	pr.Role = role
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		pr.Expires = exp.Time
	}
	return pr, nil
}

// keyFor hands the parser the configured key, but only for an algorithm of the key's family:
// WithValidMethods already refuses the others; this second check keeps a key from ever being
// used by the wrong algorithm (an HMAC "signed" with a public key, alg none).
func (p *TokenProvider) keyFor(t *jwt.Token) (any, error) {
	if !slices.Contains(p.methods, t.Method.Alg()) {
		return nil, ErrAlgorithm
	}
	switch t.Method.(type) {
	case *jwt.SigningMethodHMAC:
		if _, ok := p.key.([]byte); ok {
			return p.key, nil
		}
	case *jwt.SigningMethodRSA:
		if _, ok := p.key.(*rsa.PublicKey); ok {
			return p.key, nil
		}
	case *jwt.SigningMethodECDSA:
		if _, ok := p.key.(*ecdsa.PublicKey); ok {
			return p.key, nil
		}
	}
	return nil, ErrAlgorithm
}

// classify maps the JWT library's error to ours, dropping its text (which may quote claims).
func classify(err error) error {
	switch {
	case errors.Is(err, ErrAlgorithm), errors.Is(err, jwt.ErrTokenUnverifiable):
		// An alg that is unknown, none, or of another family than the key.
		return ErrAlgorithm
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return ErrBadSignature
	case errors.Is(err, jwt.ErrTokenExpired), errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return ErrExpiredToken
	}
	return ErrMalformedToken
}

// NewSecretKey returns a random HS256 key, raw bytes, as upstream's `tokens create-secret-key`.
func NewSecretKey() ([]byte, error) {
	key := make([]byte, SecretKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return key, nil
}

// CreateToken signs an HS256 token for subject with secret, as upstream's `tokens create`:
// claims sub and, when ttl > 0, exp = now + ttl.
func CreateToken(secret []byte, subject string, ttl time.Duration, now time.Time) (string, error) {
	if subject == "" {
		return "", errors.New("auth: a token needs a subject")
	}
	if len(secret) < SecretKeySize {
		return "", fmt.Errorf("%w: secret key of %d bits; HS256 needs at least 256", ErrInvalidKey, 8*len(secret))
	}
	claims := jwt.MapClaims{"sub": subject}
	if ttl > 0 {
		claims["exp"] = now.Add(ttl).Unix()
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}
