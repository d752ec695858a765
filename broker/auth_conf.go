package broker

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// The security keys of broker.conf, under upstream's names. They join confKeys (conf.go) from
// here so that the security settings stay in one place.
//
// authenticationProviders may name only upstream's token provider: letterbox implements no
// other. brokerServicePortTls is the port of the (single) listener when TLS is on: letterbox
// has one binary listener, which speaks TLS when a certificate is configured.

// tokenProviderClass is upstream's token authentication provider.
const tokenProviderClass = "org.apache.pulsar.broker.authentication.AuthenticationProviderToken"

func init() {
	for k, v := range securityConfKeys {
		confKeys[k] = v
	}
}

var securityConfKeys = map[string]confSetter{
	"authenticationEnabled": boolKey(func(c *Config) *bool { return &c.AuthenticationEnabled }),
	"authorizationEnabled":  boolKey(func(c *Config) *bool { return &c.AuthorizationEnabled }),
	"authenticationProviders": func(_ *Config, _ *confState, v string) error {
		for _, p := range splitList(v) {
			if p != tokenProviderClass {
				return fmt.Errorf("%q: letterbox implements only %s", p, tokenProviderClass)
			}
		}
		return nil
	},
	"tokenSecretKey":                    stringKey(func(c *Config) *string { return &c.TokenSecretKey }),
	"tokenPublicKey":                    stringKey(func(c *Config) *string { return &c.TokenPublicKey }),
	"tokenAuthClaim":                    stringKey(func(c *Config) *string { return &c.TokenAuthClaim }),
	"authenticationRefreshCheckSeconds": durationKey(time.Second, func(c *Config) *time.Duration { return &c.AuthenticationRefreshCheck }),
	"superUserRoles": func(cfg *Config, _ *confState, v string) error {
		cfg.SuperUserRoles = splitList(v)
		return nil
	},
	"tlsCertificateFilePath": stringKey(func(c *Config) *string { return &c.TLSCertFile }),
	"tlsKeyFilePath":         stringKey(func(c *Config) *string { return &c.TLSKeyFile }),
	"brokerServicePortTls": func(cfg *Config, _ *confState, v string) error {
		port, err := parsePort(v)
		if err != nil {
			return err
		}
		cfg.BrokerServicePortTLS = port
		return nil
	},
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

// applyTLSPort moves the listener to BrokerServicePortTLS when TLS is on (and the advertised
// address with it, when it named the listen port).
func applyTLSPort(cfg *Config) error {
	if cfg.BrokerServicePortTLS == "" || (cfg.TLSCertFile == "" && cfg.TLSKeyFile == "") {
		return nil
	}
	host, oldPort, err := net.SplitHostPort(cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("broker: brokerServicePortTls: cannot set the port of %q: %v", cfg.ListenAddr, err)
	}
	cfg.ListenAddr = net.JoinHostPort(host, cfg.BrokerServicePortTLS)
	if ah, ap, err := net.SplitHostPort(cfg.AdvertisedAddr); err == nil && ap == oldPort {
		cfg.AdvertisedAddr = net.JoinHostPort(ah, cfg.BrokerServicePortTLS)
	}
	return nil
}
