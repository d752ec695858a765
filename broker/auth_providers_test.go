package broker_test

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Upstream's three providers at once (token, TLS, basic) with an anonymous role, a plain and a
// TLS listener side by side, as upstream's own client tests run their standalone broker.

// htpasswd holds admin:123456 (htpasswd -m, apr1) and old:123456 (htpasswd -d, crypt).
const htpasswd = "admin:$apr1$abcdefgh$6LbQcMCxitqz7DTxoNR2s1\nold:ab01FAX.bQRSU\n"

type providersBroker struct {
	*secureBroker
	ca *authtest.CA
}

func startProvidersBroker(t *testing.T, mods ...func(*broker.Config)) *providersBroker {
	t.Helper()
	ca := authtest.NewCA(t)
	certFile, keyFile := ca.Issue(t)
	conf := filepath.Join(t.TempDir(), ".htpasswd")
	if err := os.WriteFile(conf, []byte(htpasswd), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startSecureBroker(t, append([]func(*broker.Config){func(c *broker.Config) {
		c.AuthenticationProviders = []string{
			"org.apache.pulsar.broker.authentication.AuthenticationProviderTls",
			"org.apache.pulsar.broker.authentication.AuthenticationProviderToken",
			"org.apache.pulsar.broker.authentication.AuthenticationProviderBasic",
		}
		c.BasicAuthConf = conf
		c.AnonymousUserRole = "anonymous"
		c.TLSCertFile, c.TLSKeyFile, c.TLSTrustCertsFile = certFile, keyFile, ca.CertFile
		c.BrokerServicePortTLS = "0"
	}}, mods...)...)
	return &providersBroker{secureBroker: b, ca: ca}
}

func TestAuthProvidersOfficialClient(t *testing.T) {
	t.Parallel()
	b := startProvidersBroker(t)
	if !strings.HasPrefix(b.ServiceURL(), "pulsar://") || !strings.HasPrefix(b.ServiceURLTLS(), "pulsar+ssl://") ||
		b.AddrTLS() == "" || b.AddrTLS() == b.Addr() {
		t.Fatalf("listeners: %s and %s", b.ServiceURL(), b.ServiceURLTLS())
	}
	topic := topicName(t)
	trust := func(o *pulsar.ClientOptions) { o.TLSTrustCertsFilePath = b.ca.CertFile }

	// TLS: the role is the certificate's CN, a superuser.
	cert, key := b.ca.IssueClient(t, "admin")
	tlsClient := tokenClient(t, b.ServiceURLTLS(), "", trust, func(o *pulsar.ClientOptions) {
		o.Authentication = pulsar.NewAuthenticationTLS(cert, key)
	})
	if err := tryProduce(tlsClient, topic); err != nil {
		t.Fatalf("TLS certificate of admin: %v", err)
	}
	// A trusted certificate of a role without permissions is authenticated, then not authorized.
	cert, key = b.ca.IssueClient(t, "nobody")
	nobody := tokenClient(t, b.ServiceURLTLS(), "", trust, func(o *pulsar.ClientOptions) {
		o.Authentication = pulsar.NewAuthenticationTLS(cert, key)
	})
	if err := tryProduce(nobody, topic); err == nil || !strings.Contains(err.Error(), "uthoriz") {
		t.Fatalf("TLS certificate of nobody: %v, want an authorization error", err)
	}

	// Basic, on the plain listener and on the TLS one; crypt and apr1 hashes.
	for _, tc := range []struct{ url, user, pw string }{
		{b.ServiceURL(), "admin", "123456"}, {b.ServiceURL(), "old", "123456"}, {b.ServiceURLTLS(), "admin", "123456"},
	} {
		basic, err := pulsar.NewAuthenticationBasic(tc.user, tc.pw)
		if err != nil {
			t.Fatal(err)
		}
		c := tokenClient(t, tc.url, "", trust, func(o *pulsar.ClientOptions) { o.Authentication = basic })
		if err := tryProduce(c, topic); err != nil && tc.user == "admin" {
			t.Fatalf("basic %s on %s: %v", tc.user, tc.url, err)
		} else if tc.user == "old" && (err == nil || !strings.Contains(err.Error(), "uthoriz")) {
			t.Fatalf("basic old (crypt): %v, want authenticated and not authorized", err)
		}
	}
	wrong, _ := pulsar.NewAuthenticationBasic("admin", "1234567")
	if err := tryProduce(tokenClient(t, b.ServiceURL(), "", func(o *pulsar.ClientOptions) { o.Authentication = wrong }), topic); err == nil {
		t.Fatal("a wrong basic password produced")
	}

	// Token, on both listeners.
	for _, url := range []string{b.ServiceURL(), b.ServiceURLTLS()} {
		if err := tryProduce(tokenClient(t, url, b.token(t, "admin"), trust), topic); err != nil {
			t.Fatalf("token on %s: %v", url, err)
		}
	}
	// A bad token is refused, not made anonymous (upstream: the method has a provider).
	if err := tryProduce(tokenClient(t, b.ServiceURL(), "not-a-token"), topic); err == nil ||
		strings.Contains(err.Error(), "uthoriz") {
		t.Fatalf("bad token: %v, want an authentication error", err)
	}
	// No credentials: the anonymous role, which authorization refuses until it is granted.
	anon := tokenClient(t, b.ServiceURL(), "")
	if err := tryProduce(anon, topic); err == nil || !strings.Contains(err.Error(), "uthoriz") {
		t.Fatalf("anonymous: %v, want an authorization error", err)
	}
}

// Anonymous clients are served when authorization is off: with no credentials, or with a
// method no provider takes.
func TestAuthAnonymousRole(t *testing.T) {
	t.Parallel()
	b := startProvidersBroker(t, func(c *broker.Config) { c.AuthorizationEnabled = false })
	if err := tryProduce(tokenClient(t, b.ServiceURL(), ""), topicName(t)); err != nil {
		t.Fatalf("anonymous on the plain listener: %v", err)
	}
	c, cmd := rawConnect(t, b.Broker, "athens", []byte("x"), false)
	if cmd.GetType() != pb.BaseCommand_CONNECTED {
		t.Fatalf("a method without a provider: %v, want CONNECTED as the anonymous role", cmd)
	}
	c.nc.Close()
	// The tls method on a plain connection has no certificate: refused, not anonymous.
	c, cmd = rawConnect(t, b.Broker, "tls", nil, false)
	expectAuthError(t, c, cmd)
	// Without an anonymous role, no credentials are refused.
	strict := startProvidersBroker(t, func(c *broker.Config) { c.AnonymousUserRole = "" })
	c, cmd = rawConnect(t, strict.Broker, "", nil, false)
	expectAuthError(t, c, cmd)
}

// mTLS: with tlsRequireTrustedClientCertOnConnect a certificate of another CA, or none, fails
// the handshake, for the official client and ours; a trusted one connects with its CN's role.
func TestAuthTLSRequireTrustedClientCert(t *testing.T) {
	t.Parallel()
	b := startProvidersBroker(t, func(c *broker.Config) { c.TLSRequireTrustedClientCertOnConnect = true })
	topic := topicName(t)
	other := authtest.NewCA(t)
	trust := func(o *pulsar.ClientOptions) { o.TLSTrustCertsFilePath = b.ca.CertFile }
	goodCert, goodKey := b.ca.IssueClient(t, "admin")
	badCert, badKey := other.IssueClient(t, "admin")

	official := func(cert, key string) error {
		c := tokenClient(t, b.ServiceURLTLS(), "", trust, func(o *pulsar.ClientOptions) {
			o.Authentication = pulsar.NewAuthenticationTLS(cert, key)
		})
		return tryProduce(c, topic)
	}
	if err := official(goodCert, goodKey); err != nil {
		t.Fatalf("official client, trusted certificate: %v", err)
	}
	if err := official(badCert, badKey); err == nil {
		t.Fatal("official client, certificate of another CA: connected")
	}
	// A token without a certificate: the handshake needs one.
	if err := tryProduce(tokenClient(t, b.ServiceURLTLS(), b.token(t, "admin"), trust), topic); err == nil {
		t.Fatal("official client without a certificate: connected")
	}

	ours := func(cert, key string) error {
		c, err := client.New(client.Options{ServiceURL: b.ServiceURLTLS(), TLSTrustCertsFile: b.ca.CertFile,
			TLSCertFile: cert, TLSKeyFile: key, OperationTimeout: 3 * time.Second, ConnectionTimeout: 3 * time.Second,
			Logger: testLogger(t, "ours: ")})
		if err != nil {
			return err
		}
		defer c.Close()
		ctx := testCtx(t, 10*time.Second)
		p, err := c.CreateProducer(ctx, client.ProducerOptions{Topic: topic})
		if err != nil {
			return err
		}
		defer p.Close()
		_, err = p.Send(ctx, &client.Message{Payload: []byte("ours")})
		return err
	}
	if err := ours(goodCert, goodKey); err != nil {
		t.Fatalf("our client, trusted certificate: %v", err)
	}
	err := ours(badCert, badKey)
	var se *client.ServerError
	if err == nil || errors.As(err, &se) {
		t.Fatalf("our client, certificate of another CA: %v, want a handshake failure", err)
	}
}

// Raw CONNECT: the basic method with user:password, and bad forms of it.
func TestAuthRawBasic(t *testing.T) {
	t.Parallel()
	b := startProvidersBroker(t)
	c, cmd := rawConnect(t, b.Broker, "basic", []byte("admin:123456"), false)
	if cmd.GetType() != pb.BaseCommand_CONNECTED {
		t.Fatalf("basic admin: %v", cmd)
	}
	c.nc.Close()
	for _, data := range []string{"admin:", "admin", "admin:1:2", "nobody:123456", base64.StdEncoding.EncodeToString([]byte("admin:123456"))} {
		c, cmd := rawConnect(t, b.Broker, "basic", []byte(data), false)
		expectAuthError(t, c, cmd)
	}
	// The deprecated enum without a method name is "none": anonymous.
	c = dialRaw(t, b.Broker)
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
		ClientVersion: proto.String("raw"), ProtocolVersion: proto.Int32(20), AuthMethod: pb.AuthMethod_AuthMethodNone.Enum(),
	}})
	if cmd := c.next().Cmd; cmd.GetType() != pb.BaseCommand_CONNECTED {
		t.Fatalf("AuthMethodNone: %v", cmd)
	}
	c.nc.Close()
}

// tlsAllowInsecureConnection takes any client certificate unchecked, as upstream's insecure
// trust manager: another CA's certificate connects, with its CN's role.
func TestAuthTLSAllowInsecureConnection(t *testing.T) {
	t.Parallel()
	b := startProvidersBroker(t, func(c *broker.Config) {
		c.TLSAllowInsecureConnection, c.TLSRequireTrustedClientCertOnConnect = true, true
	})
	cert, key := authtest.NewCA(t).IssueClient(t, "admin")
	c, err := client.New(client.Options{ServiceURL: b.ServiceURLTLS(), TLSTrustCertsFile: b.ca.CertFile,
		TLSCertFile: cert, TLSKeyFile: key, OperationTimeout: 5 * time.Second, Logger: testLogger(t, "ours: ")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 10*time.Second)
	p, err := c.CreateProducer(ctx, client.ProducerOptions{Topic: topicName(t)})
	if err != nil {
		t.Fatalf("another CA's certificate with tlsAllowInsecureConnection: %v", err)
	}
	p.Close()
}
