package cli

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/letterbox-dev/letterbox/client"
)

// clientCertFlags are a TLS client certificate (mTLS), as upstream's clients take it
// (tlsCertFile, tlsKeyFile): presented on every TLS connection, to the binary protocol and the
// admin API alike; with no token or OAuth2 it is the authentication (auth method tls, the role
// being the certificate's common name).
type clientCertFlags struct {
	certFile string
	keyFile  string
}

// clientCertFlagNames are the flags' names, in the order of the help.
var clientCertFlagNames = []string{"tls-cert-file", "tls-key-file"}

// register registers the flags with the values already set as defaults, so a subcommand's flag
// set keeps what was given before the subcommand's name.
func (f *clientCertFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.certFile, "tls-cert-file", f.certFile, "present the PEM TLS client certificate in `FILE` (mTLS)")
	fs.StringVar(&f.keyFile, "tls-key-file", f.keyFile, "the PEM private key of --tls-cert-file, in `FILE`")
}

// check reports a certificate without its key, or a key without its certificate.
func (f clientCertFlags) check() error {
	if (f.certFile == "") != (f.keyFile == "") {
		return errors.New("--tls-cert-file and --tls-key-file go together")
	}
	return nil
}

// clientCertGiven reports whether a certificate flag was given on the command line: then the
// pair replaces a context's as a whole.
func (c *clientFlags) clientCertGiven() bool {
	return slices.ContainsFunc(c.set, func(n string) bool { return slices.Contains(clientCertFlagNames, n) })
}

// withClientCert makes tc present the client certificate, when there is one, read again on
// every handshake (a renewed pair is picked up). It checks the pair now, so a wrong file fails
// before any connection, naming where the setting came from. tc may be nil: a TLS config is
// made then, only when a certificate is set.
func (c *clientFlags) withClientCert(tc *tls.Config) (*tls.Config, error) {
	cert, key := c.clientCert.certFile, c.clientCert.keyFile
	if cert == "" {
		return tc, nil
	}
	if _, err := client.LoadClientCertificate(cert, key); err != nil {
		return nil, fmt.Errorf("%s: %w", c.origin("tls-cert-file", "tls_cert_file"), err)
	}
	if tc == nil {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return client.LoadClientCertificate(cert, key)
	}
	return tc, nil
}
