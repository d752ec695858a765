package broker_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Security acceptance: the official Go client with AuthenticationToken against a broker with
// token authentication and authorization on (superuser "admin"), raw frames for what the
// official client does not show (the exact ERROR, AUTH_CHALLENGE), and TLS with a CA made here.

type secureBroker struct {
	*broker.Broker
	key []byte
}

func startSecureBroker(t *testing.T, mods ...func(*broker.Config)) *secureBroker {
	t.Helper()
	path, key := authtest.SecretKey(t)
	b := startBroker(t, append([]func(*broker.Config){func(c *broker.Config) {
		c.AuthenticationEnabled = true
		c.AuthorizationEnabled = true
		c.TokenSecretKey = "file://" + path
		c.SuperUserRoles = []string{"admin"}
	}}, mods...)...)
	return &secureBroker{Broker: b, key: key}
}

func (b *secureBroker) token(t *testing.T, role string) string {
	return authtest.Token(t, b.key, role, time.Hour)
}

// tokenClient connects an official client with token (none when empty).
func tokenClient(t *testing.T, url, token string, edit ...func(*pulsar.ClientOptions)) pulsar.Client {
	t.Helper()
	opts := pulsar.ClientOptions{
		URL:               url,
		OperationTimeout:  3 * time.Second,
		ConnectionTimeout: 3 * time.Second,
		Logger:            plog.NewLoggerWithSlog(testLogger(t, "client: ")),
	}
	if token != "" {
		opts.Authentication = pulsar.NewAuthenticationToken(token)
	}
	for _, e := range edit {
		e(&opts)
	}
	c, err := pulsar.NewClient(opts)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func tryProduce(c pulsar.Client, topic string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, SendTimeout: 3 * time.Second})
	if err != nil {
		return err
	}
	defer p.Close()
	_, err = p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("hello")})
	return err
}

func trySubscribe(c pulsar.Client, topic, sub string) (pulsar.Consumer, error) {
	return c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: sub,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
}

// rawConnect sends CONNECT with the given credentials and returns the first answer.
func rawConnect(t *testing.T, b *broker.Broker, method string, data []byte, supportsRefresh bool) (*rawConn, *pb.BaseCommand) {
	t.Helper()
	c := dialRaw(t, b)
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
		ClientVersion: proto.String("raw"), ProtocolVersion: proto.Int32(20),
		AuthMethodName: proto.String(method), AuthData: data,
		FeatureFlags: &pb.FeatureFlags{SupportsAuthRefresh: proto.Bool(supportsRefresh)},
	}})
	return c, c.next().Cmd
}

// expectAuthError checks upstream's answer to bad credentials: ERROR{-1, AuthenticationError,
// "Failed to authenticate"}, then the close.
func expectAuthError(t *testing.T, c *rawConn, cmd *pb.BaseCommand) {
	t.Helper()
	e := cmd.GetError()
	if cmd.GetType() != pb.BaseCommand_ERROR || e.GetRequestId() != math.MaxUint64 ||
		e.GetError() != pb.ServerError_AuthenticationError || e.GetMessage() != "Failed to authenticate" {
		t.Fatalf("answer = %v, want ERROR{u64 max, AuthenticationError, Failed to authenticate}", cmd)
	}
	c.expectClosed(rawTimeout)
}

func TestAuthOfficialClientCredentials(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	topic := topicName(t)
	otherKey := make([]byte, 32)
	rand.Read(otherKey)
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin"}`)) + "."

	for _, tc := range []struct{ name, token string }{
		{"no token", ""},
		{"expired", authtest.Token(t, b.key, "admin", -time.Minute)},
		{"wrongly signed", authtest.Token(t, otherKey, "admin", time.Hour)},
		{"alg none", none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := tryProduce(tokenClient(t, b.ServiceURL(), tc.token), topic); err == nil {
				t.Fatal("produce succeeded")
			}
			// What the official client received, frame by frame.
			c, first := rawConnect(t, b.Broker, map[bool]string{true: "", false: "token"}[tc.token == ""], []byte(tc.token), true)
			expectAuthError(t, c, first)
		})
	}
	t.Run("superuser", func(t *testing.T) {
		t.Parallel()
		if err := tryProduce(tokenClient(t, b.ServiceURL(), b.token(t, "admin")), topic); err != nil {
			t.Fatalf("superuser produce: %v", err)
		}
	})
}

func TestAuthOfficialClientPermissions(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	topic := topicName(t)
	app := tokenClient(t, b.ServiceURL(), b.token(t, "app"))

	err := tryProduce(app, topic)
	if err == nil || !strings.Contains(err.Error(), "AuthorizationError") {
		t.Fatalf("produce without permission: %v, want AuthorizationError", err)
	}
	if _, err := trySubscribe(app, topic, "s"); err == nil || !strings.Contains(err.Error(), "AuthorizationError") {
		t.Fatalf("subscribe without permission: %v, want AuthorizationError", err)
	}
	if ts, _ := b.Topics("public/default", true); len(ts) != 0 {
		t.Fatalf("refused requests created topics: %v", ts)
	}

	// Produce granted: producing works, consuming still does not.
	if err := b.GrantNamespacePermission("public/default", "app", []string{"produce"}); err != nil {
		t.Fatal(err)
	}
	if err := tryProduce(app, topic); err != nil {
		t.Fatalf("produce with permission: %v", err)
	}
	if _, err := trySubscribe(app, topic, "s"); err == nil || !strings.Contains(err.Error(), "AuthorizationError") {
		t.Fatalf("subscribe with produce only: %v, want AuthorizationError", err)
	}
	// Consume granted too: the message is there.
	if err := b.GrantNamespacePermission("public/default", "app", []string{"produce", "consume"}); err != nil {
		t.Fatal(err)
	}
	cons, err := trySubscribe(app, topic, "s")
	if err != nil {
		t.Fatalf("subscribe with permission: %v", err)
	}
	defer cons.Close()
	if m := receiveOne(t, cons, 5*time.Second); string(m.Payload()) != "hello" {
		t.Fatalf("got %q", m.Payload())
	}
	// Revoked: new producers are refused again.
	if err := b.RevokeNamespacePermission("public/default", "app"); err != nil {
		t.Fatal(err)
	}
	if err := tryProduce(app, topic); err == nil || !strings.Contains(err.Error(), "AuthorizationError") {
		t.Fatalf("produce after revoke: %v, want AuthorizationError", err)
	}
}

func TestAuthTenantAdmin(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	if err := b.CreateTenant("acme", adminapi.TenantInfo{AdminRoles: []string{"ops"}, AllowedClusters: []string{"standalone"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateNamespace("acme/orders", nil); err != nil {
		t.Fatal(err)
	}
	ops := tokenClient(t, b.ServiceURL(), b.token(t, "ops"))
	if err := tryProduce(ops, "persistent://acme/orders/t"); err != nil {
		t.Fatalf("tenant admin produce: %v", err)
	}
	if err := tryProduce(ops, topicName(t)); err == nil {
		t.Fatal("tenant admin of acme produced in public/default")
	}
	for _, c := range []struct {
		role string
		op   broker.Operation
		res  string
		want bool
	}{
		{"ops", broker.OpTenantAdmin, "acme", true},
		{"ops", broker.OpTenantAdmin, "public", false},
		{"ops", broker.OpSuperUser, "", false},
		{"admin", broker.OpSuperUser, "", true},
		{"ops", broker.OpNamespaceConsume, "acme/orders", true},
		{"app", broker.OpLookup, "persistent://acme/orders/t", false},
		{"", broker.OpLookup, "persistent://acme/orders/t", false},
		{"ops", broker.OpLookup, "not a topic//", false},
	} {
		if got := b.Authorize(c.role, c.op, c.res, ""); got != c.want {
			t.Errorf("Authorize(%q, %v, %q) = %v", c.role, c.op, c.res, got)
		}
	}
}

// PIP-124: a producer naming an initial subscription needs consume too; without it nothing is
// created.
func TestAuthInitialSubscriptionNeedsConsume(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	topic := topicName(t)
	if err := b.GrantNamespacePermission("public/default", "app", []string{"produce"}); err != nil {
		t.Fatal(err)
	}
	c, first := rawConnect(t, b.Broker, "token", []byte(b.token(t, "app")), true)
	if first.GetType() != pb.BaseCommand_CONNECTED {
		t.Fatalf("CONNECT: %v", first)
	}
	producer := func() *pb.BaseCommand {
		return c.request(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
			Topic: proto.String(topic), ProducerId: proto.Uint64(c.id()), RequestId: proto.Uint64(c.id()),
			InitialSubscriptionName: proto.String("init"),
		}}, pb.BaseCommand_ERROR)
	}
	if e := producer().GetError(); e.GetError() != pb.ServerError_AuthorizationError {
		t.Fatalf("PRODUCER with an initial subscription, produce only: %v", e)
	}
	if subs, err := b.Subscriptions(topic); err == nil && len(subs) > 0 {
		t.Fatalf("subscriptions created: %v", subs)
	}
	if err := b.GrantNamespacePermission("public/default", "app", []string{"produce", "consume"}); err != nil {
		t.Fatal(err)
	}
	c.request(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
		Topic: proto.String(topic), ProducerId: proto.Uint64(c.id()), RequestId: proto.Uint64(c.id()),
		InitialSubscriptionName: proto.String("init"),
	}}, pb.BaseCommand_PRODUCER_SUCCESS)
	if subs, err := b.Subscriptions(topic); err != nil || len(subs) != 1 || subs[0] != "init" {
		t.Fatalf("subscriptions = %v, %v; want [init]", subs, err)
	}
}

// Lookups are checked too, with the typed responses the Go client expects.
func TestAuthRawLookupRefused(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	c, first := rawConnect(t, b.Broker, "token", []byte(b.token(t, "app")), true)
	if first.GetType() != pb.BaseCommand_CONNECTED {
		t.Fatalf("CONNECT: %v", first)
	}
	lr := c.request(&pb.BaseCommand{Type: pb.BaseCommand_LOOKUP.Enum(), LookupTopic: &pb.CommandLookupTopic{
		Topic: proto.String(topicName(t)), RequestId: proto.Uint64(c.id()),
	}}, pb.BaseCommand_LOOKUP_RESPONSE).GetLookupTopicResponse()
	if lr.GetResponse() != pb.CommandLookupTopicResponse_Failed || lr.GetError() != pb.ServerError_AuthorizationError {
		t.Fatalf("LOOKUP: %v", lr)
	}
	pm := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PARTITIONED_METADATA.Enum(), PartitionMetadata: &pb.CommandPartitionedTopicMetadata{
		Topic: proto.String(topicName(t)), RequestId: proto.Uint64(c.id()),
	}}, pb.BaseCommand_PARTITIONED_METADATA_RESPONSE).GetPartitionMetadataResponse()
	if pm.GetResponse() != pb.CommandPartitionedTopicMetadataResponse_Failed || pm.GetError() != pb.ServerError_AuthorizationError {
		t.Fatalf("PARTITIONED_METADATA: %v", pm)
	}
	e := c.request(&pb.BaseCommand{Type: pb.BaseCommand_GET_TOPICS_OF_NAMESPACE.Enum(), GetTopicsOfNamespace: &pb.CommandGetTopicsOfNamespace{
		Namespace: proto.String("public/default"), RequestId: proto.Uint64(c.id()),
	}}, pb.BaseCommand_ERROR).GetError()
	if e.GetError() != pb.ServerError_AuthorizationError {
		t.Fatalf("GET_TOPICS_OF_NAMESPACE: %v", e)
	}
}

// Malformed credentials of every kind are refused the same way, and the broker keeps serving.
func TestAuthRawMalformedCredentials(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rs256, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "admin"}).SignedString(rsaKey)
	good := b.token(t, "admin")
	parts := strings.Split(good, ".")
	for _, tc := range []struct {
		name   string
		method string
		data   []byte
	}{
		{"empty method and data", "", nil},
		{"other method", "basic", []byte("admin:admin")},
		{"tls method", "tls", nil},
		{"token method, no data", "token", nil},
		{"garbage", "token", []byte("garbage")},
		{"binary", "token", []byte{0, 0xff, 0xfe, '.', 1, '.', 2}},
		{"huge", "token", []byte(strings.Repeat("a.", 40000))},
		{"Bearer prefix", "token", []byte("Bearer " + good)},
		{"payload swapped", "token", []byte(parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"root"}`)) + "." + parts[2])},
		{"signature dropped", "token", []byte(parts[0] + "." + parts[1] + ".")},
		{"RS256 to a secret-key broker", "token", []byte(rs256)},
		{"method in the wrong case", "Token", []byte(good)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, first := rawConnect(t, b.Broker, tc.method, tc.data, true)
			expectAuthError(t, c, first)
		})
	}
	// A proxy's original principal is refused: no proxy roles exist.
	c := dialRaw(t, b.Broker)
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
		ClientVersion: proto.String("raw"), ProtocolVersion: proto.Int32(20),
		AuthMethodName: proto.String("token"), AuthData: []byte(good), OriginalPrincipal: proto.String("someone"),
	}})
	expectAuthError(t, c, c.next().Cmd)

	if err := tryProduce(tokenClient(t, b.ServiceURL(), good), topicName(t)); err != nil {
		t.Fatalf("the broker stopped serving good clients: %v", err)
	}
}

// With authentication off (the default), any credentials are accepted, as before.
func TestAuthOffAcceptsAnything(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	for _, m := range []string{"", "token", "basic"} {
		_, first := rawConnect(t, b, m, []byte("not a token"), false)
		if first.GetType() != pb.BaseCommand_CONNECTED {
			t.Fatalf("method %q: %v", m, first)
		}
	}
	if b.AuthenticationEnabled() || b.AuthorizationEnabled() || !b.Authorize("", broker.OpSuperUser, "", "") {
		t.Fatal("security is on by default")
	}
	if err := tryProduce(tokenClient(t, b.ServiceURL(), "whatever"), topicName(t)); err != nil {
		t.Fatal(err)
	}
}

// Expired credentials are challenged after CONNECTED; the official client answers with fresh
// ones on the same connection. A client without supports_auth_refresh is closed instead.
func TestAuthRefreshChallenge(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t, func(c *broker.Config) { c.AuthenticationRefreshCheck = 100 * time.Millisecond })
	var challenges, responses atomic.Int32
	intercept(t, b.Broker, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		switch cmd.GetType() {
		case pb.BaseCommand_AUTH_CHALLENGE:
			challenges.Add(1)
		case pb.BaseCommand_AUTH_RESPONSE:
			responses.Add(1)
		}
		return broker.Verdict{}
	})
	// Tokens good for 1 s (exp has a one-second resolution), fresh on every call.
	supplier := func() (string, error) { return authtest.Token(t, b.key, "admin", 1500*time.Millisecond), nil }
	c := tokenClient(t, b.ServiceURL(), "", func(o *pulsar.ClientOptions) {
		o.Authentication = pulsar.NewAuthenticationTokenFromSupplier(supplier)
	})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topicName(t)})
	waitFor(t, 10*time.Second, func() bool { return responses.Load() >= 2 })
	if _, err := p.Send(testCtx(t, 5*time.Second), &pulsar.ProducerMessage{Payload: []byte("after refresh")}); err != nil {
		t.Fatalf("send after refresh: %v", err)
	}
	if challenges.Load() < 2 {
		t.Fatalf("challenges = %d", challenges.Load())
	}

	// No refresh support: closed once expired.
	raw, first := rawConnect(t, b.Broker, "token", []byte(authtest.Token(t, b.key, "admin", time.Second)), false)
	if first.GetType() != pb.BaseCommand_CONNECTED {
		t.Fatalf("CONNECT: %v", first)
	}
	raw.expectClosed(5 * time.Second)

	// Refresh support, but the answer names another role: closed.
	raw, first = rawConnect(t, b.Broker, "token", []byte(authtest.Token(t, b.key, "admin", time.Second)), true)
	if first.GetType() != pb.BaseCommand_CONNECTED {
		t.Fatalf("CONNECT: %v", first)
	}
	ch := raw.expect(pb.BaseCommand_AUTH_CHALLENGE).GetAuthChallenge()
	if ch.GetChallenge().GetAuthMethodName() != "token" {
		t.Fatalf("challenge %v", ch)
	}
	raw.send(&pb.BaseCommand{Type: pb.BaseCommand_AUTH_RESPONSE.Enum(), AuthResponse: &pb.CommandAuthResponse{
		Response: &pb.AuthData{AuthMethodName: proto.String("token"), AuthData: []byte(b.token(t, "someone-else"))},
	}})
	raw.expectClosed(5 * time.Second)
}

func TestAuthConfigErrors(t *testing.T) {
	t.Parallel()
	_, key := authtest.SecretKey(t)
	dataURL := "data:;base64," + base64.StdEncoding.EncodeToString(key)
	for _, tc := range []struct {
		name string
		edit func(*broker.Config)
	}{
		{"no key", func(c *broker.Config) { c.AuthenticationEnabled = true }},
		{"short key", func(c *broker.Config) {
			c.AuthenticationEnabled, c.TokenSecretKey = true, "data:;base64,"+base64.StdEncoding.EncodeToString([]byte("short"))
		}},
		{"missing key file", func(c *broker.Config) { c.AuthenticationEnabled, c.TokenSecretKey = true, "file:///nonexistent/key" }},
		{"authorization without authentication", func(c *broker.Config) { c.AuthorizationEnabled = true }},
		{"both keys", func(c *broker.Config) {
			c.AuthenticationEnabled, c.TokenSecretKey, c.TokenPublicKey = true, dataURL, dataURL
		}},
		{"public key that is not one", func(c *broker.Config) { c.AuthenticationEnabled, c.TokenPublicKey = true, dataURL }},
		{"cert without key", func(c *broker.Config) { c.TLSCertFile = "/nonexistent.pem" }},
	} {
		cfg := broker.DefaultConfig()
		cfg.Logger = testLogger(t, "")
		tc.edit(&cfg)
		if b, err := broker.New(broker.WithConfig(cfg)); err == nil {
			b.Close()
			t.Errorf("%s: broker started", tc.name)
		} else if strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(key)) {
			t.Errorf("%s: error quotes the key: %v", tc.name, err)
		}
	}
	cfg := broker.DefaultConfig()
	cfg.Logger = testLogger(t, "")
	cfg.AuthenticationEnabled, cfg.TokenSecretKey = true, dataURL
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		t.Fatalf("data: URL key: %v", err)
	}
	b.Close()
}

func TestTLSOfficialAndOurClient(t *testing.T) {
	t.Parallel()
	ca := authtest.NewCA(t)
	certFile, keyFile := ca.Issue(t)
	b := startSecureBroker(t, func(c *broker.Config) { c.TLSCertFile, c.TLSKeyFile = certFile, keyFile })
	if !strings.HasPrefix(b.ServiceURL(), "pulsar+ssl://") {
		t.Fatalf("ServiceURL = %s", b.ServiceURL())
	}
	topic := topicName(t)
	tok := b.token(t, "admin")

	// The official client trusting the CA.
	c := tokenClient(t, b.ServiceURL(), tok, func(o *pulsar.ClientOptions) { o.TLSTrustCertsFilePath = ca.CertFile })
	if err := tryProduce(c, topic); err != nil {
		t.Fatalf("official client over TLS: %v", err)
	}
	// Another CA: the handshake fails.
	other := authtest.NewCA(t)
	bad := tokenClient(t, b.ServiceURL(), tok, func(o *pulsar.ClientOptions) { o.TLSTrustCertsFilePath = other.CertFile })
	if err := tryProduce(bad, topic); err == nil {
		t.Fatal("official client trusted a certificate from another CA")
	}
	// Plain TCP to the TLS listener: no CONNECTED.
	if err := tryProduce(tokenClient(t, "pulsar://"+b.Addr(), tok), topic); err == nil {
		t.Fatal("plain client connected to the TLS listener")
	}

	// Our client, token and CA.
	ours, err := client.New(client.Options{ServiceURL: b.ServiceURL(), Token: tok, TLSTrustCertsFile: ca.CertFile,
		OperationTimeout: 5 * time.Second, Logger: testLogger(t, "ours: ")})
	if err != nil {
		t.Fatal(err)
	}
	defer ours.Close()
	ctx := testCtx(t, 10*time.Second)
	cons, err := ours.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "ours",
		InitialPosition: client.Earliest})
	if err != nil {
		t.Fatalf("our client over TLS with a token: %v", err)
	}
	defer cons.Close()
	m, err := cons.Receive(ctx)
	if err != nil || string(m.Payload) != "hello" {
		t.Fatalf("receive: %v, %v", m, err)
	}
	// Our client without the token is refused.
	anon, err := client.New(client.Options{ServiceURL: b.ServiceURL(), TLSTrustCertsFile: ca.CertFile,
		OperationTimeout: 2 * time.Second, ConnectionTimeout: 2 * time.Second, Logger: testLogger(t, "anon: ")})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.Subscribe(testCtx(t, 5*time.Second), client.ConsumerOptions{Topic: topic, SubscriptionName: "anon"}); err == nil {
		t.Fatal("our client subscribed without a token")
	}
}

// Our client answers AUTH_CHALLENGE on the same connection with the token file's new content,
// and reports a refused CONNECT as AuthenticationError.
func TestAuthOurClientRefreshAndRefusal(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t, func(c *broker.Config) { c.AuthenticationRefreshCheck = 100 * time.Millisecond })
	var connects, responses atomic.Int32
	intercept(t, b.Broker, func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		switch cmd.GetType() {
		case pb.BaseCommand_CONNECT:
			connects.Add(1)
		case pb.BaseCommand_AUTH_RESPONSE:
			responses.Add(1)
		}
		return broker.Verdict{}
	})
	tokenFile := t.TempDir() + "/token"
	writeToken := func(ttl time.Duration) {
		if err := os.WriteFile(tokenFile, []byte(authtest.Token(t, b.key, "admin", ttl)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeToken(1500 * time.Millisecond)
	ours, err := client.New(client.Options{ServiceURL: b.ServiceURL(), TokenFile: tokenFile,
		OperationTimeout: 5 * time.Second, Logger: testLogger(t, "ours: ")})
	if err != nil {
		t.Fatal(err)
	}
	defer ours.Close()
	ctx := testCtx(t, 20*time.Second)
	p, err := ours.CreateProducer(ctx, client.ProducerOptions{Topic: topicName(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	writeToken(time.Hour) // rotated
	waitFor(t, 10*time.Second, func() bool { return responses.Load() >= 1 })
	if _, err := p.Send(ctx, &client.Message{Payload: []byte("x")}); err != nil {
		t.Fatalf("send after refresh: %v", err)
	}
	if n := connects.Load(); n != 1 {
		t.Fatalf("%d CONNECTs: the refresh reconnected", n)
	}

	anon, err := client.New(client.Options{ServiceURL: b.ServiceURL(), Token: "not-a-token",
		OperationTimeout: 2 * time.Second, ConnectionTimeout: 2 * time.Second, Logger: testLogger(t, "anon: ")})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	_, err = anon.CreateProducer(testCtx(t, 5*time.Second), client.ProducerOptions{Topic: topicName(t)})
	var se *client.ServerError
	if !errors.As(err, &se) || se.Code != pb.ServerError_AuthenticationError {
		t.Fatalf("CreateProducer with a bad token: %v, want AuthenticationError", err)
	}
	if strings.Contains(err.Error(), "not-a-token") {
		t.Fatalf("the error quotes the token: %v", err)
	}
}
