package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/userconfig"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// --tls-cert-file and --tls-key-file go together, apply to client commands only, and a
// context's pair is replaced as a whole by the flags.
func TestClientCertFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert-file", "/c.pem"}, "--tls-cert-file and --tls-key-file go together"},
		{[]string{"dlq", "ls", "--tls-key-file", "/k.pem"}, "--tls-cert-file and --tls-key-file go together"},
		{[]string{"--tls-cert-file", "/c.pem", "--tls-key-file", "/k.pem", "broker"}, "--tls-cert-file applies to the TUI and replay, not to broker"},
	} {
		code, _, errOut := run(t, tt.args...)
		if code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, ExitUsage, tt.want)
		}
	}
	cfg, err := userconfig.Parse("config.toml", []byte(`
[[context]]
name = "mtls"
service_url = "pulsar+ssl://h:6651"
admin_url = "https://h:8443"
tls_cert_file = "/etc/c.pem"
tls_key_file = "/etc/k.pem"
`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var c clientFlags
	c.useContext(cfg.Contexts[0])
	if c.clientCert != (clientCertFlags{"/etc/c.pem", "/etc/k.pem"}) {
		t.Errorf("from the context: %+v", c.clientCert)
	}
	c = clientFlags{clientCert: clientCertFlags{certFile: "/mine.pem", keyFile: "/mine.key"}, set: []string{"context", "tls-cert-file", "tls-key-file"}}
	c.useContext(cfg.Contexts[0])
	if c.clientCert != (clientCertFlags{"/mine.pem", "/mine.key"}) {
		t.Errorf("flags over the context: %+v", c.clientCert)
	}
}

// mTLS end to end: a broker that requires a trusted client certificate and authenticates by it
// (role = CN, the superuser "ops"); replay and dlq ls with the certificate as flags or from a
// context work, a certificate of another CA is refused at the handshake.
func TestClientCertCommands(t *testing.T) {
	ca := authtest.NewCA(t)
	serverCert, serverKey := ca.Issue(t)
	env := brokertest.Start(t, func(c *broker.Config) {
		c.AuthenticationEnabled, c.AuthorizationEnabled = true, true
		c.AuthenticationProviders = []string{"org.apache.pulsar.broker.authentication.AuthenticationProviderTls"}
		c.SuperUserRoles = []string{"ops"}
		c.TLSCertFile, c.TLSKeyFile, c.TLSTrustCertsFile = serverCert, serverKey, ca.CertFile
		c.TLSRequireTrustedClientCertOnConnect = true
	})
	if !strings.HasPrefix(env.ServiceURL, "pulsar+ssl://") || !strings.HasPrefix(env.AdminURL, "https://") {
		t.Fatalf("URLs %s %s", env.ServiceURL, env.AdminURL)
	}
	cert, key := ca.IssueClient(t, "ops")

	// Three letters, written by our client with the certificate.
	cl, err := client.New(client.Options{ServiceURL: env.ServiceURL, TLSTrustCertsFile: ca.CertFile,
		TLSCertFile: cert, TLSKeyFile: key, Logger: brokertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := brokertest.Ctx(t, 30*time.Second)
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: "orders-app-DLQ", InitialSubscriptionName: "app-dlq", DisableBatching: true})
	if err != nil {
		t.Fatalf("our client with a trusted certificate: %v", err)
	}
	for i := range 3 {
		if _, err := p.Send(ctx, &client.Message{Payload: fmt.Appendf(nil, "m%d", i),
			Properties: map[string]string{client.PropertyRealTopic: "persistent://public/default/orders"}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	writeConfig(t, "[[context]]\nname = \"mtls\"\nservice_url = \""+env.ServiceURL+"\"\nadmin_url = \""+env.AdminURL+"\"\n"+
		"tls_ca_file = \""+ca.CertFile+"\"\ntls_cert_file = \""+cert+"\"\ntls_key_file = \""+key+"\"\n")
	flags := []string{"--service-url", env.ServiceURL, "--admin-url", env.AdminURL, "--tls-ca-file", ca.CertFile,
		"--tls-cert-file", cert, "--tls-key-file", key}
	replay := []string{"replay", "--dlq", "orders-app-DLQ", "--dry-run", "--json"}
	for name, args := range map[string][]string{
		"flags":   append(append([]string{}, flags...), replay...),
		"context": append([]string{"--context", "mtls"}, replay...),
	} {
		rctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		var out, errOut strings.Builder
		code := Run(rctx, args, &out, &errOut)
		cancel()
		if code != ExitOK {
			t.Errorf("%s: exit %d\n%s", name, code, errOut.String())
			continue
		}
		n := 0
		for l := range strings.Lines(out.String()) {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["action"] == "would-move" {
				n++
			}
		}
		if n != 3 {
			t.Errorf("%s: %d letters would move, want 3:\n%s", name, n, out.String())
		}
	}
	if code, out, errOut := run(t, append([]string{"dlq", "ls", "--json"}, flags...)...); code != ExitOK || !strings.Contains(out, "orders-app-DLQ") {
		t.Errorf("dlq ls: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A certificate of another CA: the handshake fails; so does none at all.
	other := authtest.NewCA(t)
	badCert, badKey := other.IssueClient(t, "ops")
	base := []string{"dlq", "ls", "--service-url", env.ServiceURL, "--admin-url", env.AdminURL, "--tls-ca-file", ca.CertFile}
	for name, extra := range map[string][]string{
		"another CA's": {"--tls-cert-file", badCert, "--tls-key-file", badKey},
		"no":           nil,
	} {
		code, out, errOut := run(t, append(append([]string{}, base...), extra...)...)
		if code != ExitFailure || out != "" || !strings.Contains(errOut, "remote error: tls") {
			t.Errorf("%s certificate: exit %d, stdout %q, stderr %q; want %d and a TLS error", name, code, out, errOut, ExitFailure)
		}
	}
	// A key that is not the certificate's is caught before connecting, naming the flag.
	code, _, errOut := run(t, append(append([]string{}, base...), "--tls-cert-file", cert, "--tls-key-file", badKey)...)
	if code != ExitFailure || !strings.Contains(errOut, "--tls-cert-file") {
		t.Errorf("mismatched key: exit %d, stderr %q", code, errOut)
	}
}

// The TUI's source, set up by the client flags as the TUI sets it up: with the certificate it
// lists topics over https and produces and tails over pulsar+ssl; with another CA's, nothing.
func TestClientCertTUISource(t *testing.T) {
	t.Parallel()
	ca := authtest.NewCA(t)
	serverCert, serverKey := ca.Issue(t)
	env := brokertest.Start(t, func(c *broker.Config) {
		c.AuthenticationEnabled, c.AuthorizationEnabled = true, true
		c.AuthenticationProviders = []string{"org.apache.pulsar.broker.authentication.AuthenticationProviderTls"}
		c.SuperUserRoles = []string{"ops"}
		c.TLSCertFile, c.TLSKeyFile, c.TLSTrustCertsFile = serverCert, serverKey, ca.CertFile
		c.TLSRequireTrustedClientCertOnConnect = true
	})
	open := func(cert, key string) *data.Admin {
		t.Helper()
		cf := clientFlags{serviceURL: env.ServiceURL, adminURL: env.AdminURL, tlsCAFile: ca.CertFile,
			clientCert: clientCertFlags{certFile: cert, keyFile: key}}
		opts := data.AdminOptions{AdminURL: cf.adminURL, ServiceURL: cf.serviceURL}
		if err := cf.apply(&opts); err != nil {
			t.Fatal(err)
		}
		a, err := data.NewAdmin(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		return a
	}
	ctx := brokertest.Ctx(t, 30*time.Second)
	const topic = "persistent://public/default/mtls"
	if err := env.Broker.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	a := open(ca.IssueClient(t, "ops"))
	msgs, stop, err := a.Tail(ctx, topic)
	if err != nil {
		t.Fatalf("tail over pulsar+ssl with a client certificate: %v", err)
	}
	defer stop()
	if _, err := a.Produce(ctx, topic, data.ProduceRequest{Payload: []byte("mtls")}); err != nil {
		t.Fatalf("produce with a client certificate: %v", err)
	}
	select {
	case ev := <-msgs:
		if string(ev.Msg.Payload) != "mtls" {
			t.Errorf("tailed %q", ev.Msg.Payload)
		}
	case <-ctx.Done():
		t.Fatal("the tail got nothing")
	}
	if rows, err := a.Topics(ctx, "public/default"); err != nil || len(rows) == 0 {
		t.Fatalf("topics over https with a client certificate: %v, %v", rows, err)
	}
	other := authtest.NewCA(t)
	bad := open(other.IssueClient(t, "ops"))
	if _, err := bad.Topics(ctx, "public/default"); err == nil {
		t.Fatal("listed topics with another CA's certificate")
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = bad.Produce(short, topic, data.ProduceRequest{Payload: []byte("no")})
	if err == nil || !strings.Contains(err.Error(), "tls: unknown certificate authority") {
		t.Fatalf("produce with another CA's certificate: %v, want the handshake's refusal", err)
	}
}
