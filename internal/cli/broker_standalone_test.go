package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// readyFourURLs is the ready line with TLS listeners beside the plain ones.
var readyFourURLs = regexp.MustCompile(`^ready pulsar://(127\.0\.0\.1:[1-9]\d*) (http://127\.0\.0\.1:[1-9]\d*) ` +
	`pulsar\+ssl://(127\.0\.0\.1:[1-9]\d*) (https://127\.0\.0\.1:[1-9]\d*)\n$`)

// letterbox broker with the configuration the official Go client runs its integration tests
// against (testdata/standalone.conf): token, TLS-certificate and basic authentication at once,
// an anonymous role, plain and TLS listeners side by side, transactions reported as unsupported.
func TestBrokerUpstreamStandaloneConf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"certs", "tokens", "conf"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	place := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ca := authtest.NewCA(t)
	place(ca.CertFile, "certs/cacert.pem")
	cert, key := ca.Issue(t)
	place(cert, "certs/broker-cert.pem")
	place(key, "certs/broker-key.pem")
	secretFile, secret := authtest.SecretKey(t)
	place(secretFile, "tokens/secret.key")
	// admin:123456, the user of the Go client's basic-auth tests, as htpasswd -m writes it.
	if err := os.WriteFile(filepath.Join(dir, "conf/.htpasswd"), []byte("admin:$apr1$abcdefgh$6LbQcMCxitqz7DTxoNR2s1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile("testdata/standalone.conf")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(conf), "@DIR@", dir)
	text = regexp.MustCompile(`(?m)^(brokerServicePort|brokerServicePortTls|webServicePort|webServicePortTls)=\d+$`).ReplaceAllString(text, "$1=0")
	confFile := filepath.Join(dir, "standalone.conf")
	if err := os.WriteFile(confFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := new(syncBuffer), new(syncBuffer)
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"broker", "--in-memory", "--config", confFile}, stdout, stderr) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	var m []string
	brokertest.WaitFor(t, 30*time.Second, "the ready line", func() bool {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("broker exited with %d; stderr:\n%s", code, stderr.String())
		default:
		}
		m = readyFourURLs.FindStringSubmatch(stdout.String())
		return m != nil
	})
	plain, httpURL, tlsAddr, httpsURL := m[1], m[2], m[3], m[4]
	if !strings.Contains(stderr.String(), "transactionCoordinatorEnabled=true is not supported") {
		t.Errorf("transactions not reported as unsupported; stderr:\n%s", stderr.String())
	}

	clientCert, clientKey := ca.IssueClient(t, "admin")
	basic, err := pulsar.NewAuthenticationBasic("admin", "123456")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		url  string
		auth pulsar.Authentication
	}{
		{"token", "pulsar://" + plain, pulsar.NewAuthenticationToken(authtest.Token(t, secret, "admin", time.Hour))},
		{"TLS certificate", "pulsar+ssl://" + tlsAddr, pulsar.NewAuthenticationTLS(clientCert, clientKey)},
		{"basic", "pulsar://" + plain, basic},
		{"basic over TLS", "pulsar+ssl://" + tlsAddr, basic},
	} {
		if err := officialProduce(t, tc.url, ca.CertFile, tc.auth); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// No credentials: the anonymous role, authenticated and then refused by authorization.
	if err := officialProduce(t, "pulsar://"+plain, "", nil); err == nil || !strings.Contains(err.Error(), "uthoriz") {
		t.Errorf("anonymous: %v, want an authorization error", err)
	}

	pem, _ := os.ReadFile(ca.CertFile)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	pair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}
	for _, tc := range []struct{ url, auth string }{
		{httpsURL + "/admin/v2/tenants", ""},
		{httpURL + "/admin/v2/tenants", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:123456"))},
		{httpURL + "/admin/v2/clusters", ""}, // anonymous
	} {
		r, _ := http.NewRequest("GET", tc.url, nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		resp, err := hc.Do(r)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s (%.5s): %d", tc.url, tc.auth, resp.StatusCode)
		}
	}
}

// officialProduce sends one message with the official client, trusting caFile.
func officialProduce(t *testing.T, url, caFile string, a pulsar.Authentication) error {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: url, TLSTrustCertsFilePath: caFile, Authentication: a,
		OperationTimeout: 5 * time.Second, ConnectionTimeout: 5 * time.Second, Logger: plog.DefaultNopLogger()})
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: "persistent://public/default/standalone-conf", SendTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("hello")})
	return err
}
