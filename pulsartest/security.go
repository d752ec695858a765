package pulsartest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
)

// SuperUser is the role that may do anything when authentication is on: Admin acts as it, and
// Token and ClientCert make credentials for it as for any role. Other roles may do what the
// admin API grants them (namespace and topic permissions), as on an upstream broker.
const SuperUser = "pulsartest-superuser"

// TokenAuth turns authentication on with upstream's token provider, tokens being signed with a
// fresh HS256 secret key, and authorization with it: Token makes a token for any role.
func TokenAuth() Option { return func(s *settings) { s.tokenAuth = true } }

// TLS makes the binary protocol and the admin API speak TLS, with a certificate for 127.0.0.1
// and localhost issued by a throwaway certificate authority: ServiceURL is pulsar+ssl://,
// AdminURL https://, and CAFile is the certificate clients trust (the official clients'
// TLSTrustCertsFilePath).
func TLS() Option { return func(s *settings) { s.tls = true } }

// TLSAuth is TLS with authentication by client certificate (upstream's TLS provider: the role
// is the certificate's common name) and authorization: ClientCert issues a certificate for any
// role. With TokenAuth as well, both kinds of credentials are taken.
func TLSAuth() Option { return func(s *settings) { s.tls, s.tlsAuth = true, true } }

// security is what authentication and TLS need: the secret key, the certificate authority
// and the broker's certificate, in the broker's temporary directory.
type security struct {
	tokenAuth, tlsAuth bool
	key                []byte       // HS256 secret key; nil without TokenAuth
	ca                 *authtest.CA // nil without TLS
	certFile, keyFile  string       // the broker's certificate
	// superCert and superKey are SuperUser's client certificate, with TLSAuth.
	superCert, superKey string

	dir   string
	mu    sync.Mutex
	certs int // client certificates issued, each in a directory of its own
}

func newSecurity(s settings, dir string) (*security, error) {
	sec := &security{tokenAuth: s.tokenAuth, tlsAuth: s.tlsAuth, dir: dir}
	if s.tokenAuth {
		key, err := auth.NewSecretKey()
		if err != nil {
			return nil, err
		}
		sec.key = key
	}
	if s.tls {
		var err error
		if sec.ca, err = authtest.NewCAIn(dir); err != nil {
			return nil, err
		}
		server := filepath.Join(dir, "broker")
		if err := os.Mkdir(server, 0o700); err != nil {
			return nil, err
		}
		if sec.certFile, sec.keyFile, err = sec.ca.IssueIn(server); err != nil {
			return nil, err
		}
	}
	if s.tlsAuth {
		var err error
		if sec.superCert, sec.superKey, err = sec.clientCert(SuperUser); err != nil {
			return nil, err
		}
	}
	return sec, nil
}

// apply turns on in cfg what the options ask for, on top of what broker.conf settings said.
func (sec *security) apply(cfg *broker.Config) {
	if sec.ca != nil {
		cfg.TLSCertFile, cfg.TLSKeyFile = sec.certFile, sec.keyFile
	}
	if !sec.tokenAuth && !sec.tlsAuth {
		return
	}
	cfg.AuthenticationEnabled, cfg.AuthorizationEnabled = true, true
	if !slices.Contains(cfg.SuperUserRoles, SuperUser) {
		cfg.SuperUserRoles = append(slices.Clone(cfg.SuperUserRoles), SuperUser)
	}
	provide := func(class string) {
		if !slices.Contains(cfg.AuthenticationProviders, class) {
			cfg.AuthenticationProviders = append(slices.Clone(cfg.AuthenticationProviders), class)
		}
	}
	if sec.tokenAuth {
		cfg.TokenSecretKey = "data:;base64," + base64.StdEncoding.EncodeToString(sec.key)
		provide(auth.ClassToken)
	}
	if sec.tlsAuth {
		cfg.TLSTrustCertsFile = sec.ca.CertFile
		provide(auth.ClassTLS)
	}
}

// adminClient is a client of the admin API at url, trusting the broker's certificate and
// authenticated as SuperUser.
func (sec *security) adminClient(url string) (*admin.Client, error) {
	opts := admin.Options{URL: url}
	if sec.ca != nil {
		pem, err := os.ReadFile(sec.ca.CertFile)
		if err != nil {
			return nil, err
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		opts.TLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	switch {
	case sec.tokenAuth:
		tok, err := sec.token(SuperUser)
		if err != nil {
			return nil, err
		}
		opts.Token = tok
	case sec.tlsAuth:
		cert, err := tls.LoadX509KeyPair(sec.superCert, sec.superKey)
		if err != nil {
			return nil, err
		}
		opts.TLS.Certificates = []tls.Certificate{cert}
	}
	return admin.New(opts)
}

// clientOptions are the options of a letterbox client of the broker at serviceURL, trusting
// its certificate and authenticated as SuperUser.
func (sec *security) clientOptions(serviceURL string) (client.Options, error) {
	opts := client.Options{ServiceURL: serviceURL, Logger: slog.New(slog.DiscardHandler)}
	if sec.ca != nil {
		opts.TLSTrustCertsFile = sec.ca.CertFile
	}
	switch {
	case sec.tokenAuth:
		tok, err := sec.token(SuperUser)
		if err != nil {
			return opts, err
		}
		opts.Token = tok
	case sec.tlsAuth:
		opts.TLSCertFile, opts.TLSKeyFile = sec.superCert, sec.superKey
	}
	return opts, nil
}

func (sec *security) token(role string) (string, error) {
	if !sec.tokenAuth {
		return "", errors.New("pulsartest: Token needs the TokenAuth option")
	}
	tok, err := auth.CreateToken(sec.key, role, 0, time.Now())
	if err != nil {
		return "", fmt.Errorf("pulsartest: token for %q: %w", role, err)
	}
	return tok, nil
}

func (sec *security) clientCert(role string) (certFile, keyFile string, err error) {
	if !sec.tlsAuth {
		return "", "", errors.New("pulsartest: ClientCert needs the TLSAuth option")
	}
	if role == "" {
		return "", "", errors.New("pulsartest: a client certificate needs a role")
	}
	sec.mu.Lock()
	sec.certs++
	dir := filepath.Join(sec.dir, "client-"+strconv.Itoa(sec.certs))
	sec.mu.Unlock()
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("pulsartest: %w", err)
	}
	certFile, keyFile, err = sec.ca.IssueClientIn(dir, role)
	if err != nil {
		return "", "", fmt.Errorf("pulsartest: %w", err)
	}
	return certFile, keyFile, nil
}

// Token returns a token for role, signed with the broker's secret key, that never expires: for
// the official clients' NewAuthenticationToken, or pulsar-admin's --auth-params. It needs
// TokenAuth.
func (b *Broker) Token(role string) (string, error) { return b.sec.token(role) }

// ClientCert issues a client certificate for role (its common name) from the broker's
// certificate authority and returns the PEM certificate and key files, for the official
// clients' NewAuthenticationTLS. They are removed by Close. It needs TLSAuth.
func (b *Broker) ClientCert(role string) (certFile, keyFile string, err error) {
	return b.sec.clientCert(role)
}

// CAFile is the PEM file of the certificate authority that issued the broker's certificate,
// for the clients' TLSTrustCertsFilePath; "" without TLS. It is removed by Close.
func (b *Broker) CAFile() string {
	if b.sec.ca == nil {
		return ""
	}
	return b.sec.ca.CertFile
}
