package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

// TLS: with a certificate and key (tlsCertificateFilePath / tlsKeyFilePath), the broker serves
// TLS. With brokerServicePortTls (webServicePortTls) set, a TLS listener opens on that port
// beside the plain one, as upstream; without it, the single binary (admin) listener speaks
// only TLS (pulsar+ssl://, https://), letterbox's own shorthand. The files are checked for
// changes at most once a second, on handshakes, and reloaded, as upstream refreshes its
// certificates; a reload that fails keeps the previous pair.
//
// Client certificates, as upstream's server SSL context: always asked for, and checked
// against tlsTrustCertsFilePath (the system's CAs when unset), so an untrusted certificate
// fails the handshake; required with tlsRequireTrustedClientCertOnConnect; taken without any
// check with tlsAllowInsecureConnection. The TLS authentication provider takes the role from
// the verified certificate (auth.TLSRole).

// certReloadCheck is how often the certificate files are checked for changes.
const certReloadCheck = time.Second

type certLoader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu        sync.Mutex
	cert      *tls.Certificate
	certMod   time.Time
	keyMod    time.Time
	checkedAt time.Time
}

func newTLSConfig(cfg Config) (*tls.Config, error) {
	if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
		return nil, errors.New("broker: TLS needs both a certificate file and a key file")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	l := &certLoader{certFile: cfg.TLSCertFile, keyFile: cfg.TLSKeyFile, log: log}
	if err := l.load(); err != nil {
		return nil, err
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: l.get, ClientAuth: tls.VerifyClientCertIfGiven}
	if cfg.TLSTrustCertsFile != "" {
		pem, err := os.ReadFile(cfg.TLSTrustCertsFile)
		if err != nil {
			return nil, fmt.Errorf("broker: tlsTrustCertsFilePath: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("broker: tlsTrustCertsFilePath %s: no PEM certificate in it", cfg.TLSTrustCertsFile)
		}
		tc.ClientCAs = pool
	}
	switch {
	case cfg.TLSAllowInsecureConnection && cfg.TLSRequireTrustedClientCertOnConnect:
		tc.ClientAuth = tls.RequireAnyClientCert
	case cfg.TLSAllowInsecureConnection:
		tc.ClientAuth = tls.RequestClientCert
	case cfg.TLSRequireTrustedClientCertOnConnect:
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// load reads the pair; l.mu is held or l is not shared yet.
func (l *certLoader) load() error {
	cm, km := modTime(l.certFile), modTime(l.keyFile)
	cert, err := tls.LoadX509KeyPair(l.certFile, l.keyFile)
	if err != nil {
		return fmt.Errorf("broker: TLS certificate %s and key %s: %w", l.certFile, l.keyFile, err)
	}
	l.cert, l.certMod, l.keyMod, l.checkedAt = &cert, cm, km, time.Now()
	return nil
}

func (l *certLoader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.checkedAt) >= certReloadCheck {
		l.checkedAt = time.Now()
		if !modTime(l.certFile).Equal(l.certMod) || !modTime(l.keyFile).Equal(l.keyMod) {
			if err := l.load(); err != nil {
				l.log.Warn("TLS certificate changed but cannot be loaded; keeping the previous one", "err", err)
			} else {
				l.log.Info("TLS certificate reloaded", "file", l.certFile)
			}
		}
	}
	return l.cert, nil
}

func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// TLSConfig is the server TLS configuration of the TLS listeners, or nil when TLS is off. The
// admin listener (broker/web) serves with it.
func (b *Broker) TLSConfig() *tls.Config {
	if b.sec.tls == nil {
		return nil
	}
	return b.sec.tls.Clone()
}

// listenBinary opens the binary listeners: the plain one on cfg.ListenAddr (speaking TLS when
// TLS is on without brokerServicePortTls), and the TLS one beside it when that port is set.
func listenBinary(cfg Config, sec *security) (ln, lnTLS net.Listener, err error) {
	ln, err = net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("broker: listen on %s: %w", cfg.ListenAddr, err)
	}
	if sec.tls == nil {
		return ln, nil, nil
	}
	if cfg.BrokerServicePortTLS == "" {
		return tls.NewListener(ln, sec.tls), nil, nil
	}
	host, _, err := net.SplitHostPort(cfg.ListenAddr)
	if err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("broker: brokerServicePortTls: cannot take the host of %q: %v", cfg.ListenAddr, err)
	}
	addr := net.JoinHostPort(host, cfg.BrokerServicePortTLS)
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		ln.Close()
		return nil, nil, fmt.Errorf("broker: listen on %s (TLS): %w", addr, err)
	}
	return ln, tls.NewListener(raw, sec.tls), nil
}

// plainIsTLS reports whether the main listener speaks TLS (TLS without a port of its own).
func (b *Broker) plainIsTLS() bool { return b.sec.tls != nil && b.lnTLS == nil }

// AddrTLS is the host:port of the TLS listener beside the plain one, or "" when there is none.
func (b *Broker) AddrTLS() string {
	if b.lnTLS == nil {
		return ""
	}
	return b.lnTLS.Addr().String()
}

// ListenURLs are the URLs the binary listeners accept on (their real addresses, not the
// advertised ones): the main listener's, and the TLS one's beside it ("" when none).
func (b *Broker) ListenURLs() (main, tlsURL string) {
	main = "pulsar://" + b.Addr()
	if b.plainIsTLS() {
		main = "pulsar+ssl://" + b.Addr()
	}
	if b.lnTLS != nil {
		tlsURL = "pulsar+ssl://" + b.AddrTLS()
	}
	return main, tlsURL
}

// ServiceURLTLS is the advertised pulsar+ssl:// URL, or "" when TLS is off.
func (b *Broker) ServiceURLTLS() string {
	switch {
	case b.lnTLS != nil:
		return "pulsar+ssl://" + b.advertise(b.lnTLS)
	case b.sec.tls != nil:
		return b.ServiceURL()
	}
	return ""
}

// tlsServiceURL is LOOKUP's broker_service_url_tls (the Go clients read only that field when
// they connected with TLS), or nil when TLS is off.
func (b *Broker) tlsServiceURL() *string {
	if u := b.ServiceURLTLS(); u != "" {
		return ptr(u)
	}
	return nil
}
