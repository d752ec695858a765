package broker

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadConfSecurityKeys(t *testing.T) {
	path := writeConf(t, `
brokerServicePort=6650
brokerServicePortTls=6651
authenticationEnabled=true
authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderToken
tokenSecretKey=file:///etc/pulsar/secret.key
tokenAuthClaim=role
superUserRoles=admin, ops ,
authorizationEnabled=true
authenticationRefreshCheckSeconds=5
tlsCertificateFilePath=/etc/pulsar/broker.cert.pem
tlsKeyFilePath=/etc/pulsar/broker.key-pk8.pem
`)
	cfg, err := LoadConf(path, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.AuthenticationEnabled || !cfg.AuthorizationEnabled || cfg.TokenSecretKey != "file:///etc/pulsar/secret.key" ||
		cfg.TokenAuthClaim != "role" || !slices.Equal(cfg.SuperUserRoles, []string{"admin", "ops"}) ||
		cfg.AuthenticationRefreshCheck != 5*time.Second || cfg.TLSCertFile != "/etc/pulsar/broker.cert.pem" ||
		cfg.TLSKeyFile != "/etc/pulsar/broker.key-pk8.pem" || cfg.BrokerServicePortTLS != "6651" {
		t.Fatalf("cfg = %+v", cfg)
	}
	if err := applyTLSPort(&cfg); err != nil || !strings.HasSuffix(cfg.ListenAddr, ":6651") {
		t.Fatalf("applyTLSPort: %v, %s", err, cfg.ListenAddr)
	}
	// Without a certificate the TLS port is not used.
	plain := DefaultConfig()
	plain.BrokerServicePortTLS = "6651"
	applyTLSPort(&plain)
	if plain.ListenAddr != DefaultConfig().ListenAddr {
		t.Fatalf("ListenAddr = %s", plain.ListenAddr)
	}

	for _, bad := range []string{
		"authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderTls",
		"authenticationEnabled=yes",
		"brokerServicePortTls=70000",
		"authenticationRefreshCheckSeconds=0",
	} {
		if _, err := LoadConf(writeConf(t, bad), DefaultConfig()); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
