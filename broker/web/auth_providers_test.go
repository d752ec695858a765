package web_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin/config"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/broker/web"
)

// The admin API with upstream's three providers at once and an anonymous role: HTTP Basic,
// client certificates on the https listener beside the plain one, tokens; pulsaradmin with a
// client certificate as the oracle.

func TestAuthProvidersHTTP(t *testing.T) {
	path, key := authtest.SecretKey(t)
	ca := authtest.NewCA(t)
	htpasswd := filepath.Join(t.TempDir(), ".htpasswd")
	// admin:123456 as htpasswd -m writes it.
	os.WriteFile(htpasswd, []byte("admin:$apr1$abcdefgh$6LbQcMCxitqz7DTxoNR2s1\n"), 0o600)
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	cfg := broker.DefaultConfig()
	cfg.Logger = log
	cfg.AuthenticationEnabled, cfg.AuthorizationEnabled = true, true
	cfg.AuthenticationProviders = []string{"org.apache.pulsar.broker.authentication.AuthenticationProviderToken",
		"org.apache.pulsar.broker.authentication.AuthenticationProviderBasic", "org.apache.pulsar.broker.authentication.AuthenticationProviderTls"}
	cfg.TokenSecretKey, cfg.BasicAuthConf, cfg.AnonymousUserRole = path, htpasswd, "anonymous"
	cfg.SuperUserRoles = []string{"admin"}
	cfg.TLSCertFile, cfg.TLSKeyFile = ca.Issue(t)
	cfg.TLSTrustCertsFile = ca.CertFile
	cfg.BrokerServicePortTLS, cfg.WebServicePortTLS = "0", "0"
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s, err := web.New(b, "127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.HasPrefix(s.URL(), "http://") || !strings.HasPrefix(s.URLTLS(), "https://") {
		t.Fatalf("URLs %s and %s", s.URL(), s.URLTLS())
	}

	pem, _ := os.ReadFile(ca.CertFile)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	httpsClient := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
	}
	get := func(hc *http.Client, url, auth string) (int, string) {
		t.Helper()
		r, _ := http.NewRequest("GET", url, nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		resp, err := hc.Do(r)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	basic := func(up string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(up)) }
	adminCert, adminKey := ca.IssueClient(t, "admin")
	pair, err := tls.LoadX509KeyPair(adminCert, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	tenants := "/admin/v2/tenants"
	for _, tc := range []struct {
		name string
		hc   *http.Client
		url  string
		auth string
		want int
	}{
		{"basic over http", client, s.URL(), basic("admin:123456"), 200},
		{"basic over https", httpsClient(), s.URLTLS(), basic("admin:123456"), 200},
		{"token over http", client, s.URL(), "Bearer " + authtest.Token(t, key, "admin", time.Hour), 200},
		{"client certificate", httpsClient(pair), s.URLTLS(), "", 200},
		// Credentials no provider takes make the anonymous role, which may not list tenants.
		{"wrong password", client, s.URL(), basic("admin:1234567"), 401},
		{"bad token", client, s.URL(), "Bearer x.y.z", 401},
		{"anonymous", client, s.URL(), "", 401},
	} {
		if code, body := get(tc.hc, tc.url+tenants, tc.auth); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
	// The anonymous role is authenticated: what any role may do, it may.
	if code, body := get(client, s.URL()+"/admin/v2/clusters", ""); code != 200 {
		t.Errorf("anonymous clusters: %d %s", code, body)
	}
	if code, body := get(client, s.URL()+tenants, ""); !strings.Contains(body, "role anonymous") {
		t.Errorf("anonymous tenants: %d %s, want the anonymous role refused", code, body)
	}
	// X-Pulsar-Auth-Method-Name picks the provider: a client certificate does not count for basic.
	r, _ := http.NewRequest("GET", s.URLTLS()+tenants, nil)
	r.Header.Set("X-Pulsar-Auth-Method-Name", "basic")
	if resp, err := httpsClient(pair).Do(r); err != nil || resp.StatusCode != 401 {
		t.Errorf("method basic with only a certificate: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}

	// pulsaradmin with a client certificate on the https listener.
	adm, err := admin.New(&config.Config{WebServiceURL: s.URLTLS(), PulsarAPIVersion: config.V2,
		TLSTrustCertsFilePath: ca.CertFile, TLSCertFile: adminCert, TLSKeyFile: adminKey})
	if err != nil {
		t.Fatal(err)
	}
	if list, err := adm.Tenants().List(); err != nil || len(list) == 0 {
		t.Fatalf("pulsaradmin with a client certificate: %v, %v", list, err)
	}
	// A certificate of another CA fails the handshake.
	other := authtest.NewCA(t)
	badCert, badKey := other.IssueClient(t, "admin")
	bad, _ := tls.LoadX509KeyPair(badCert, badKey)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &bad, nil }}}}
	if code, body := get(hc, s.URLTLS()+tenants, ""); code != 0 {
		t.Errorf("certificate of another CA: %d %s, want a handshake failure", code, body)
	}
	// The lookup names the TLS listeners.
	_, body := get(client, s.URL()+"/lookup/v2/topic/persistent/public/default/x", "Bearer "+authtest.Token(t, key, "admin", time.Hour))
	if !strings.Contains(body, `"brokerUrlTls":"pulsar+ssl://`) || !strings.Contains(body, `"httpUrlTls":"`+s.URLTLS()) ||
		!strings.Contains(body, `"brokerUrl":"pulsar://`) {
		t.Errorf("lookup: %s", body)
	}
}
