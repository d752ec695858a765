package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return testNow }

func mustSecret(t testing.TB) []byte {
	t.Helper()
	k, err := NewSecretKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(t testing.TB, m jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pkix(t testing.TB, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// unsigned builds header.payload. with the given header, as an attacker would.
func unsigned(header, payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc([]byte(payload)) + "."
}

func TestSecretKeyTokens(t *testing.T) {
	secret := mustSecret(t)
	other := mustSecret(t)
	p, err := NewTokenProvider(TokenConfig{SecretKey: secret, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	exp := testNow.Add(time.Hour).Unix()
	past := testNow.Add(-time.Minute).Unix()

	good, err := CreateToken(secret, "alice", time.Hour, testNow)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		token string
		role  string
		want  error
	}{
		{"created by CreateToken", good, "alice", nil},
		{"no expiry", sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "bob"}), "bob", nil},
		{"expired", sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "bob", "exp": past}), "", ErrExpiredToken},
		{"not yet valid", sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "bob", "nbf": exp}), "", ErrExpiredToken},
		{"wrong secret", sign(t, jwt.SigningMethodHS256, other, jwt.MapClaims{"sub": "bob"}), "", ErrBadSignature},
		{"HS512 with a 256-bit key", sign(t, jwt.SigningMethodHS512, secret, jwt.MapClaims{"sub": "bob"}), "", ErrAlgorithm},
		{"RS256 to a secret-key broker", sign(t, jwt.SigningMethodRS256, rsaKey, jwt.MapClaims{"sub": "bob"}), "", ErrAlgorithm},
		{"alg none", unsigned(`{"alg":"none","typ":"JWT"}`, `{"sub":"root"}`), "", ErrAlgorithm},
		{"alg None", unsigned(`{"alg":"None"}`, `{"sub":"root"}`), "", ErrAlgorithm},
		{"alg missing", unsigned(`{"typ":"JWT"}`, `{"sub":"root"}`), "", ErrAlgorithm},
		{"alg unknown", unsigned(`{"alg":"HS1024"}`, `{"sub":"root"}`), "", ErrAlgorithm},
		{"no sub", sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"exp": exp}), "", ErrNoRole},
		{"empty sub", sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": ""}), "", ErrNoRole},
		{"numeric sub", sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": 42}), "", ErrNoRole},
		{"exp not a number", sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "x", "exp": "soon"}), "", ErrMalformedToken},
		{"empty", "", "", ErrNoCredentials},
		{"garbage", "not a token", "", ErrMalformedToken},
		{"two parts", "a.b", "", ErrMalformedToken},
		{"four parts", good + ".x", "", ErrMalformedToken},
		{"bad base64 header", "!!!." + strings.SplitN(good, ".", 2)[1], "", ErrMalformedToken},
		{"bearer prefix", "Bearer " + good, "", ErrMalformedToken},
		{"huge", strings.Repeat("a", MaxTokenSize+1), "", ErrTokenTooLarge},
		{"signature stripped", good[:strings.LastIndex(good, ".")+1], "", ErrBadSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := p.Authenticate(tc.token)
			if tc.want == nil {
				if err != nil || pr.Role != tc.role {
					t.Fatalf("Authenticate = %+v, %v; want role %q", pr, err, tc.role)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Authenticate error = %v; want %v", err, tc.want)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Fatalf("error %q quotes the token", err)
			}
		})
	}
	pr, _ := p.Authenticate(good)
	if !pr.Expires.Equal(time.Unix(testNow.Add(time.Hour).Unix(), 0)) {
		t.Errorf("Expires = %v", pr.Expires)
	}
}

func TestPublicKeyTokens(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	otherRSA, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsaDER := pkix(t, &rsaKey.PublicKey)
	ecPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix(t, &ecKey.PublicKey)})

	rp, err := NewTokenProvider(TokenConfig{PublicKey: rsaDER, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := NewTokenProvider(TokenConfig{PublicKey: ecPEM, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{"sub": "svc"}
	cases := []struct {
		name  string
		p     *TokenProvider
		token string
		want  error
	}{
		{"RS256", rp, sign(t, jwt.SigningMethodRS256, rsaKey, claims), nil},
		{"RS512", rp, sign(t, jwt.SigningMethodRS512, rsaKey, claims), nil},
		{"ES256", ep, sign(t, jwt.SigningMethodES256, ecKey, claims), nil},
		{"RS256 other key", rp, sign(t, jwt.SigningMethodRS256, otherRSA, claims), ErrBadSignature},
		// The classic confusion: HMAC keyed with the public key's bytes.
		{"HS256 keyed with the RSA public key", rp, sign(t, jwt.SigningMethodHS256, rsaDER, claims), ErrAlgorithm},
		{"HS256 keyed with the EC public key PEM", ep, sign(t, jwt.SigningMethodHS256, ecPEM, claims), ErrAlgorithm},
		{"ES256 to an RSA broker", rp, sign(t, jwt.SigningMethodES256, ecKey, claims), ErrAlgorithm},
		{"RS256 to an EC broker", ep, sign(t, jwt.SigningMethodRS256, rsaKey, claims), ErrAlgorithm},
		{"ES384 to a P-256 broker", ep, sign(t, jwt.SigningMethodES384, ec384, claims), ErrAlgorithm},
		{"PS256 to an RSA broker", rp, sign(t, jwt.SigningMethodPS256, rsaKey, claims), ErrAlgorithm},
		{"alg none", rp, unsigned(`{"alg":"none"}`, `{"sub":"root"}`), ErrAlgorithm},
		{"expired", rp, sign(t, jwt.SigningMethodRS256, rsaKey, jwt.MapClaims{"sub": "svc", "exp": testNow.Add(-time.Second).Unix()}), ErrExpiredToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := tc.p.Authenticate(tc.token)
			if tc.want == nil {
				if err != nil || pr.Role != "svc" {
					t.Fatalf("Authenticate = %+v, %v", pr, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v; want %v", err, tc.want)
			}
		})
	}
}

func TestNewTokenProviderRefusesKeys(t *testing.T) {
	rsaSmall, _ := rsa.GenerateKey(rand.Reader, 1024)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	privDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	cases := []struct {
		name string
		cfg  TokenConfig
	}{
		{"none", TokenConfig{}},
		{"both", TokenConfig{SecretKey: mustSecret(t), PublicKey: pkix(t, &rsaKey.PublicKey)}},
		{"short secret", TokenConfig{SecretKey: []byte("secret")}},
		{"public key PEM as secret", TokenConfig{SecretKey: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix(t, &rsaKey.PublicKey)})}},
		{"RSA 1024", TokenConfig{PublicKey: pkix(t, &rsaSmall.PublicKey)}},
		{"Ed25519", TokenConfig{PublicKey: pkix(t, edPub)}},
		{"private key PEM", TokenConfig{PublicKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER})}},
		{"private key DER", TokenConfig{PublicKey: privDER}},
		{"garbage", TokenConfig{PublicKey: []byte("hello")}},
	}
	for _, tc := range cases {
		if _, err := NewTokenProvider(tc.cfg); err == nil {
			t.Errorf("%s: NewTokenProvider accepted the key", tc.name)
		}
	}
}

func TestCustomAuthClaim(t *testing.T) {
	secret := mustSecret(t)
	p, err := NewTokenProvider(TokenConfig{SecretKey: secret, AuthClaim: "role"})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := p.Authenticate(sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "x", "role": "ops"}))
	if err != nil || pr.Role != "ops" {
		t.Fatalf("Authenticate = %+v, %v", pr, err)
	}
}

func TestLoadKey(t *testing.T) {
	key := []byte{0, 1, 2, 0xfe, 0xff, 'k'}
	dir := t.TempDir()
	path := filepath.Join(dir, "secret.key")
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(key)
	for _, spec := range []string{
		"file://" + path,
		"file:" + path,
		"file://localhost" + path,
		path,
		"data:;base64," + b64,
		"data:application/octet-stream;base64," + b64,
		"DATA:;BASE64," + b64,
		b64,
		"data:," + "%00%01%02%FE%FFk",
	} {
		got, err := LoadKey(spec)
		if err != nil || string(got) != string(key) {
			t.Errorf("LoadKey(%q) = %x, %v", spec, got, err)
		}
	}
	for _, spec := range []string{
		"", "file://other-host/etc/key", "file://" + filepath.Join(dir, "missing"),
		"data:;base64", "data:;base64,!!!", "data:;base64,", filepath.Join(dir, "missing"), "not base64 !",
	} {
		if _, err := LoadKey(spec); err == nil {
			t.Errorf("LoadKey(%q) succeeded", spec)
		}
	}
	// An error never quotes inline key material.
	if _, err := LoadKey("data:;base64,c2VjcmV0!"); err == nil || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("error = %v", err)
	}
}

func TestAuthorizer(t *testing.T) {
	a := NewAuthorizer([]string{"root", ""})
	p := Policy{
		TenantAdmins:     []string{"ops"},
		NamespaceActions: map[string][]string{"app": {"produce"}, "reader": {"consume"}},
		TopicActions:     map[string][]string{"one": {"consume", "produce"}},
	}
	for _, tc := range []struct {
		role    string
		act     Action
		subRole []string
		want    bool
	}{
		{"root", Produce, nil, true},
		{"ops", Consume, nil, true},
		{"app", Produce, nil, true},
		{"app", Consume, nil, false},
		{"reader", Consume, nil, true},
		{"reader", Produce, nil, false},
		{"one", Consume, nil, true},
		{"stranger", Produce, nil, false},
		{"", Produce, nil, false},
		{"reader", Consume, []string{"someone-else"}, false},
		{"reader", Consume, []string{"reader"}, true},
		{"ops", Consume, []string{"someone-else"}, true},
	} {
		q := p
		q.SubscriptionRoles = tc.subRole
		if got := a.Can(tc.role, tc.act, q); got != tc.want {
			t.Errorf("Can(%q, %s, subs %v) = %v", tc.role, tc.act, tc.subRole, got)
		}
	}
	if !a.CanLookup("app", p) || !a.CanLookup("reader", p) || a.CanLookup("stranger", p) {
		t.Error("CanLookup")
	}
	if a.IsSuperUser("") || !a.IsSuperUser("root") || a.IsTenantAdmin("app", p) || !a.IsTenantAdmin("root", p) {
		t.Error("IsSuperUser/IsTenantAdmin")
	}
}

// FuzzAuthenticate: no input panics, and nothing but a token signed with the key passes.
func FuzzAuthenticate(f *testing.F) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	p, err := NewTokenProvider(TokenConfig{SecretKey: secret, Now: fixedNow})
	if err != nil {
		f.Fatal(err)
	}
	good, _ := CreateToken(secret, "alice", 0, testNow)
	f.Add(good)
	f.Add(unsigned(`{"alg":"none"}`, `{"sub":"root"}`))
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.")
	f.Add("..")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, token string) {
		pr, err := p.Authenticate(token)
		if err != nil {
			if pr != (Principal{}) {
				t.Fatalf("principal %+v with error %v", pr, err)
			}
			return
		}
		// Accepted: it must verify with the secret (the fuzzer cannot forge HMAC).
		if _, err := jwt.Parse(token, func(*jwt.Token) (any, error) { return secret, nil }, jwt.WithValidMethods([]string{"HS256"})); err != nil {
			t.Fatalf("accepted a token that does not verify: %v", err)
		}
	})
}
