package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/broker/auth"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

func TestTokenSecretKeyAndCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	if code, out, errOut := run(t, "token", "secret-key", "--output", keyFile); code != ExitOK || out != "" || errOut != "" {
		t.Fatalf("secret-key: %d %q %q", code, out, errOut)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil || len(key) != auth.SecretKeySize {
		t.Fatalf("key: %d bytes, %v", len(key), err)
	}
	if st, _ := os.Stat(keyFile); st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v", st.Mode().Perm())
	}
	// Never overwritten.
	if code, _, errOut := run(t, "token", "secret-key", "--output", keyFile); code == ExitOK || !strings.Contains(errOut, "exists") {
		t.Fatalf("overwrote the key: %d %q", code, errOut)
	}

	p, err := auth.NewTokenProvider(auth.TokenConfig{SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{keyFile, "file://" + keyFile} {
		code, out, errOut := run(t, "token", "create", "--secret-key", spec, "--subject", "app", "--expiry", "1h")
		if code != ExitOK || errOut != "" {
			t.Fatalf("create: %d %q", code, errOut)
		}
		pr, err := p.Authenticate(strings.TrimSpace(out))
		if err != nil || pr.Role != "app" || time.Until(pr.Expires) > time.Hour || time.Until(pr.Expires) < 59*time.Minute {
			t.Fatalf("token: %+v, %v", pr, err)
		}
	}
	code, out, _ := run(t, "token", "create", "--secret-key", keyFile, "--subject", "forever")
	if pr, err := p.Authenticate(strings.TrimSpace(out)); code != ExitOK || err != nil || !pr.Expires.IsZero() {
		t.Fatalf("no expiry: %+v, %v", pr, err)
	}
	code, out, _ = run(t, "token", "create", "--secret-key", keyFile, "--subject", "week", "--expiry", "7d")
	if pr, err := p.Authenticate(strings.TrimSpace(out)); code != ExitOK || err != nil || time.Until(pr.Expires) < 6*24*time.Hour {
		t.Fatalf("7d: %+v, %v", pr, err)
	}

	b64File := filepath.Join(dir, "secret.b64")
	if code, _, _ := run(t, "token", "secret-key", "--output", b64File, "--base64"); code != ExitOK {
		t.Fatal("secret-key --base64")
	}
	b64, _ := os.ReadFile(b64File)
	if code, _, errOut := run(t, "token", "create", "--secret-key", "data:;base64,"+string(b64), "--subject", "x"); code != ExitOK {
		t.Fatalf("data: URL key: %q", errOut)
	}

	for _, args := range [][]string{
		{"token"},
		{"token", "nope"},
		{"token", "secret-key"},
		{"token", "create", "--subject", "x"},
		{"token", "create", "--secret-key", keyFile},
		{"token", "create", "--secret-key", keyFile, "--subject", "x", "--expiry", "soon"},
		{"token", "create", "--secret-key", keyFile, "--subject", "x", "--expiry", "-1h"},
		{"token", "create", "--secret-key", filepath.Join(dir, "missing"), "--subject", "x"},
		{"token", "create", "--secret-key", "data:;base64,c2hvcnQ=", "--subject", "x"},
	} {
		if code, out, errOut := run(t, args...); code == ExitOK || out != "" || strings.Contains(errOut, string(key)) {
			t.Errorf("%v: %d %q %q", args, code, out, errOut)
		}
	}
	if code, out, _ := run(t, "token", "--help"); code != ExitOK || !strings.Contains(out, "secret-key --output FILE") {
		t.Errorf("help: %d %q", code, out)
	}
}

var readyTLSLine = regexp.MustCompile(`^ready pulsar\+ssl://(127\.0\.0\.1:[1-9]\d*) (https://127\.0\.0\.1:[1-9]\d*)\n$`)

// letterbox broker with a token key, superusers and TLS: the ready line names the TLS URLs, the
// official client connects with the CA and a token made by `letterbox token create`, the admin
// API wants the token.
func TestBrokerWithTokensAndTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	if code, _, errOut := run(t, "token", "secret-key", "--output", keyFile); code != ExitOK {
		t.Fatal(errOut)
	}
	_, out, _ := run(t, "token", "create", "--secret-key", keyFile, "--subject", "admin")
	tok := strings.TrimSpace(out)
	ca := authtest.NewCA(t)
	cert, certKey := ca.Issue(t)

	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := new(syncBuffer), new(syncBuffer)
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"broker", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--in-memory",
			"--token-secret-key", keyFile, "--superuser-roles", "admin", "--tls-cert-file", cert, "--tls-key-file", certKey}, stdout, stderr)
	}()
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
		m = readyTLSLine.FindStringSubmatch(stdout.String())
		return m != nil
	})

	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: "pulsar+ssl://" + m[1], TLSTrustCertsFilePath: ca.CertFile,
		Authentication: pulsar.NewAuthenticationToken(tok), OperationTimeout: 5 * time.Second, Logger: plog.DefaultNopLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: "t"})
	if err != nil {
		t.Fatalf("official client with token over TLS: %v", err)
	}
	p.Close()

	pem, _ := os.ReadFile(ca.CertFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer " + tok, 200}} {
		req, _ := http.NewRequest("GET", m[2]+"/admin/v2/tenants", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("admin with %q: %d, want %d", tc.auth[:min(len(tc.auth), 10)], resp.StatusCode, tc.want)
		}
	}
	if strings.Contains(stderr.String(), tok) || strings.Contains(stdout.String(), tok) {
		t.Error("the token was printed")
	}
	if strings.Contains(stderr.String(), "authentication is off") {
		t.Error("warned about authentication being off")
	}
}

// Binding beyond loopback with authentication off warns; the usage errors of the flags.
func TestBrokerSecurityWarningsAndErrors(t *testing.T) {
	t.Parallel()
	rb := startBrokerAnyHost(t, "--listen", "0.0.0.0:0", "--http", "127.0.0.1:0", "--in-memory")
	if !strings.Contains(rb, "authentication is off") {
		t.Errorf("no warning; stderr:\n%s", rb)
	}
	for _, args := range [][]string{
		{"broker", "--in-memory", "--token-secret-key", "a", "--token-public-key", "b"},
		{"broker", "--in-memory", "--tls-cert-file", "a"},
		{"broker", "--in-memory", "--superuser-roles", "admin"},
	} {
		if code, _, _ := run(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
	if code, _, errOut := run(t, "broker", "--in-memory", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
		"--token-secret-key", filepath.Join(t.TempDir(), "missing")); code == ExitOK || !strings.Contains(errOut, "tokenSecretKey") {
		t.Errorf("missing key: %d %q", code, errOut)
	}
}

// startBrokerAnyHost runs `letterbox broker` until its ready line and returns its stderr then.
func startBrokerAnyHost(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := new(syncBuffer), new(syncBuffer)
	done := make(chan int, 1)
	go func() { done <- Run(ctx, append([]string{"broker"}, args...), stdout, stderr) }()
	defer func() {
		cancel()
		<-done
	}()
	brokertest.WaitFor(t, 30*time.Second, "the ready line", func() bool {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("broker exited with %d; stderr:\n%s", code, stderr.String())
		default:
		}
		return strings.HasPrefix(stdout.String(), "ready ")
	})
	return stderr.String()
}
