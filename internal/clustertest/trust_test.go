//go:build clustertest

package clustertest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/oauth2"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/cli"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// Credentials go to the cluster, and to all of it: the command line and the TUI send the token
// on to the broker that owns a topic, which the cluster's own answers name, and never to a
// host only a redirect or an answer from outside the cluster names (ForeignHost).

// dlqOwnedBy creates orders and a DLQ of it that member i owns (not the admin URL's broker,
// for i > 0), and returns the DLQ's name.
func dlqOwnedBy(t *testing.T, c *clustertest.Cluster, i int) string {
	t.Helper()
	if err := c.Broker.CreateTopic("persistent://public/default/orders", nil); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		dlq := fmt.Sprintf("persistent://public/default/orders-b%d-DLQ", n)
		if c.OwnerIndex(dlq) == i {
			if err := c.Broker.CreateTopic(dlq, nil); err != nil {
				t.Fatal(err)
			}
			return dlq
		}
	}
}

// letterbox runs the command line against c with token.
func letterbox(t *testing.T, c *clustertest.Cluster, token string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut strings.Builder
	args = append(args, "--service-url", c.ServiceURL(), "--admin-url", c.AdminURL(), "--token", token)
	code := cli.Run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// The owner of a DLQ is a broker the cluster's list names: replay, dlq ls and dlq subscribe
// have their token follow the admin URL's 307 to it (they withheld it before), as the TUI does.
func TestCredentialsFollowTheClusterToItsOwner(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // dlq subscribe records what it did
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	token := c.Token(t, "admin")
	dlq := dlqOwnedBy(t, c, 1)
	short := strings.TrimPrefix(dlq, "persistent://public/default/")

	if code, out, errOut := letterbox(t, c, token, "dlq", "ls", "public/default"); code != cli.ExitOK || !strings.Contains(out, short) {
		t.Errorf("dlq ls: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := letterbox(t, c, token, "dlq", "subscribe", dlq, "--subscription", "keep", "--yes"); code != cli.ExitOK {
		t.Errorf("dlq subscribe: exit %d, stderr %q", code, errOut)
	}
	if st, err := c.Broker.TopicStats(dlq, broker.StatsOptions{}); err != nil || !hasSubscription(st, "keep") {
		t.Errorf("the subscription dlq subscribe created: %v", err)
	}
	// An empty DLQ: nothing selected (exit 3, said on stderr), and no word about credentials.
	if code, _, errOut := letterbox(t, c, token, "replay", "--dlq", dlq, "--dry-run"); code != cli.ExitNothing ||
		!strings.HasPrefix(errOut, "letterbox replay: nothing selected:") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("replay --dry-run: exit %d, stderr %q", code, errOut)
	}

	a, err := data.NewAdmin(data.AdminOptions{AdminURL: c.AdminURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx := brokertest.Ctx(t, 30*time.Second)
	if _, err := a.Topics(ctx, "public/default"); err != nil {
		t.Fatalf("TUI topics: %v", err)
	}
	if d, err := a.TopicDetail(ctx, dlq); err != nil || len(d.Subscriptions) != 1 {
		t.Fatalf("TUI detail of %s (owned by broker 1): %+v, %v", dlq, d, err)
	}
}

// A cluster whose broker list answers from a foreign host (the admin URL redirects the list
// there), and a topic whose calls it redirects there: the foreign host never sees a token,
// from the command line or the TUI, and the cluster's own owner still gets it (its lookup,
// answered by the cluster, names it).
func TestCredentialsNeverLeaveTheCluster(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	token := c.Token(t, "admin")
	foreign := clustertest.StartForeign(t)
	c.RedirectBrokerList(foreign.URL)
	owned := dlqOwnedBy(t, c, 2)
	lost := dlqOwnedBy(t, c, 1)
	c.RedirectOutside(lost, foreign.URL)

	code, out, errOut := letterbox(t, c, token, "dlq", "ls", "public/default")
	if code != cli.ExitOK || !strings.Contains(out, strings.TrimPrefix(owned, "persistent://public/default/")) {
		t.Errorf("dlq ls: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	letterbox(t, c, token, "replay", "--dlq", lost, "--dry-run")

	a, err := data.NewAdmin(data.AdminOptions{AdminURL: c.AdminURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx := brokertest.Ctx(t, 30*time.Second)
	for range 2 {
		if _, err := a.Topics(ctx, "public/default"); err != nil {
			t.Fatalf("TUI topics: %v", err)
		}
	}
	if _, err := a.TopicDetail(ctx, owned); err != nil {
		t.Errorf("TUI detail of %s, owned by a broker of the cluster: %v", owned, err)
	}
	a.TopicDetail(ctx, lost)

	if len(foreign.Requests()) == 0 {
		t.Fatal("the foreign host was never asked: the test does not test")
	}
	for _, r := range foreign.Credentialed() {
		t.Errorf("the foreign host received credentials: %s %s", r.Method, r.Path)
	}
}

// An OAuth2 token endpoint that redirects to another host (307 or 308, which repeat the
// POST's form) never hands that host the client secret; a redirect on its own host is
// followed.
func TestOAuth2SecretStaysWithTheTokenEndpoint(t *testing.T) {
	foreign := clustertest.StartForeign(t)
	var issuer *httptest.Server
	issuer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			fmt.Fprintf(w, `{"token_endpoint":%q}`, issuer.URL+r.URL.Query().Get("to"))
		case "/token-307":
			http.Redirect(w, r, foreign.URL+"/token", http.StatusTemporaryRedirect)
		case "/token-308":
			http.Redirect(w, r, foreign.URL+"/token", http.StatusPermanentRedirect)
		case "/token-here":
			http.Redirect(w, r, "/token", http.StatusTemporaryRedirect)
		case "/token":
			io.Copy(io.Discard, r.Body)
			fmt.Fprint(w, `{"access_token":"t0k3n","token_type":"Bearer","expires_in":60}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(issuer.Close)
	creds := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(creds, []byte(`{"client_id":"app","client_secret":"s3cret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := brokertest.Ctx(t, 30*time.Second)
	for _, endpoint := range []string{"/token-307", "/token-308", "/token-here"} {
		// The discovery document names the endpoint: the issuer URL carries which one (the
		// discovery path is appended to the issuer's path, its query kept).
		ts, err := oauth2.NewTokenSource(oauth2.Config{IssuerURL: issuer.URL + "/?to=" + endpoint, PrivateKey: creds})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := ts.Token(ctx)
		switch {
		case endpoint == "/token-here" && (err != nil || tok != "t0k3n"):
			t.Errorf("%s, a redirect on the endpoint's host: %q, %v", endpoint, tok, err)
		case endpoint != "/token-here" && err == nil:
			t.Errorf("%s: a token (%q) from a redirect to another host", endpoint, tok)
		}
	}
	for _, r := range foreign.Credentialed() {
		t.Errorf("the foreign host received the client secret: %s %s %v", r.Method, r.Path, r.Form)
	}
}

func hasSubscription(st *adminapi.TopicStats, name string) bool {
	_, ok := st.Subscriptions[name]
	return ok
}
