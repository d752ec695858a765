package web_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin/config"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/broker/web"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The admin API with token authentication and authorization on (superuser "admin"): plain HTTP
// for the status codes, pulsaradmin with tokens as the oracle, HTTPS with a CA made here.

type secureEnv struct {
	b   *broker.Broker
	s   *web.Server
	key []byte
	ca  *authtest.CA
	log *logBuffer
}

func newSecureEnv(t testing.TB, withTLS bool) *secureEnv {
	t.Helper()
	path, key := authtest.SecretKey(t)
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := broker.DefaultConfig()
	cfg.Logger = log
	cfg.AuthenticationEnabled, cfg.AuthorizationEnabled = true, true
	cfg.TokenSecretKey = path
	cfg.SuperUserRoles = []string{"admin"}
	e := &secureEnv{key: key, log: logs}
	if withTLS {
		e.ca = authtest.NewCA(t)
		cfg.TLSCertFile, cfg.TLSKeyFile = e.ca.Issue(t)
	}
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
	e.b, e.s = b, s
	return e
}

func (e *secureEnv) token(t testing.TB, role string) string {
	return authtest.Token(t, e.key, role, time.Hour)
}

func (e *secureEnv) admin(t *testing.T, role string) admin.Client {
	t.Helper()
	cfg := &config.Config{WebServiceURL: e.s.URL(), PulsarAPIVersion: config.V2}
	if role != "" {
		cfg.Token = e.token(t, role)
	}
	if e.ca != nil {
		cfg.TLSTrustCertsFilePath = e.ca.CertFile
	}
	adm, err := admin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return adm
}

// req sends method url with the Authorization header value auth (none when empty).
func (e *secureEnv) req(t testing.TB, method, path, auth string) (int, string) {
	t.Helper()
	r, err := http.NewRequest(method, e.s.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	resp, err := client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestAuthHTTPStatus(t *testing.T) {
	e := newSecureEnv(t, false)
	if err := e.b.CreateTenant("acme", adminapi.TenantInfo{AdminRoles: []string{"ops"}, AllowedClusters: []string{"standalone"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.b.CreateNamespace("acme/orders", nil); err != nil {
		t.Fatal(err)
	}
	bearer := func(role string) string { return "Bearer " + e.token(t, role) }
	for _, tc := range []struct {
		method, path, auth string
		want               int
	}{
		{"GET", "/admin/v2/tenants", "", 401},
		{"GET", "/admin/v2/tenants", "Bearer ", 401},
		{"GET", "/admin/v2/tenants", "Bearer not-a-token", 401},
		{"GET", "/admin/v2/tenants", "Basic YWRtaW46YWRtaW4=", 401},
		{"GET", "/admin/v2/tenants", e.token(t, "admin"), 401}, // no scheme
		{"GET", "/admin/v2/tenants", "Bearer " + authtest.Token(t, e.key, "admin", -time.Minute), 401},
		{"GET", "/admin/v2/tenants", bearer("ops"), 401},
		{"GET", "/admin/v2/tenants", bearer("admin"), 200},
		{"GET", "/admin/v2/tenants", "bearer " + e.token(t, "admin"), 200},
		{"GET", "/admin/v2/tenants/acme", bearer("ops"), 200},
		{"GET", "/admin/v2/tenants/acme", bearer("app"), 401},
		{"DELETE", "/admin/v2/tenants/acme", bearer("ops"), 401},
		{"GET", "/admin/v2/namespaces/acme", bearer("ops"), 200},
		{"GET", "/admin/v2/namespaces/public", bearer("ops"), 401},
		{"PUT", "/admin/v2/namespaces/acme/billing", bearer("ops"), 204},
		{"PUT", "/admin/v2/namespaces/public/ops", bearer("ops"), 401},
		// A tenant that does not exist is 404 to any authenticated role, as upstream.
		{"PUT", "/admin/v2/namespaces/nope/ops", bearer("ops"), 404},
		{"POST", "/admin/v2/namespaces/nope/ops/messageTTL", bearer("app"), 404},
		{"POST", "/admin/v2/namespaces/nope/ops/messageTTL", "", 401},
		{"GET", "/admin/v2/namespaces/acme/orders/permissions", bearer("ops"), 200},
		{"GET", "/admin/v2/namespaces/acme/orders/topics", bearer("app"), 401},
		{"GET", "/admin/v2/persistent/acme/orders", bearer("app"), 401},
		{"GET", "/admin/v2/persistent/acme/orders", bearer("ops"), 200},
		{"GET", "/admin/v2/persistent/acme/orders/t/stats", bearer("app"), 401},
		{"GET", "/lookup/v2/topic/persistent/acme/orders/t", bearer("app"), 401},
		{"GET", "/lookup/v2/topic/persistent/acme/orders/t", bearer("ops"), 200},
		{"GET", "/admin/v2/clusters", bearer("app"), 200},
		{"GET", "/admin/v2/clusters", "", 401},
		{"GET", "/admin/v2/brokers/health", bearer("app"), 401},
		{"GET", "/admin/v2/brokers/health", bearer("admin"), 200},
		// Resource groups are the superuser's; attaching one, the tenant admin's, as upstream.
		{"GET", "/admin/v2/resourcegroups", bearer("ops"), 401},
		{"GET", "/admin/v2/resourcegroups", bearer("admin"), 200},
		{"DELETE", "/admin/v2/resourcegroups/any", bearer("ops"), 401},
		{"GET", "/admin/v2/namespaces/acme/orders/resourcegroup", bearer("app"), 401},
		{"GET", "/admin/v2/namespaces/acme/orders/resourcegroup", bearer("ops"), 204},
		{"POST", "/admin/v2/namespaces/acme/orders/resourcegroup/none", bearer("ops"), 412},
		{"GET", "/metrics", "", 200},
		// An encoded slash does not move the tenant: the segment is "acme/x", not "acme", a
		// tenant that does not exist.
		{"GET", "/admin/v2/tenants/acme%2Fx", bearer("ops"), 404},
		{"GET", "/admin/v2/nope", bearer("app"), 401},
		{"GET", "/admin/v2/nope", bearer("admin"), 404},
	} {
		got, body := e.req(t, tc.method, tc.path, tc.auth)
		if got != tc.want {
			t.Errorf("%s %s (%.20q): %d %s, want %d", tc.method, tc.path, tc.auth, got, body, tc.want)
		}
	}

	// Permissions granted by the tenant admin let the app role look up, list and read stats.
	if code, body := e.req(t, "POST", "/admin/v2/namespaces/acme/orders/permissions/app", bearer("ops")); code/100 == 2 {
		t.Fatalf("grant without a body: %d %s", code, body)
	}
	if err := e.admin(t, "ops").Namespaces().GrantNamespacePermission(*mustNS(t, "acme/orders"), "app", []utils.AuthAction{"consume"}); err != nil {
		t.Fatalf("tenant admin grants: %v", err)
	}
	for _, path := range []string{"/admin/v2/namespaces/acme/orders/topics", "/admin/v2/persistent/acme/orders", "/lookup/v2/topic/persistent/acme/orders/t"} {
		if code, body := e.req(t, "GET", path, bearer("app")); code != 200 {
			t.Errorf("GET %s with consume: %d %s", path, code, body)
		}
	}

	// Tokens never reach the logs.
	if strings.Contains(e.log.String(), e.token(t, "admin")[:20]) || strings.Contains(e.log.String(), "eyJ") {
		t.Errorf("a token was logged:\n%s", e.log.String())
	}
}

// pulsaradmin with tokens: the superuser administers, a tenant admin administers its tenant,
// another role is refused; the permission the tenant admin grants lets the official client
// produce.
func TestAuthPulsarAdmin(t *testing.T) {
	e := newSecureEnv(t, false)
	root, ops, app, anon := e.admin(t, "admin"), e.admin(t, "ops"), e.admin(t, "app"), e.admin(t, "")

	if _, err := anon.Tenants().List(); status(err) != 401 {
		t.Fatalf("no token: %v, want 401", err)
	}
	if err := app.Tenants().Create(utils.TenantData{Name: "acme", AllowedClusters: []string{"standalone"}}); status(err) != 401 && status(err) != 403 {
		t.Fatalf("wrong role creates a tenant: %v, want 401/403", err)
	}
	must(t, root.Tenants().Create(utils.TenantData{Name: "acme", AllowedClusters: []string{"standalone"}, AdminRoles: []string{"ops"}}))
	if list, err := root.Tenants().List(); err != nil || len(list) != 2 {
		t.Fatalf("superuser lists tenants: %v, %v", list, err)
	}
	must(t, ops.Namespaces().CreateNamespace("acme/orders"))
	if err := app.Namespaces().CreateNamespace("acme/billing"); status(err) != 401 {
		t.Fatalf("wrong role creates a namespace: %v", err)
	}
	if _, err := ops.Namespaces().GetNamespaces("public"); status(err) != 401 {
		t.Fatalf("tenant admin of acme reads public: %v", err)
	}

	tok := e.token(t, "app")
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: e.b.ServiceURL(), OperationTimeout: 3 * time.Second,
		Authentication: pulsar.NewAuthenticationToken(tok), Logger: plog.NewLoggerWithSlog(quiet)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	topic := "persistent://acme/orders/events"
	if _, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil || !strings.Contains(err.Error(), "AuthorizationError") {
		t.Fatalf("produce before the grant: %v", err)
	}
	must(t, ops.Namespaces().GrantNamespacePermission(*mustNS(t, "acme/orders"), "app", []utils.AuthAction{"produce"}))
	perms, err := ops.Namespaces().GetNamespacePermissions(*mustNS(t, "acme/orders"))
	if err != nil || len(perms["app"]) != 1 {
		t.Fatalf("permissions = %v, %v", perms, err)
	}
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatalf("produce after the grant: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	// Stats: the producing role may look the topic up.
	tn, _ := utils.GetTopicName(topic)
	if _, err := app.Topics().GetStats(*tn); err != nil {
		t.Fatalf("stats with produce permission: %v", err)
	}
	if _, err := app.Subscriptions().List(*tn); status(err) != 401 {
		t.Fatalf("subscriptions without consume: %v", err)
	}
	must(t, ops.Namespaces().RevokeNamespacePermission(*mustNS(t, "acme/orders"), "app"))
	if _, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil {
		t.Fatal("produce after the revoke")
	}
}

func TestAuthHTTPS(t *testing.T) {
	e := newSecureEnv(t, true)
	if !strings.HasPrefix(e.s.URL(), "https://") {
		t.Fatalf("URL = %s", e.s.URL())
	}
	if list, err := e.admin(t, "admin").Tenants().List(); err != nil || len(list) != 1 {
		t.Fatalf("pulsaradmin over HTTPS: %v, %v", list, err)
	}
	if _, err := e.admin(t, "").Tenants().List(); status(err) != 401 {
		t.Fatalf("no token over HTTPS: %v", err)
	}
	// Another CA: refused by the client.
	other := authtest.NewCA(t)
	adm, err := admin.New(&config.Config{WebServiceURL: e.s.URL(), PulsarAPIVersion: config.V2,
		Token: e.token(t, "admin"), TLSTrustCertsFilePath: other.CertFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.Tenants().List(); err == nil {
		t.Fatal("pulsaradmin trusted a certificate from another CA")
	}
	// Plain HTTP to the HTTPS listener fails.
	resp, err := client.Get("http://" + e.s.Addr() + "/admin/v2/clusters")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP served")
		}
	}
	// The lookup names the TLS URLs.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	r, _ := http.NewRequest("GET", e.s.URL()+"/lookup/v2/topic/persistent/public/default/x", nil)
	r.Header.Set("Authorization", "Bearer "+e.token(t, "admin"))
	resp, err = hc.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"brokerUrlTls":"pulsar+ssl://`) || !strings.Contains(string(body), `"httpUrlTls":"https://`) {
		t.Fatalf("lookup: %s", body)
	}
}

// FuzzAuthorizationHeader: any header value other than a real token is answered 401, and the
// server keeps serving.
func FuzzAuthorizationHeader(f *testing.F) {
	for _, s := range []string{"", "Bearer", "Bearer ", "Bearer a.b.c", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.",
		"Basic YQ==", "Bearer \t", "Bearer " + strings.Repeat("x", 20000), "BEARER a", "Bearer  a  ", "Bearer a b"} {
		f.Add(s)
	}
	e := newSecureEnv(f, false)
	good := "Bearer " + e.token(f, "admin")
	f.Fuzz(func(t *testing.T, header string) {
		if !validHeaderValue(header) || strings.TrimSpace(header) == strings.TrimSpace(good) {
			return
		}
		if code, body := e.req(t, "GET", "/admin/v2/tenants", header); code != 401 {
			t.Fatalf("Authorization %q: %d %s, want 401", header, code, body)
		}
		if code, _ := e.req(t, "GET", "/admin/v2/tenants", good); code != 200 {
			t.Fatalf("the server stopped serving: %d", code)
		}
	})
}

// validHeaderValue reports whether net/http can send s as a header value.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0x7f || (c < 0x20 && c != '\t') {
			return false
		}
	}
	return true
}
