package cli

import (
	"errors"
	"flag"
	"log/slog"
	"net"
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth"
)

// The security flags of `letterbox broker`. A token key turns authentication on (as upstream's
// authenticationEnabled with the token provider), --superuser-roles turns authorization on, and
// a certificate with its key makes both listeners speak TLS. Flags win over --config.

type securityFlags struct {
	secretKey  string
	publicKey  string
	superUsers string
	tlsCert    string
	tlsKey     string
}

var securityFlagNames = []string{"token-secret-key", "token-public-key", "superuser-roles", "tls-cert-file", "tls-key-file"}

func (s *securityFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.secretKey, "token-secret-key", "", "require tokens signed with the HS256 `KEY` (a path, file:///path or data:;base64,...)")
	fs.StringVar(&s.publicKey, "token-public-key", "", "require tokens signed with the private half of the RSA or EC public `KEY`")
	fs.StringVar(&s.superUsers, "superuser-roles", "", "turn authorization on; the comma-separated `ROLES` may do anything")
	fs.StringVar(&s.tlsCert, "tls-cert-file", "", "serve TLS with the PEM certificate in `FILE` (on both listeners; beside them with the config's brokerServicePortTls and webServicePortTls)")
	fs.StringVar(&s.tlsKey, "tls-key-file", "", "the PEM private key of --tls-cert-file, in `FILE`")
}

// apply puts the given flags into cfg.
func (s *securityFlags) apply(cfg *broker.Config, given map[string]bool) error {
	switch {
	case given["token-secret-key"] && given["token-public-key"]:
		return errors.New("--token-secret-key and --token-public-key exclude each other")
	case given["tls-cert-file"] != given["tls-key-file"]:
		return errors.New("--tls-cert-file and --tls-key-file go together")
	case given["superuser-roles"] && !given["token-secret-key"] && !given["token-public-key"] && !cfg.AuthenticationEnabled:
		return errors.New("--superuser-roles needs authentication: give --token-secret-key or --token-public-key")
	}
	if given["token-secret-key"] {
		cfg.AuthenticationEnabled, cfg.TokenSecretKey, cfg.TokenPublicKey = true, s.secretKey, ""
	}
	if given["token-public-key"] {
		cfg.AuthenticationEnabled, cfg.TokenPublicKey, cfg.TokenSecretKey = true, s.publicKey, ""
	}
	if (given["token-secret-key"] || given["token-public-key"]) && len(cfg.AuthenticationProviders) > 0 &&
		!slices.Contains(cfg.AuthenticationProviders, auth.ClassToken) {
		// The config names its providers; a token key flag adds the token provider to them.
		cfg.AuthenticationProviders = append(cfg.AuthenticationProviders, auth.ClassToken)
	}
	if given["superuser-roles"] {
		cfg.AuthorizationEnabled = true
		cfg.SuperUserRoles = nil
		for _, r := range strings.Split(s.superUsers, ",") {
			if r = strings.TrimSpace(r); r != "" {
				cfg.SuperUserRoles = append(cfg.SuperUserRoles, r)
			}
		}
	}
	if given["tls-cert-file"] {
		cfg.TLSCertFile, cfg.TLSKeyFile = s.tlsCert, s.tlsKey
	}
	return nil
}

// hostPorts are the host:port of URLs.
func hostPorts(urls []string) []string {
	out := make([]string, 0, len(urls))
	for _, u := range urls {
		if _, hp, ok := strings.Cut(u, "://"); ok {
			out = append(out, hp)
		}
	}
	return out
}

// warnIfExposed warns when a listener is reachable beyond this machine and anyone reaching it
// may use the broker (authentication off).
func warnIfExposed(log *slog.Logger, b *broker.Broker, addrs ...string) {
	if b.AuthenticationEnabled() {
		return
	}
	for _, a := range addrs {
		if !isLoopback(a) {
			log.Warn("authentication is off and the broker listens beyond this machine: anyone who can reach "+
				a+" can read, write and delete everything; use --token-secret-key, or listen on 127.0.0.1", "listener", a)
		}
	}
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
