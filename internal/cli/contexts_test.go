package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/userconfig"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// writeConfig writes text as the configuration file of a fresh XDG_CONFIG_HOME (and gives the
// test its own XDG_STATE_HOME). Not for parallel tests: it sets the environment.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	path := filepath.Join(dir, "letterbox", "config.toml")
	if text == "" {
		return path
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const secretToken = "eyJ0eXAi.S3CRET-never-shown"

// contextsFile has a context on a closed port with an inline token, one with a token file
// that does not exist and an unknown theme, and one with a CA file.
func contextsFile(t *testing.T) string {
	return `current = "local"

[[context]]
name = "local"
service_url = "pulsar://127.0.0.1:1"
admin_url = "http://127.0.0.1:1"
token = "` + secretToken + `"

[[context]]
name = "prod"
service_url = "pulsar+ssl://pulsar.example:6651"
admin_url = "https://pulsar.example:8443"
token_file = "` + filepath.Join(t.TempDir(), "missing.token") + `"
colour = "red"
theme = "nope"
`
}

func TestContextFlagErrors(t *testing.T) {
	writeConfig(t, "")
	for _, args := range [][]string{{"--context", "prod"}, {"replay", "--context", "prod", "--dlq", "d"}} {
		code, _, errOut := run(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, `no context "prod": there is no configuration file`) {
			t.Errorf("%q without a file: %d %q", args, code, errOut)
		}
	}
	code, _, errOut := run(t, "--context=")
	if code != ExitUsage || !strings.Contains(errOut, "--context: want a context's NAME") {
		t.Errorf("--context '': %d %q", code, errOut)
	}

	writeConfig(t, "[[context]]\nname = \"p\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://h:8080\"\nadmn_url = \"x\"\n")
	path := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "letterbox", "config.toml")
	code, _, errOut = run(t, "--context", "p")
	if code != ExitUsage || !strings.Contains(errOut, path+`:5: unknown key "context.admn_url"`) {
		t.Errorf("bad key: %d %q", code, errOut)
	}

	path = writeConfig(t, contextsFile(t))
	code, _, errOut = run(t, "replay", "--dlq", "d", "--context", "nope")
	if code != ExitUsage || !strings.Contains(errOut, `no context "nope" in `+path+` (contexts: local, prod)`) {
		t.Errorf("unknown context: %d %q", code, errOut)
	}
	code, _, errOut = run(t, "--context", "prod")
	if code != ExitUsage || !strings.Contains(errOut, path+`:15: context prod: unknown theme "nope"`) {
		t.Errorf("unknown theme: %d %q", code, errOut)
	}
	// --theme overrides the context's theme; the missing token file is then the problem,
	// named by its line.
	code, _, errOut = run(t, "--context", "prod", "--theme", "dark")
	if code != ExitUsage || !strings.Contains(errOut, path+":13: context prod: token_file: open ") {
		t.Errorf("missing token file: %d %q", code, errOut)
	}
	code, _, errOut = run(t, "replay", "--context", "prod", "--dlq", "d")
	if code != ExitFailure || !strings.Contains(errOut, path+":13: context prod: token_file: open ") {
		t.Errorf("replay, missing token file: %d %q", code, errOut)
	}
	// An inline token reaches the cluster (here none), never the output; a file others may
	// read that holds one is warned about.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "replay", "--context", "local", "--dlq", "d")
	if code != ExitFailure || strings.Contains(out+errOut, "S3CRET") {
		t.Errorf("replay on a closed port: %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "warning: "+path+" holds a token (context local) and is readable by others (mode 0644)") {
		t.Errorf("no permission warning: %q", errOut)
	}
}

func TestUseContext(t *testing.T) {
	t.Parallel()
	cfg, err := userconfig.Parse("config.toml", []byte(`
[[context]]
name = "prod"
service_url = "pulsar+ssl://pulsar.example:6651"
admin_url = "https://pulsar.example:8443"
token_file = "/etc/letterbox/prod.token"
tls_ca_file = "/etc/letterbox/ca.pem"
tls_insecure = true
`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	prod := cfg.Contexts[0]

	var c clientFlags
	c.useContext(prod)
	if c.serviceURL != prod.ServiceURL || c.adminURL != prod.AdminURL || c.tokenFile != prod.TokenFile || c.token != "" ||
		c.tlsCAFile != prod.TLSCAFile || !c.tlsInsecure || c.named == nil {
		t.Errorf("from the context: %+v", c)
	}
	if got := c.origin("token-file", "token_file"); got != "config.toml:6: context prod: token_file" {
		t.Errorf("origin %q", got)
	}

	// Flags given override the context field by field; --token replaces its authentication.
	c = clientFlags{adminURL: "http://127.0.0.1:8080", token: "T", set: []string{"context", "admin-url", "token"}}
	c.useContext(prod)
	if c.serviceURL != prod.ServiceURL || c.adminURL != "http://127.0.0.1:8080" || c.token != "T" || c.tokenFile != "" {
		t.Errorf("with flags: %+v", c)
	}
	if got := c.origin("admin-url", "admin_url"); got != "--admin-url" {
		t.Errorf("origin %q", got)
	}

	// --tls-insecure=false given on the command line wins over the context's tls_insecure.
	c = clientFlags{set: []string{"context", "tls-insecure"}}
	c.useContext(prod)
	if c.tlsInsecure {
		t.Errorf("--tls-insecure=false lost to the context: %+v", c)
	}
}

// --tls-insecure is never silent.
func TestTLSInsecureWarns(t *testing.T) {
	t.Parallel()
	c := clientFlags{tlsInsecure: true, set: []string{"tls-insecure"}}
	var errOut bytes.Buffer
	if _, code := c.resolveContext("letterbox", &errOut); code != ExitOK {
		t.Fatalf("code %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "warning: --tls-insecure: the cluster's certificate is not verified") {
		t.Errorf("stderr %q", errOut.String())
	}
}

// The TUI gets every context of the file, opens them by name, and reopens the start cluster
// for ":context -".
func TestTUIContexts(t *testing.T) {
	path := writeConfig(t, contextsFile(t))
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	local, _ := cfg.Lookup("local")
	start := data.AdminOptions{AdminURL: "http://127.0.0.1:18080", ServiceURL: "pulsar://127.0.0.1:16650"}
	ctx := context.Background()
	tc := tuiContexts(cfg, nil, nil, start, discardLogger())
	if tc.Current.Name != "" || len(tc.List) != 2 || tc.List[1].Name != "prod" || tc.List[1].Colour != "1" || tc.List[1].Theme != "nope" {
		t.Errorf("contexts %+v", tc)
	}
	if src, err := tc.Open(ctx, "local"); err != nil || src.Endpoint() != "http://127.0.0.1:1" {
		t.Errorf("open local: %v, %v", src, err)
	}
	if src, err := tc.Open(ctx, ""); err != nil || src.Endpoint() != start.AdminURL {
		t.Errorf("open the start cluster: %v, %v", src, err)
	}
	// Started with --context local (and, say, --admin-url): local reopens as it started.
	tc = tuiContexts(cfg, nil, &local, start, discardLogger())
	if tc.Current.Name != "local" {
		t.Errorf("current %+v", tc.Current)
	}
	if src, err := tc.Open(ctx, "local"); err != nil || src.Endpoint() != start.AdminURL {
		t.Errorf("reopen local: %v, %v", src, err)
	}
	if _, err := tc.Open(ctx, "prod"); err == nil || !strings.Contains(err.Error(), path+":13: context prod: token_file: open ") {
		t.Errorf("open prod: %v", err)
	}
	if _, err := tc.Open(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `no context "nope"`) {
		t.Errorf("open nope: %v", err)
	}
	broken := tuiContexts(nil, os.ErrPermission, nil, start, discardLogger())
	if broken.Problem == "" || len(broken.List) != 0 {
		t.Errorf("broken file: %+v", broken)
	}
}

// letterbox replay --context NAME replays on the context's cluster; a flag given overrides
// the context's field.
func TestReplayWithContext(t *testing.T) {
	su, au := replayBroker(t, 4)
	writeConfig(t, "[[context]]\nname = \"dev\"\nservice_url = \""+su+"\"\nadmin_url = \""+au+"\"\ncolour = \"green\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := Run(ctx, []string{"--context", "dev", "replay", "--dlq", "orders-app-DLQ", "--dry-run", "--json"}, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("replay --context dev: %d\n%s", code, errOut.String())
	}
	n := 0
	for l := range strings.Lines(out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		if m["action"] == "would-move" {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d dead letters would move, want 4:\n%s", n, out.String())
	}
	out.Reset()
	errOut.Reset()
	code = Run(ctx, []string{"replay", "--context", "dev", "--admin-url", "http://127.0.0.1:1", "--dlq", "orders-app-DLQ", "--dry-run"}, &out, &errOut)
	if code == ExitOK || !strings.Contains(errOut.String(), "127.0.0.1:1") {
		t.Errorf("--admin-url over the context: %d\n%s", code, errOut.String())
	}
}
