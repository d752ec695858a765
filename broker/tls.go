package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

// TLS: with a certificate and key (tlsCertificateFilePath / tlsKeyFilePath), the binary
// listener speaks only TLS (pulsar+ssl://) and so does the admin listener (https://, through
// TLSConfig). The files are checked for changes at most once a second, on handshakes, and
// reloaded, as upstream refreshes its certificates; a reload that fails keeps the previous pair.
// Client certificates are not requested (no TLS authentication provider).

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

func newTLSConfig(certFile, keyFile string, log *slog.Logger) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("broker: TLS needs both a certificate file and a key file")
	}
	if log == nil {
		log = slog.Default()
	}
	l := &certLoader{certFile: certFile, keyFile: keyFile, log: log}
	if err := l.load(); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: l.get}, nil
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

// TLSConfig is the server TLS configuration of both listeners, or nil when TLS is off. The
// admin listener (broker/web) serves with it.
func (b *Broker) TLSConfig() *tls.Config {
	if b.sec.tls == nil {
		return nil
	}
	return b.sec.tls.Clone()
}

// wrapListener makes ln speak TLS when it is on.
func (sec *security) wrapListener(ln net.Listener) net.Listener {
	if sec.tls == nil {
		return ln
	}
	return tls.NewListener(ln, sec.tls)
}

// serviceScheme is the scheme of the binary listener's URL.
func (b *Broker) serviceScheme() string {
	if b.sec.tls != nil {
		return "pulsar+ssl://"
	}
	return "pulsar://"
}

// tlsServiceURL is LOOKUP's broker_service_url_tls: the service URL when TLS is on (the Go
// clients read only that field then), else nil.
func (b *Broker) tlsServiceURL() *string {
	if b.sec.tls == nil {
		return nil
	}
	return ptr(b.ServiceURL())
}
