package broker

import (
	"fmt"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/broker/auth"
)

// The security keys of broker.conf, under upstream's names. They join confKeys (brokerconf.go) from
// here so that the security settings stay in one place.
//
// authenticationProviders may name upstream's token, TLS and basic providers (auth.Class*);
// any other class is refused, as upstream refuses a class it cannot load. With a certificate,
// brokerServicePortTls and webServicePortTls open TLS listeners beside the plain ones
// (brokerServicePort, webServicePort); without those ports, letterbox's own single listener
// of each kind speaks TLS.

func init() {
	for k, v := range securityConfKeys {
		confKeys[k] = v
	}
}

var securityConfKeys = map[string]confSetter{
	"authenticationEnabled": boolKey(func(c *Config) *bool { return &c.AuthenticationEnabled }),
	"authorizationEnabled":  boolKey(func(c *Config) *bool { return &c.AuthorizationEnabled }),
	"authenticationProviders": func(cfg *Config, _ *confState, v string) error {
		list := splitList(v)
		for _, p := range list {
			if _, ok := auth.MethodOf(p); !ok {
				return fmt.Errorf("%q: letterbox implements %s, %s and %s", p, auth.ClassToken, auth.ClassTLS, auth.ClassBasic)
			}
		}
		cfg.AuthenticationProviders = list
		return nil
	},
	"tokenSecretKey":                    stringKey(func(c *Config) *string { return &c.TokenSecretKey }),
	"tokenPublicKey":                    stringKey(func(c *Config) *string { return &c.TokenPublicKey }),
	"tokenAuthClaim":                    stringKey(func(c *Config) *string { return &c.TokenAuthClaim }),
	"basicAuthConf":                     stringKey(func(c *Config) *string { return &c.BasicAuthConf }),
	"anonymousUserRole":                 stringKey(func(c *Config) *string { return &c.AnonymousUserRole }),
	"authenticationRefreshCheckSeconds": durationKey(time.Second, func(c *Config) *time.Duration { return &c.AuthenticationRefreshCheck }),
	"superUserRoles": func(cfg *Config, _ *confState, v string) error {
		cfg.SuperUserRoles = splitList(v)
		return nil
	},
	"tlsCertificateFilePath":               stringKey(func(c *Config) *string { return &c.TLSCertFile }),
	"tlsKeyFilePath":                       stringKey(func(c *Config) *string { return &c.TLSKeyFile }),
	"tlsTrustCertsFilePath":                stringKey(func(c *Config) *string { return &c.TLSTrustCertsFile }),
	"tlsRequireTrustedClientCertOnConnect": boolKey(func(c *Config) *bool { return &c.TLSRequireTrustedClientCertOnConnect }),
	"tlsAllowInsecureConnection":           boolKey(func(c *Config) *bool { return &c.TLSAllowInsecureConnection }),
	"brokerServicePortTls":                 portKey(func(c *Config) *string { return &c.BrokerServicePortTLS }),
	"webServicePortTls":                    portKey(func(c *Config) *string { return &c.WebServicePortTLS }),
}

func portKey(field func(*Config) *string) confSetter {
	return func(cfg *Config, _ *confState, v string) error {
		port, err := parsePort(v)
		if err != nil {
			return err
		}
		*field(cfg) = port
		return nil
	}
}

func stringKey(field func(*Config) *string) confSetter {
	return func(cfg *Config, _ *confState, v string) error {
		*field(cfg) = v
		return nil
	}
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
