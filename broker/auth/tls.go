package auth

import (
	"crypto/x509"
	"errors"
)

// MethodTLS is the auth method name of upstream's TLS provider.
const MethodTLS = "tls"

// ErrNoCertificate is a TLS authentication without a client certificate (or one without a
// common name).
var ErrNoCertificate = errors.New("no client certificate with a common name")

// TLSRole returns the role upstream's AuthenticationProviderTls gives a client certificate
// chain: the common name of the first (the client's own) certificate. The chain has been
// verified against the trusted CAs by the TLS handshake already; this reads it only.
func TLSRole(chain []*x509.Certificate) (Principal, error) {
	if len(chain) == 0 || chain[0].Subject.CommonName == "" {
		return Principal{}, ErrNoCertificate
	}
	// Upstream takes the first CN of the RFC 2253 name, which lists the subject's attributes
	// last first: the last CN of the certificate, as pkix.Name.CommonName holds. The role never
	// expires with the connection, as upstream's does not.
	return Principal{Role: chain[0].Subject.CommonName}, nil
}
