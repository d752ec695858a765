package oauth2_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/oauth2"
	"github.com/letterbox-dev/letterbox/client/oauth2/oauth2test"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

var _ client.TokenRefresher = (*oauth2.TokenSource)(nil)

// secureEnv is an issuer and a broker that accepts its tokens (tokenPublicKey) and lets role
// "app" do anything; refresh is how often the broker looks for expired credentials. It uses
// internal/brokertest rather than pulsartest: refresh goes below broker.conf's whole seconds.
func secureEnv(t *testing.T, lifetime, refresh time.Duration) (*oauth2test.Issuer, *brokertest.Env) {
	t.Helper()
	is := oauth2test.Start(t, lifetime)
	is.AddClient("app", "s3cret", "app")
	env := brokertest.Start(t, func(c *broker.Config) {
		c.AuthenticationEnabled = true
		c.AuthorizationEnabled = true
		c.TokenPublicKey = "file://" + is.PublicKeyFile
		c.SuperUserRoles = []string{"app"}
		c.AuthenticationRefreshCheck = refresh
	})
	return is, env
}

// records keeps the client's log messages at Info and above.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }
func (r *records) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// A session outlives several tokens: the broker challenges the expired credentials, the client
// answers on the same connection with a token fresh from the issuer, and producing and
// consuming never see an error.
func TestSessionAcrossTokenExpiries(t *testing.T) {
	t.Parallel()
	is, env := secureEnv(t, 3*time.Second, 200*time.Millisecond)
	var connects, challenges, responses atomic.Int32
	env.Broker.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		switch cmd.GetType() {
		case pb.BaseCommand_CONNECT:
			connects.Add(1)
		case pb.BaseCommand_AUTH_CHALLENGE:
			challenges.Add(1)
		case pb.BaseCommand_AUTH_RESPONSE:
			responses.Add(1)
		}
		return broker.Verdict{}
	})
	ts, err := oauth2.NewTokenSource(oauth2.Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "app", "s3cret", "")})
	if err != nil {
		t.Fatal(err)
	}
	logs := &records{}
	cl, err := client.New(client.Options{ServiceURL: env.ServiceURL, TokenSource: ts, OperationTimeout: 5 * time.Second,
		Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := brokertest.Ctx(t, 60*time.Second)
	topic := "persistent://public/default/oauth2-session"
	cons, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	prod, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()

	// Three expiries of a 3 s token: about 10 s of traffic.
	for i := 0; responses.Load() < 3; i++ {
		if ctx.Err() != nil {
			t.Fatalf("after %d messages: %d challenges, %d responses", i, challenges.Load(), responses.Load())
		}
		op, cancel := context.WithTimeout(ctx, 5*time.Second)
		want := fmt.Sprint("m", i)
		if _, err := prod.Send(op, &client.Message{Payload: []byte(want)}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		m, err := cons.Receive(op)
		if err != nil {
			t.Fatalf("receive %d: %v", i, err)
		}
		cancel()
		if string(m.Payload) != want {
			t.Fatalf("received %q, want %q", m.Payload, want)
		}
		cons.Ack(m)
		time.Sleep(50 * time.Millisecond) // traffic at a steady pace, not a busy loop
	}
	if n := connects.Load(); n != 1 {
		t.Errorf("%d CONNECTs: the session reconnected instead of refreshing", n)
	}
	if n := is.Issued(); n < 4 {
		t.Errorf("%d tokens issued for 3 refreshes", n)
	}
	for _, m := range logs.all() {
		if strings.Contains(m, "connection closed") || strings.HasPrefix(m, "WARN") || strings.HasPrefix(m, "ERROR") {
			t.Errorf("client logged %q", m)
		}
	}
	t.Logf("%d challenges, %d responses, %d tokens issued", challenges.Load(), responses.Load(), is.Issued())
}

// A reconnect presents a token from the issuer, not the one the broker last saw.
func TestReconnectFetchesFreshToken(t *testing.T) {
	t.Parallel()
	// No refresh check within the test: only reconnects renew the token here.
	is, env := secureEnv(t, 3*time.Second, time.Hour)
	var tokens sync.Map
	var connects atomic.Int32
	var drop atomic.Bool
	env.Broker.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if cmd.GetType() == pb.BaseCommand_CONNECT {
			connects.Add(1)
			tokens.Store(string(cmd.GetConnect().GetAuthData()), true)
		}
		if dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_SEND && drop.CompareAndSwap(true, false) {
			return broker.Verdict{Disconnect: true}
		}
		return broker.Verdict{}
	})
	ts, err := oauth2.NewTokenSource(oauth2.Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "app", "s3cret", "")})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(client.Options{ServiceURL: env.ServiceURL, TokenSource: ts, OperationTimeout: 5 * time.Second,
		Logger: brokertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := brokertest.Ctx(t, 30*time.Second)
	start := time.Now()
	prod, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: "oauth2-reconnect"})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	before := is.Issued()
	// Once the first token has expired, break the connection: the broker refuses an expired
	// token on CONNECT, so the send below gets through only if the reconnect fetched a new one.
	brokertest.WaitFor(t, 10*time.Second, "the first token to expire", func() bool {
		return time.Since(start) > 3*time.Second
	})
	drop.Store(true)
	if _, err := prod.Send(ctx, &client.Message{Payload: []byte("after reconnect")}); err != nil {
		t.Fatalf("send across the reconnect: %v", err)
	}
	if n := connects.Load(); n < 2 {
		t.Fatalf("%d CONNECTs: no reconnect", n)
	}
	n := 0
	tokens.Range(func(any, any) bool { n++; return true })
	if n < 2 || is.Issued() <= before {
		t.Errorf("%d distinct tokens over %d CONNECTs (%d issued): the reconnect reused the old token", n, connects.Load(), is.Issued())
	}
}

// A wrong client secret fails the first request with one error that names the issuer and
// carries its answer, at once.
func TestWrongSecretNamesIssuer(t *testing.T) {
	t.Parallel()
	is, env := secureEnv(t, time.Hour, time.Hour)
	ts, err := oauth2.NewTokenSource(oauth2.Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "app", "wrong", "")})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(client.Options{ServiceURL: env.ServiceURL, TokenSource: ts, OperationTimeout: 5 * time.Second,
		Logger: brokertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	_, err = cl.CreateProducer(brokertest.Ctx(t, 10*time.Second), client.ProducerOptions{Topic: "oauth2-wrong"})
	if err == nil {
		t.Fatal("produced with a wrong secret")
	}
	var te *oauth2.TokenError
	if !errors.Is(err, client.ErrCredentials) || !errors.As(err, &te) || te.Code != "invalid_client" {
		t.Errorf("error %v: want ErrCredentials wrapping the issuer's invalid_client", err)
	}
	t.Log(err)
	for _, want := range []string{"oauth2: issuer " + is.URL, "invalid_client", "(HTTP 401)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error shows the secret: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the error took %v", d)
	}
}

// Authorization is the header the admin REST API takes.
func TestAdminAuthorization(t *testing.T) {
	t.Parallel()
	is, env := secureEnv(t, time.Hour, time.Hour)
	ts, err := oauth2.NewTokenSource(oauth2.Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "app", "s3cret", "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := brokertest.Ctx(t, 10*time.Second)
	for _, tc := range []struct {
		name string
		auth func(context.Context) (string, error)
		want int
	}{
		{"none", func(context.Context) (string, error) { return "", nil }, http.StatusUnauthorized},
		{"oauth2", ts.Authorization, http.StatusOK},
	} {
		h, err := tc.auth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.AdminURL+"/admin/v2/tenants", nil)
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}
