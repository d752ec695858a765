package userconfig

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const example = `# letterbox contexts
current = "local"

[[context]]
name = "local"
service_url = "pulsar://127.0.0.1:6650"
admin_url = "http://127.0.0.1:8080"

[[context]]
name = "prod"
service_url = "pulsar+ssl://pulsar.example:6651"
admin_url = "https://pulsar.example:8443"
token_file = "~/.config/letterbox/prod.token"
tls_ca_file = "/etc/ssl/prod-ca.pem"
colour = "red"
theme = "dark"
readonly = true

[[context]]
name = "staging"
service_url = "pulsar://staging:6650"
admin_url = "http://staging:8080"
token = "eyJhbGciOi.secret.value"
tls_insecure = true
color = "#FFAA00"
`

func TestParse(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("config.toml", []byte(example), env(map[string]string{"HOME": "/home/u"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Current != "local" {
		t.Errorf("current %q", cfg.Current)
	}
	if got := strings.Join(cfg.Names(), ","); got != "local,prod,staging" {
		t.Errorf("names %q", got)
	}
	prod, err := cfg.Lookup("prod")
	if err != nil {
		t.Fatal(err)
	}
	want := Context{Name: "prod", ServiceURL: "pulsar+ssl://pulsar.example:6651", AdminURL: "https://pulsar.example:8443",
		TokenFile: filepath.Join("/home/u", ".config/letterbox/prod.token"), TLSCAFile: "/etc/ssl/prod-ca.pem",
		Colour: "1", Theme: "dark", ReadOnly: true}
	prod.pos, prod.keyPos = "", nil
	if fmt.Sprintf("%#v", prod) != fmt.Sprintf("%#v", want) {
		t.Errorf("prod:\n got %#v\nwant %#v", prod, want)
	}
	st, _ := cfg.Lookup("staging")
	if st.Token.Reveal() != "eyJhbGciOi.secret.value" || !st.TLSInsecure || st.Colour != "#ffaa00" || st.ReadOnly {
		t.Errorf("staging: %+v", st)
	}
	if got := st.Pos("token"); got != "config.toml:23" {
		t.Errorf("Pos(token) = %q, want config.toml:23", got)
	}
	if got := st.Pos(""); got != "config.toml:19" {
		t.Errorf("Pos() = %q, want config.toml:19", got)
	}
}

func TestLookupErrors(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("c.toml", []byte(example), env(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Lookup("nope"); err == nil || !strings.Contains(err.Error(), `no context "nope" in c.toml (contexts: local, prod, staging)`) {
		t.Errorf("Lookup(nope) = %v", err)
	}
	var none *Config
	if _, err := none.Lookup("x"); err == nil || !strings.Contains(err.Error(), "no configuration file") {
		t.Errorf("nil Lookup = %v", err)
	}
	if _, err := (&Config{Path: "c.toml"}).Lookup("x"); err == nil || !strings.Contains(err.Error(), "defines none") {
		t.Errorf("empty Lookup = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	ctx := func(extra string) string {
		return "[[context]]\nname = \"p\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://h:8080\"\n" + extra
	}
	for _, tt := range []struct {
		name, text, want string
	}{
		{"syntax", "current = \n", "c.toml:1: "},
		{"unknown top key", "currnet = \"x\"\n", `c.toml:1: unknown key "currnet"`},
		{"unknown context key", ctx("servce_url = \"x\"\n"), `c.toml:5: unknown key "context.servce_url"`},
		{"no name", "[[context]]\nservice_url = \"pulsar://h:6650\"\n", "c.toml:1: context without a name"},
		{"space in name", "[[context]]\nname = \"my prod\"\n", `c.toml:2: context name "my prod": no spaces`},
		{"duplicate", ctx("") + ctx(""), `c.toml:6: context "p" is already defined at c.toml:2`},
		{"no service url", "[[context]]\nname = \"p\"\nadmin_url = \"http://h:8080\"\n", `c.toml:1: context "p": service_url is missing`},
		{"bad service url", "[[context]]\nname = \"p\"\nservice_url = \"http://h:6650\"\n", `c.toml:3: context "p": service_url "http://h:6650": want pulsar://HOST:PORT or pulsar+ssl://HOST:PORT`},
		{"bad admin url", "[[context]]\nname = \"p\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"h:8080\"\n", `c.toml:4: context "p": admin_url`},
		{"credentials in url", "[[context]]\nname = \"p\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://u:pw@h:8080\"\n", "no credentials in the URL"},
		{"token and file", ctx("token = \"t\"\ntoken_file = \"f\"\n"), `c.toml:6: context "p": token and token_file exclude each other`},
		{"bad colour", ctx("colour = \"mauve\"\n"), `c.toml:5: context "p": colour "mauve": want a colour name`},
		{"colour and color", ctx("colour = \"red\"\ncolor = \"red\"\n"), "colour and color are the same setting"},
		{"~user", ctx("token_file = \"~bob/t\"\n"), `c.toml:5: context "p": token_file: "~bob/t": only ~/`},
		{"type", ctx("tls_insecure = \"yes\"\n"), "c.toml:5: context.tls_insecure: incompatible types"},
		{"readonly type", ctx("readonly = \"yes\"\n"), "c.toml:5: context.readonly: incompatible types"},
		{"current unknown", "current = \"prod\"\n" + ctx(""), `c.toml:1: current = "prod" names no context (contexts: p)`},
		{"current without contexts", "current = \"prod\"\n", "defines no context"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tt.text), env(map[string]string{"HOME": "/h"}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A token never appears in an error, a log line or a %v of the context.
func TestTokenNeverShown(t *testing.T) {
	t.Parallel()
	const tok = "s3cr3t-tok3n-value"
	for _, text := range []string{
		"[[context]]\nname = \"p\"\ntoken = " + tok + "\n",         // unquoted: a syntax error on the token's line
		"[[context]]\nname = \"p\"\ntoken = \"" + tok + "\n",       // unterminated
		"[[context]]\nname = \"p\"\n\"token\" = '" + tok + "' x\n", // trailing garbage
	} {
		_, err := Parse("c.toml", []byte(text), env(nil))
		if err == nil {
			t.Fatalf("%q parsed", text)
		}
		if strings.Contains(err.Error(), tok) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("error shows the token: %v", err)
		}
	}
	cfg, err := Parse("c.toml", []byte("[[context]]\nname = \"p\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://h:8080\"\ntoken = \""+tok+"\"\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Contexts[0]
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("ctx", "token", c.Token, "ctx", c)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s %q", c, c, c, c.Token, c.Token), logged.String()} {
		if strings.Contains(s, tok) {
			t.Errorf("printed the token: %s", s)
		}
	}
	if c.Token.Reveal() != tok {
		t.Errorf("Reveal = %q", c.Token.Reveal())
	}
}

func TestColour(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "red": "1", "Red": "1", " grey ": "8", "#A0b0C0": "#a0b0c0", "208": "208", "0": "0"} {
		if got, err := Colour(in); err != nil || got != want {
			t.Errorf("Colour(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"256", "-1", "#abc", "#gggggg", "rouge"} {
		if _, err := Colour(in); err == nil {
			t.Errorf("Colour(%q) accepted", in)
		}
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	e := env(map[string]string{"HOME": "/home/u"})
	for in, want := range map[string]string{"": "", "/a/b": "/a/b", "rel/x": "rel/x", "~": "/home/u", "~/x/y": "/home/u/x/y"} {
		if got, err := expand(in, e); err != nil || got != filepath.FromSlash(want) {
			t.Errorf("expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	if p, _ := Path(env(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"})); p != filepath.Join("/x", "letterbox", "config.toml") {
		t.Errorf("with XDG_CONFIG_HOME: %q", p)
	}
	if p, _ := Path(env(map[string]string{"HOME": "/h"})); p != filepath.Join("/h", ".config", "letterbox", "config.toml") {
		t.Errorf("with HOME: %q", p)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := env(map[string]string{"XDG_CONFIG_HOME": dir, "HOME": dir})
	cfg, err := Load(e)
	if err != nil || cfg == nil || len(cfg.Contexts) != 0 || cfg.Path != "" {
		t.Fatalf("missing file: %+v, %v", cfg, err)
	}
	path := filepath.Join(dir, "letterbox", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(e)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != path || len(cfg.Contexts) != 3 || len(cfg.Warnings) != 0 {
		t.Errorf("0600: path %q, %d contexts, warnings %q", cfg.Path, len(cfg.Contexts), cfg.Warnings)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "context staging") || !strings.Contains(cfg.Warnings[0], "0644") {
		t.Errorf("0644 with an inline token: warnings %q", cfg.Warnings)
	}
	// No inline token: no warning, whatever the mode.
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(example, `token = "eyJhbGciOi.secret.value"`, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(e); err != nil || len(cfg.Warnings) != 0 {
		t.Errorf("0644 without a token: %v, warnings %q", err, cfg.Warnings)
	}
	if err := os.WriteFile(path, []byte("[[context]]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(e); err == nil || !strings.Contains(err.Error(), path+":1: context without a name") {
		t.Errorf("broken file: %v", err)
	}
}

func TestExportDir(t *testing.T) {
	t.Parallel()
	home := env(map[string]string{"HOME": "/home/u"})
	cfg, err := Parse("c.toml", []byte("export_dir = \"~/dlq-exports\"\n"), home)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("/home/u", "dlq-exports"); cfg.ExportDir != want {
		t.Errorf("export_dir = %q, want %q", cfg.ExportDir, want)
	}
	if cfg, _ := Parse("c.toml", []byte(example), home); cfg.ExportDir != "" {
		t.Errorf("export_dir unset reads as %q", cfg.ExportDir)
	}
	_, err = Parse("c.toml", []byte("current = \"\"\nexport_dir = \"exports\"\n"), home)
	if err == nil || !strings.Contains(err.Error(), "c.toml:2: export_dir \"exports\": want an absolute path") {
		t.Errorf("a relative export_dir: %v", err)
	}
}

// The oauth2_* keys: read with ~ expanded in a path (URLs kept), checked as the other keys,
// and credentials inline in a data: URL treated as a secret.
func TestOAuth2Keys(t *testing.T) {
	t.Parallel()
	const dataURL = `data:application/json,{"client_id":"app","client_secret":"S3CRET-creds"}`
	cfg, err := Parse("c.toml", []byte(`
[[context]]
name = "cloud"
service_url = "pulsar+ssl://pulsar.example:6651"
admin_url = "https://pulsar.example"
oauth2_issuer_url = "https://auth.example/realms/pulsar"
oauth2_credentials_file = "~/.config/letterbox/cloud.json"
oauth2_audience = "urn:pulsar:cluster"
oauth2_scope = "a b"

[[context]]
name = "url"
service_url = "pulsar://h:6650"
admin_url = "http://h:8080"
oauth2_credentials_file = "file:///etc/letterbox/creds.json"

[[context]]
name = "inline"
service_url = "pulsar://h:6650"
admin_url = "http://h:8080"
oauth2_credentials_file = '`+dataURL+`'
`), env(map[string]string{"HOME": "/home/u"}))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Contexts[0]
	if c.OAuth2IssuerURL != "https://auth.example/realms/pulsar" || c.OAuth2Audience != "urn:pulsar:cluster" || c.OAuth2Scope != "a b" ||
		c.OAuth2CredentialsFile.Reveal() != filepath.Join("/home/u", ".config/letterbox/cloud.json") {
		t.Errorf("cloud: %#v (credentials %q)", c, c.OAuth2CredentialsFile.Reveal())
	}
	if got := c.Pos("oauth2_audience"); got != "c.toml:8" {
		t.Errorf("Pos(oauth2_audience) = %q", got)
	}
	if got := cfg.Contexts[1].OAuth2CredentialsFile.Reveal(); got != "file:///etc/letterbox/creds.json" {
		t.Errorf("file URL became %q", got)
	}
	in := cfg.Contexts[2]
	if in.OAuth2CredentialsFile.Reveal() != dataURL {
		t.Errorf("data URL became %q", in.OAuth2CredentialsFile.Reveal())
	}
	if s := fmt.Sprintf("%v %+v %#v", in, in, in); strings.Contains(s, "S3CRET") {
		t.Errorf("printed the credentials: %s", s)
	}

	ctx := func(extra string) string {
		return "[[context]]\nname = \"p\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://h:8080\"\n" + extra
	}
	for _, tt := range []struct{ name, text, want string }{
		{"audience alone", ctx("oauth2_audience = \"a\"\n"), `c.toml:5: context "p": oauth2_audience needs oauth2_credentials_file`},
		{"issuer alone", ctx("oauth2_issuer_url = \"https://auth\"\n"), `c.toml:5: context "p": oauth2_issuer_url needs oauth2_credentials_file`},
		{"and token", ctx("token = \"t\"\noauth2_credentials_file = \"/c.json\"\n"), `c.toml:6: context "p": oauth2_credentials_file excludes token and token_file`},
		{"and token_file", ctx("oauth2_credentials_file = \"/c.json\"\ntoken_file = \"/t\"\n"), `c.toml:5: context "p": oauth2_credentials_file excludes token and token_file`},
		{"bad issuer", ctx("oauth2_credentials_file = \"/c.json\"\noauth2_issuer_url = \"auth.example\"\n"), `c.toml:6: context "p": oauth2_issuer_url "auth.example": want https://HOST:PORT or http://HOST:PORT`},
		{"~user", ctx("oauth2_credentials_file = \"~bob/c.json\"\n"), `c.toml:5: context "p": oauth2_credentials_file: "~bob/c.json": only ~/`},
		{"unknown key", ctx("oauth2_issuer = \"x\"\n"), `c.toml:5: unknown key "context.oauth2_issuer"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tt.text), env(map[string]string{"HOME": "/h"}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// A syntax error on the credentials' line does not quote them.
	_, err = Parse("c.toml", []byte(ctx("oauth2_credentials_file = "+dataURL+"\n")), env(nil))
	if err == nil || strings.Contains(err.Error(), "S3CRET") {
		t.Errorf("syntax error on the credentials' line: %v", err)
	}
}

// A file others may read that holds credentials inline (a data: URL) is warned about; one that
// names a credentials file is not.
func TestOAuth2InlineCredentialsWarning(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no permission bits")
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	head := "[[context]]\nname = \"cloud\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://h:8080\"\n"
	for _, tt := range []struct{ creds, want string }{
		{`data:;base64,eyJ9`, "holds OAuth2 credentials (context cloud) and is readable by others (mode 0644)"},
		{`/etc/letterbox/creds.json`, ""},
	} {
		if err := os.WriteFile(path, []byte(head+"oauth2_credentials_file = \""+tt.creds+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadFile(path, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(cfg.Warnings, "\n")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: warnings %q, want %q", tt.creds, got, tt.want)
		}
	}
}
