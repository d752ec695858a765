package broker

import (
	"slices"
	"testing"
	"time"
)

func TestLoadConfSecurityKeys(t *testing.T) {
	path := writeConf(t, `
brokerServicePort=6650
brokerServicePortTls=6651
authenticationEnabled=true
authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderToken, org.apache.pulsar.broker.authentication.AuthenticationProviderTls,org.apache.pulsar.broker.authentication.AuthenticationProviderBasic
basicAuthConf=/etc/pulsar/.htpasswd
anonymousUserRole=anonymous
tlsTrustCertsFilePath=/etc/pulsar/ca.pem
tlsRequireTrustedClientCertOnConnect=true
tlsAllowInsecureConnection=true
webServicePort=8081
webServicePortTls=8443
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
	if !slices.Equal(cfg.AuthenticationProviders, []string{"org.apache.pulsar.broker.authentication.AuthenticationProviderToken",
		"org.apache.pulsar.broker.authentication.AuthenticationProviderTls", "org.apache.pulsar.broker.authentication.AuthenticationProviderBasic"}) ||
		cfg.BasicAuthConf != "/etc/pulsar/.htpasswd" || cfg.AnonymousUserRole != "anonymous" || cfg.TLSTrustCertsFile != "/etc/pulsar/ca.pem" ||
		!cfg.TLSRequireTrustedClientCertOnConnect || !cfg.TLSAllowInsecureConnection || cfg.WebServicePortTLS != "8443" || cfg.WebServicePort != "8081" {
		t.Fatalf("cfg = %+v", cfg)
	}
	if !cfg.AuthenticationEnabled || !cfg.AuthorizationEnabled || cfg.TokenSecretKey != "file:///etc/pulsar/secret.key" ||
		cfg.TokenAuthClaim != "role" || !slices.Equal(cfg.SuperUserRoles, []string{"admin", "ops"}) ||
		cfg.AuthenticationRefreshCheck != 5*time.Second || cfg.TLSCertFile != "/etc/pulsar/broker.cert.pem" ||
		cfg.TLSKeyFile != "/etc/pulsar/broker.key-pk8.pem" || cfg.BrokerServicePortTLS != "6651" {
		t.Fatalf("cfg = %+v", cfg)
	}
	for _, bad := range []string{
		"authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderSasl",
		"webServicePortTls=https",
		"tlsRequireTrustedClientCertOnConnect=1",
		"authenticationEnabled=yes",
		"brokerServicePortTls=70000",
		"authenticationRefreshCheckSeconds=0",
	} {
		if _, err := LoadConf(writeConf(t, bad), DefaultConfig()); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
