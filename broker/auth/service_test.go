package auth

import (
	"crypto/x509"
	x509name "crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"testing"
	"time"
)

func TestServiceConnectAndHTTP(t *testing.T) {
	key := make([]byte, SecretKeySize)
	tokens, err := NewTokenProvider(TokenConfig{SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	basic, _ := ParseBasicConf([]byte("admin:$apr1$abcdefgh$6LbQcMCxitqz7DTxoNR2s1\n"))
	tok, _ := CreateToken(key, "tokenrole", time.Hour, time.Now())
	cert := []*x509.Certificate{{Subject: x509name.Name{CommonName: "certrole"}}}

	s, err := NewService([]string{MethodToken, MethodTLS, MethodBasic}, tokens, basic, "anon")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    Credentials
		role string
		anon bool
		bad  bool
	}{
		{c: Credentials{Method: MethodToken, Data: []byte(tok)}, role: "tokenrole"},
		{c: Credentials{Method: MethodToken, Data: []byte("x")}, bad: true},
		{c: Credentials{Method: MethodTLS, Certs: cert}, role: "certrole"},
		{c: Credentials{Method: MethodTLS}, bad: true},
		{c: Credentials{Method: MethodBasic, Data: []byte("admin:123456")}, role: "admin"},
		{c: Credentials{Method: "none"}, role: "anon", anon: true},
		{c: Credentials{Method: "sasl", Data: []byte("x")}, role: "anon", anon: true},
	} {
		pr, anon, err := s.Connect(tc.c)
		if (err != nil) != tc.bad || pr.Role != tc.role || anon != tc.anon {
			t.Errorf("Connect(%s): %q %v %v", tc.c.Method, pr.Role, anon, err)
		}
	}
	basicHeader := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:123456"))
	for _, tc := range []struct {
		h    HTTPCredentials
		role string
	}{
		{HTTPCredentials{Authorization: []string{"Bearer " + tok}}, "tokenrole"},
		{HTTPCredentials{Authorization: []string{basicHeader}}, "admin"},
		{HTTPCredentials{Certs: cert}, "certrole"},
		{HTTPCredentials{Authorization: []string{"Bearer x"}}, "anon"},
		{HTTPCredentials{}, "anon"},
	} {
		if pr, err := s.HTTP(tc.h); err != nil || pr.Role != tc.role {
			t.Errorf("HTTP(%v): %q %v", tc.h, pr.Role, err)
		}
	}
	// A named method is the only one tried; no anonymous fallback then.
	if _, err := s.HTTP(HTTPCredentials{Method: MethodBasic, Certs: cert}); err == nil {
		t.Error("method basic accepted a certificate")
	}

	strict, _ := NewService([]string{MethodToken}, tokens, nil, "")
	if _, _, err := strict.Connect(Credentials{Method: "none"}); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("no anonymous role: %v", err)
	}
	if _, err := strict.HTTP(HTTPCredentials{Authorization: []string{"Bearer x"}}); !errors.Is(err, ErrMalformedToken) {
		t.Errorf("bad token over HTTP without anonymous: %v", err)
	}
	if _, err := NewService([]string{MethodBasic}, nil, nil, ""); err == nil {
		t.Error("basic without its users file")
	}
}
