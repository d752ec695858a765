package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/oauth2"
	"github.com/letterbox-dev/letterbox/client/oauth2/oauth2test"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/userconfig"
)

// OAuth2 and a token exclude each other, and OAuth2 settings need the credentials: usage errors,
// before anything connects.
func TestOAuth2FlagErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--token", "t", "--oauth2-credentials-file", "/c.json"}, "--oauth2-* and --token exclude each other"},
		{[]string{"replay", "--dlq", "d", "--token-file", "/t", "--oauth2-issuer-url", "https://auth", "--oauth2-credentials-file", "/c.json"},
			"--oauth2-* and --token-file exclude each other"},
		{[]string{"--oauth2-credentials-file", "/c.json", "dlq", "ls", "--token", "t"}, "--oauth2-* and --token exclude each other"},
		{[]string{"dlq", "ls", "--oauth2-audience", "a"}, "need --oauth2-credentials-file"},
		{[]string{"--oauth2-scope", "s"}, "need --oauth2-credentials-file"},
		{[]string{"--oauth2-issuer-url", "https://auth", "broker"}, "--oauth2-issuer-url applies to the TUI and replay, not to broker"},
	} {
		code, _, errOut := run(t, tt.args...)
		if code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, ExitUsage, tt.want)
		}
	}
}

// A context's OAuth2 settings fill what the flags leave; a token flag replaces them, OAuth2 flags
// replace a context's token.
func TestUseContextOAuth2(t *testing.T) {
	t.Parallel()
	cfg, err := userconfig.Parse("config.toml", []byte(`
[[context]]
name = "cloud"
service_url = "pulsar+ssl://pulsar.example:6651"
admin_url = "https://pulsar.example"
oauth2_issuer_url = "https://auth.example"
oauth2_credentials_file = "/etc/letterbox/cloud.json"
oauth2_audience = "urn:pulsar"
oauth2_scope = "a b"

[[context]]
name = "tok"
service_url = "pulsar://h:6650"
admin_url = "http://h:8080"
token = "T"
`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cloud, tok := cfg.Contexts[0], cfg.Contexts[1]
	want := oauth2Flags{issuerURL: "https://auth.example", credentialsFile: "/etc/letterbox/cloud.json", audience: "urn:pulsar", scope: "a b"}

	var c clientFlags
	c.useContext(cloud)
	if c.oauth2 != want || c.token != "" || c.tokenFile != "" {
		t.Errorf("from the context: %+v", c.oauth2)
	}
	c = clientFlags{oauth2: oauth2Flags{audience: "other"}, set: []string{"context", "oauth2-audience"}}
	c.useContext(cloud)
	if w := want; c.oauth2 != func() oauth2Flags { w.audience = "other"; return w }() {
		t.Errorf("--oauth2-audience over the context: %+v", c.oauth2)
	}
	c = clientFlags{token: "X", set: []string{"context", "token"}}
	c.useContext(cloud)
	if c.oauth2.configured() || c.token != "X" || c.checkAuth() != nil {
		t.Errorf("--token over an OAuth2 context: token %q, oauth2 %+v", c.token, c.oauth2)
	}
	c = clientFlags{oauth2: oauth2Flags{credentialsFile: "/c.json"}, set: []string{"context", "oauth2-credentials-file"}}
	c.useContext(tok)
	if c.token != "" || c.oauth2.credentialsFile != "/c.json" || c.checkAuth() != nil {
		t.Errorf("--oauth2-credentials-file over a token context: token %q, oauth2 %+v", c.token, c.oauth2)
	}
}

// oauth2Broker is an issuer of tokens that live for lifetime and a broker that takes them
// (checking every open connection's expiry every 200 ms), with a DLQ of n letters written by
// an OAuth2 client; role "app" (client "app", secret "s3cret") may do anything.
func oauth2Broker(t *testing.T, n int, lifetime time.Duration) (*oauth2test.Issuer, *brokertest.Env, string) {
	t.Helper()
	is := oauth2test.Start(t, lifetime)
	is.AddClient("app", "s3cret", "app")
	env := brokertest.Start(t, func(c *broker.Config) {
		c.AuthenticationEnabled = true
		c.AuthorizationEnabled = true
		c.TokenPublicKey = "file://" + is.PublicKeyFile
		c.SuperUserRoles = []string{"app"}
		c.AuthenticationRefreshCheck = 200 * time.Millisecond
	})
	creds := oauth2test.CredentialsFile(t, "app", "s3cret", "")
	ts, err := oauth2.NewTokenSource(oauth2.Config{IssuerURL: is.URL, PrivateKey: creds})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(client.Options{ServiceURL: env.ServiceURL, TokenSource: ts, Logger: brokertest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := brokertest.Ctx(t, 30*time.Second)
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: "orders-app-DLQ", InitialSubscriptionName: "app-dlq", DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range n {
		if _, err := p.Send(ctx, &client.Message{Payload: fmt.Appendf(nil, "m%d", i),
			Properties: map[string]string{client.PropertyRealTopic: "persistent://public/default/orders"}}); err != nil {
			t.Fatal(err)
		}
	}
	return is, env, creds
}

// replay and dlq authenticate with OAuth2 given as flags or by a context (credentials as a path,
// a file:// URL or a data: URL); a wrong secret is one line that names the issuer.
func TestOAuth2Commands(t *testing.T) {
	is, env, creds := oauth2Broker(t, 3, time.Hour)
	inline := "data:application/json;base64," + base64.StdEncoding.EncodeToString(oauth2test.CredentialsJSON("app", "s3cret", is.URL))
	writeConfig(t, "[[context]]\nname = \"cloud\"\nservice_url = \""+env.ServiceURL+"\"\nadmin_url = \""+env.AdminURL+"\"\n"+
		"oauth2_credentials_file = '"+inline+"'\noauth2_audience = \"urn:pulsar\"\n")
	urls := []string{"--service-url", env.ServiceURL, "--admin-url", env.AdminURL}
	replay := []string{"replay", "--dlq", "orders-app-DLQ", "--dry-run", "--json"}
	for name, args := range map[string][]string{
		"flags, path":     append(append(append([]string{}, urls...), "--oauth2-issuer-url", is.URL, "--oauth2-credentials-file", creds), replay...),
		"flags, file URL": append(append(append([]string{}, urls...), "--oauth2-issuer-url", is.URL, "--oauth2-credentials-file", "file://"+creds), replay...),
		"context, data:":  append([]string{"--context", "cloud"}, replay...),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		var out, errOut strings.Builder
		code := Run(ctx, args, &out, &errOut)
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
	if !slices.ContainsFunc(is.Requests(), func(f url.Values) bool { return f.Get("audience") == "urn:pulsar" }) {
		t.Errorf("the context's audience never reached the issuer: %v", is.Requests())
	}

	wrong := oauth2test.CredentialsFile(t, "app", "wrong-secret", is.URL)
	code, out, errOut := run(t, append(append([]string{"dlq", "ls"}, urls...), "--oauth2-credentials-file", wrong)...)
	want := "letterbox dlq ls: oauth2: issuer " + is.URL + ": token request refused: invalid_client: Invalid client credentials (HTTP 401)\n"
	if code != ExitFailure || errOut != want || out != "" {
		t.Errorf("wrong secret: exit %d, stdout %q, stderr %q; want %d and %q", code, out, errOut, ExitFailure, want)
	}
}

// A replay that runs for several lifetimes of its OAuth2 tokens (2 s) moves every letter without
// an error: the admin calls ask for the token of their moment, and the binary protocol answers
// the broker's challenges on the connection it keeps.
func TestOAuth2ReplayAcrossExpiries(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the run's state and history
	const letters = 24
	is, env, creds := oauth2Broker(t, letters, 2*time.Second)
	issued := is.Issued()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut strings.Builder
	code := Run(ctx, []string{"replay", "--service-url", env.ServiceURL, "--admin-url", env.AdminURL,
		"--oauth2-credentials-file", creds, "--oauth2-issuer-url", is.URL,
		"--dlq", "orders-app-DLQ", "--rate", "4", "--json"}, &out, &errOut) // 6 s at 4 a second
	if code != ExitOK || errOut.String() != "" {
		t.Fatalf("replay: exit %d, stderr:\n%s", code, errOut.String())
	}
	moved := 0
	for l := range strings.Lines(out.String()) {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["action"] == "moved" {
			moved++
		}
	}
	if moved != letters {
		t.Errorf("%d letters moved, want %d:\n%s", moved, letters, out.String())
	}
	if n := is.Issued() - issued; n < 3 {
		t.Errorf("%d tokens issued during a replay over three token lifetimes", n)
	}
}
