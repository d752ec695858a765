package oauth2

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/oauth2/oauth2test"
	"github.com/letterbox-dev/letterbox/internal/testwait"
)

const secret = "s3cret-never-shown"

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newSource(t *testing.T, cfg Config) *TokenSource {
	t.Helper()
	ts, err := NewTokenSource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// The grant is posted as the official Go client posts it: client id and secret in the form
// (no Basic header), audience, and the configured scopes merged with the file's.
func TestTokenClientCredentials(t *testing.T) {
	t.Parallel()
	is := oauth2test.Start(t, time.Hour)
	is.AddClient("app", secret, "app-role")
	creds := oauth2test.CredentialsFile(t, "app", secret, "")
	ts := newSource(t, Config{IssuerURL: is.URL, PrivateKey: creds, Audience: "urn:pulsar", Scope: "a  b"})
	ctx := testCtx(t, 10*time.Second)
	tok, err := ts.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(tok, ".") != 2 {
		t.Errorf("token %q is not a JWT", tok)
	}
	again, err := ts.Token(ctx)
	if err != nil || again != tok {
		t.Errorf("second Token: %q, %v; want the cached token", again, err)
	}
	if n := is.Issued(); n != 1 {
		t.Errorf("%d tokens issued, want 1 (cached)", n)
	}
	auth, err := ts.Authorization(ctx)
	if err != nil || auth != "Bearer "+tok {
		t.Errorf("Authorization = %q, %v", auth, err)
	}
	reqs := is.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d token requests", len(reqs))
	}
	want := url.Values{"grant_type": {"client_credentials"}, "client_id": {"app"}, "client_secret": {secret},
		"audience": {"urn:pulsar"}, "scope": {"a b"}}
	if reqs[0].Encode() != want.Encode() {
		t.Errorf("form %v, want %v", reqs[0], want)
	}
	if is.BasicAuthRequests() != 0 {
		t.Error("the token request carried an Authorization header")
	}
	if ts.Issuer() != is.URL {
		t.Errorf("Issuer() = %q", ts.Issuer())
	}
}

// The credentials file may be a path, a file:// URL or a data: URL (base64, plain JSON,
// percent-encoded JSON, and the official Go client's data://{json}); the issuer may come from
// the file.
func TestCredentialsForms(t *testing.T) {
	t.Parallel()
	is := oauth2test.Start(t, time.Hour)
	is.AddClient("app", secret, "app-role")
	js := oauth2test.CredentialsJSON("app", secret, is.URL)
	path := oauth2test.CredentialsFile(t, "app", secret, is.URL)
	for name, spec := range map[string]string{
		"path":            path,
		"file URL":        "file://" + path,
		"data base64":     "data:application/json;base64," + base64.StdEncoding.EncodeToString(js),
		"data plain":      "data:application/json," + string(js),
		"data percent":    "data:application/json," + url.PathEscape(string(js)),
		"official data//": "data://" + string(js),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ts := newSource(t, Config{PrivateKey: spec})
			if _, err := ts.Token(testCtx(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noIssuer := oauth2test.CredentialsFile(t, "app", secret, "")
	noID := "data:application/json," + `{"client_secret":"` + secret + `"}`
	noSecret := "data:application/json," + `{"client_id":"app"}`
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no file", Config{IssuerURL: "https://auth.example"}, "no credentials file"},
		{"missing file", Config{IssuerURL: "https://auth.example", PrivateKey: dir + "/nope.json"}, "credentials file " + dir + "/nope.json: open"},
		{"missing file URL", Config{IssuerURL: "https://auth.example", PrivateKey: "file://" + dir + "/nope.json"}, "credentials file " + dir + "/nope.json: open"},
		{"not JSON", Config{IssuerURL: "https://auth.example", PrivateKey: "data:," + secret}, "credentials data: URL: not a JSON credentials document"},
		{"bad base64", Config{IssuerURL: "https://auth.example", PrivateKey: "data:;base64,%%" + secret}, "credentials data: URL: not valid base64"},
		{"no comma", Config{IssuerURL: "https://auth.example", PrivateKey: "data:" + secret}, "credentials data: URL: malformed"},
		{"no client_id", Config{IssuerURL: "https://auth.example", PrivateKey: noID}, "no client_id"},
		{"no client_secret", Config{IssuerURL: "https://auth.example", PrivateKey: noSecret}, "no client_secret"},
		{"no issuer", Config{PrivateKey: noIssuer}, "no issuer URL: set issuerUrl or issuer_url in the credentials file " + noIssuer},
		{"bad issuer", Config{IssuerURL: "auth.example", PrivateKey: noIssuer}, `issuer URL "auth.example": want https://HOST`},
		{"issuer with password", Config{IssuerURL: "https://u:pw@auth.example", PrivateKey: noIssuer}, "no credentials in the URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewTokenSource(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "pw@") {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}

// A wrong secret is one error that names the issuer and carries its answer, never the secret.
func TestWrongSecret(t *testing.T) {
	t.Parallel()
	is := oauth2test.Start(t, time.Hour)
	is.AddClient("app", "the-right-one", "app-role")
	ts := newSource(t, Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "app", secret, "")})
	_, err := ts.Token(testCtx(t, 10*time.Second))
	want := "oauth2: issuer " + is.URL + ": token request refused: invalid_client: Invalid client credentials (HTTP 401)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	var te *TokenError
	if !errors.As(err, &te) || te.Status != http.StatusUnauthorized || te.Code != "invalid_client" {
		t.Errorf("errors.As TokenError: %+v", te)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error shows the secret: %v", err)
	}
}

// An issuer without OpenID discovery, or one that does not answer, is named in the error.
func TestDiscoveryErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	creds := oauth2test.CredentialsFile(t, "app", secret, "")
	ts := newSource(t, Config{IssuerURL: srv.URL + "/realms/x/", PrivateKey: creds})
	_, err := ts.Token(testCtx(t, 10*time.Second))
	want := "oauth2: issuer " + srv.URL + "/realms/x/: discovery: GET " + srv.URL + "/realms/x/.well-known/openid-configuration: HTTP 404"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
	srv.Close()
	ts = newSource(t, Config{IssuerURL: srv.URL, PrivateKey: creds})
	if _, err = ts.Token(testCtx(t, 10*time.Second)); err == nil || !strings.HasPrefix(err.Error(), "oauth2: issuer "+srv.URL+": discovery: ") {
		t.Errorf("issuer down: %v", err)
	}
}

// A token is replaced once less than a fifth of its lifetime (at most a minute) is left, and
// kept before.
func TestRefreshBeforeExpiry(t *testing.T) {
	t.Parallel()
	is := oauth2test.Start(t, 100*time.Second)
	is.AddClient("app", secret, "app-role")
	ts := newSource(t, Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "app", secret, "")})
	var mu sync.Mutex
	now := time.Now()
	ts.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := testCtx(t, 10*time.Second)
	first, err := ts.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	advance(75 * time.Second) // expires_in is 99 or 100: 20 s of margin, so still fresh
	if tok, _ := ts.Token(ctx); tok != first || is.Issued() != 1 {
		t.Fatalf("refreshed %v early (issued %d)", 75*time.Second, is.Issued())
	}
	advance(10 * time.Second)
	if _, err := ts.Token(ctx); err != nil || is.Issued() != 2 {
		t.Fatalf("not refreshed 15 s before expiry: %v, issued %d", err, is.Issued())
	}
	if _, err := ts.Refresh(ctx); err != nil || is.Issued() != 3 {
		t.Fatalf("Refresh: %v, issued %d", err, is.Issued())
	}
	if got := refreshMargin(time.Hour); got != time.Minute {
		t.Errorf("margin of an hour's token: %v", got)
	}
}

// Callers that need a token at once share one request; Refresh joins one under way.
func TestConcurrentCallersShareOneFetch(t *testing.T) {
	t.Parallel()
	is := oauth2test.Start(t, time.Hour)
	is.AddClient("app", secret, "app-role")
	is.SetDelay(200 * time.Millisecond)
	ts := newSource(t, Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "app", secret, "")})
	ctx := testCtx(t, 10*time.Second)
	run := func(f func(context.Context) (string, error)) map[string]bool {
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := map[string]bool{}
		for range 16 {
			wg.Go(func() {
				tok, err := f(ctx)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				got[tok] = true
				mu.Unlock()
			})
		}
		wg.Wait()
		return got
	}
	if got := run(ts.Token); len(got) != 1 || is.Issued() != 1 {
		t.Errorf("16 concurrent Token calls: %d distinct tokens, %d issued; want 1 and 1", len(got), is.Issued())
	}
	if got := run(ts.Refresh); len(got) != 1 || is.Issued() != 2 {
		t.Errorf("16 concurrent Refresh calls: %d distinct tokens, %d issued; want 1 and 2", len(got), is.Issued())
	}
}

// When the caller whose request is under way gives up, the others make their own.
func TestWaiterOutlivesCancelledCaller(t *testing.T) {
	t.Parallel()
	is := oauth2test.Start(t, time.Hour)
	is.AddClient("app", secret, "app-role")
	is.SetDelay(300 * time.Millisecond)
	ts := newSource(t, Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "app", secret, "")})
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	first := make(chan error, 1)
	go func() { _, err := ts.Token(short); first <- err }()
	// Let the first caller start its request, then wait beside it.
	testwait.For(t, 5*time.Second, "the first request never started", func() bool {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return ts.inflight != nil
	})
	tok, err := ts.Token(testCtx(t, 10*time.Second))
	if err != nil || tok == "" {
		t.Fatalf("the waiter: %q, %v", tok, err)
	}
	if err := <-first; !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), is.URL) {
		t.Errorf("the cancelled caller: %v", err)
	}
}
