// Package oauth2test is an OAuth2 authorization server for tests: OpenID discovery and a
// client-credentials token endpoint that issues short-lived RS256 JWTs whose subject is the
// client's role, so a broker configured with its public key (tokenPublicKey) accepts them.
// Test code only: no package of the binary imports it.
package oauth2test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Issuer is a running authorization server on 127.0.0.1, stopped when the test ends.
type Issuer struct {
	// URL is the issuer URL (no path): discovery is at URL/.well-known/openid-configuration.
	URL string
	// PublicKeyFile is the PEM public key its tokens verify with.
	PublicKeyFile string

	key      *rsa.PrivateKey
	lifetime time.Duration

	mu       sync.Mutex
	clients  map[string]client
	requests []url.Values // the token requests' forms, in order
	basic    int          // token requests that carried an Authorization header
	issued   int
	delay    time.Duration
}

type client struct{ secret, role string }

// Start starts an issuer whose tokens live for lifetime (whole seconds: a JWT's exp is one).
func Start(t testing.TB, lifetime time.Duration) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubFile := filepath.Join(t.TempDir(), "issuer.pub.pem")
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	is := &Issuer{PublicKeyFile: pubFile, key: key, lifetime: lifetime, clients: map[string]client{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", is.discovery)
	mux.HandleFunc("POST /oauth/token", is.token)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

// AddClient registers a client whose tokens carry role as their subject.
func (is *Issuer) AddClient(id, secret, role string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.clients[id] = client{secret: secret, role: role}
}

// SetDelay makes the token endpoint wait d before it answers.
func (is *Issuer) SetDelay(d time.Duration) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.delay = d
}

// Issued is how many tokens the issuer has issued.
func (is *Issuer) Issued() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.issued
}

// Requests are the forms of the token requests received, in order.
func (is *Issuer) Requests() []url.Values {
	is.mu.Lock()
	defer is.mu.Unlock()
	return append([]url.Values(nil), is.requests...)
}

// BasicAuthRequests is how many token requests carried an Authorization header.
func (is *Issuer) BasicAuthRequests() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.basic
}

// CredentialsJSON is a credentials document as upstream's clients read it.
func CredentialsJSON(id, secret, issuerURL string) []byte {
	doc := map[string]string{"type": "client_credentials", "client_id": id, "client_secret": secret}
	if issuerURL != "" {
		doc["issuer_url"] = issuerURL
	}
	b, _ := json.Marshal(doc)
	return b
}

// CredentialsFile writes a credentials document into a temporary file and returns its path.
func CredentialsFile(t testing.TB, id, secret, issuerURL string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(path, CredentialsJSON(id, secret, issuerURL), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (is *Issuer) discovery(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"issuer":                                is.URL,
		"token_endpoint":                        is.URL + "/oauth/token",
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post"},
	})
}

func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	is.mu.Lock()
	is.requests = append(is.requests, r.PostForm)
	if r.Header.Get("Authorization") != "" {
		is.basic++
	}
	c, ok := is.clients[r.PostForm.Get("client_id")]
	delay := is.delay
	is.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case r.PostForm.Get("grant_type") != "client_credentials":
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "only client_credentials")
		return
	case !ok || c.secret != r.PostForm.Get("client_secret"):
		oauthError(w, http.StatusUnauthorized, "invalid_client", "Invalid client credentials")
		return
	}
	now := time.Now()
	exp := now.Add(is.lifetime).Unix()
	claims := map[string]any{"sub": c.role, "iss": is.URL, "iat": now.Unix(), "exp": exp}
	if aud := r.PostForm.Get("audience"); aud != "" {
		claims["aud"] = aud
	}
	tok, err := is.sign(claims)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	is.mu.Lock()
	is.issued++
	is.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	// expires_in rounds down what is left until exp, as a careful issuer does: a client that
	// trusts it never holds a token the broker already finds expired.
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": int64(time.Until(time.Unix(exp, 0)) / time.Second),
	})
}

func (is *Issuer) sign(claims map[string]any) (string, error) {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(body)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, is.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}
