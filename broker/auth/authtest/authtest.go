// Package authtest makes what security tests need: secret keys and tokens, and a throwaway CA
// that issues server certificates for 127.0.0.1 and client certificates for a role. For tests
// only (and pulsartest, whose brokers speak TLS with its certificates); the ...In functions
// write into a directory given, for callers without a testing.TB.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
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
	ca, err := NewCAIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// NewCAIn makes a CA whose certificate, valid for a day, is written into dir, for callers
// without a test (pulsartest.New).
func NewCAIn(dir string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "letterbox test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("authtest: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "ca.pem")
	if err := writePEM(path, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return &CA{CertFile: path, cert: cert, key: key}, nil
}

// Issue makes a server certificate for 127.0.0.1 and localhost signed by the CA and returns the
// PEM certificate and key files.
func (ca *CA) Issue(t testing.TB) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile, err := ca.IssueIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// IssueIn is Issue writing the files into dir.
func (ca *CA) IssueIn(dir string) (certFile, keyFile string, err error) {
	return ca.issue(dir, &x509.Certificate{
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
	certFile, keyFile, err := ca.IssueClientIn(t.TempDir(), cn)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// IssueClientIn is IssueClient writing the files into dir.
func (ca *CA) IssueClientIn(dir, cn string) (certFile, keyFile string, err error) {
	return ca.issue(dir, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: []string{"letterbox tests"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(dir string, tmpl *x509.Certificate) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	if tmpl.SerialNumber, err = serial(); err != nil {
		return "", "", err
	}
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return "", "", fmt.Errorf("authtest: certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	if err := writePEM(keyFile, "PRIVATE KEY", kder); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
