// Package authtest makes what security tests need: secret keys and tokens, and a throwaway CA
// that issues server certificates for 127.0.0.1 and client certificates for a role. For tests
// only.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker/auth"
)

// SecretKey writes a fresh HS256 key (raw bytes) into a temporary file and returns its path and
// the key.
func SecretKey(t testing.TB) (string, []byte) {
	t.Helper()
	key, err := auth.NewSecretKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "secret.key")
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, key
}

// Token signs an HS256 token for role with key, expiring after ttl (never when ttl is 0; already
// expired when ttl < 0).
func Token(t testing.TB, key []byte, role string, ttl time.Duration) string {
	t.Helper()
	now := time.Now()
	if ttl < 0 {
		// CreateToken only adds exp for a positive ttl: sign in the past instead.
		now, ttl = now.Add(2*ttl), -ttl
	}
	tok, err := auth.CreateToken(key, role, ttl, now)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// CA is a self-signed certificate authority.
type CA struct {
	// CertFile is the CA certificate, PEM, for clients to trust.
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
}

// NewCA makes a CA whose certificate is written into a temporary directory.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "letterbox test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	path := filepath.Join(t.TempDir(), "ca.pem")
	writePEM(t, path, "CERTIFICATE", der)
	return &CA{CertFile: path, cert: cert, key: key}
}

// Issue makes a server certificate for 127.0.0.1 and localhost signed by the CA and returns the
// PEM certificate and key files.
func (ca *CA) Issue(t testing.TB) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
	})
}

// IssueClient makes a client certificate whose subject's common name is cn (the role upstream's
// TLS provider gives it) signed by the CA, and returns the PEM certificate and key files.
func (ca *CA) IssueClient(t testing.TB, cn string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: []string{"letterbox tests"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(t testing.TB, tmpl *x509.Certificate) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial(t)
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kder)
	return certFile, keyFile
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
