// Package userconfig reads letterbox's configuration file, $XDG_CONFIG_HOME/letterbox/config.toml
// (or ~/.config/letterbox/config.toml): named contexts, each a cluster's URLs, authentication,
// TLS settings and a colour for the TUI's header, as pulsarctl contexts and ktea's per-cluster
// colours.
//
//	current = "local"
//
//	[[context]]
//	name = "local"
//	service_url = "pulsar://127.0.0.1:6650"
//	admin_url = "http://127.0.0.1:8080"
//
//	[[context]]
//	name = "prod"
//	service_url = "pulsar+ssl://pulsar.example:6651"
//	admin_url = "https://pulsar.example:8443"
//	token_file = "~/.config/letterbox/prod.token"
//	colour = "red"
//	readonly = true
//
//	[[context]]
//	name = "mtls"
//	service_url = "pulsar+ssl://pulsar.internal:6651"
//	admin_url = "https://pulsar.internal:8443"
//	tls_ca_file = "~/.config/letterbox/ca.pem"
//	tls_cert_file = "~/.config/letterbox/client-cert.pem"
//	tls_key_file = "~/.config/letterbox/client-key.pem"
//
// tls_cert_file and tls_key_file are a TLS client certificate (mTLS), as upstream's clients'
// tlsCertFile and tlsKeyFile: without other credentials the role is the certificate's.
//
//	[[context]]
//	name = "cloud"
//	service_url = "pulsar+ssl://pulsar.cloud.example:6651"
//	admin_url = "https://pulsar.cloud.example"
//	oauth2_issuer_url = "https://auth.cloud.example"
//	oauth2_credentials_file = "~/.config/letterbox/cloud-credentials.json"
//	oauth2_audience = "urn:pulsar:cluster"
//
// The oauth2_* keys are OAuth2 client-credentials authentication with upstream's parameters
// (issuerUrl, privateKey, audience, scope): oauth2_credentials_file is a path, a file:// URL or
// a data: URL of the JSON credentials (client_id, client_secret); the issuer URL may be left to
// the credentials' issuer_url. They exclude token and token_file.
//
// trusted_hosts lists the cluster's hosts, besides admin_url's, to which the admin API's
// credentials may follow a redirect ("host", "host:port", "*.domain"): upstream answers a call
// about a topic another broker owns with a redirect to that broker, and letterbox sends the
// token or OAuth2 credentials only to the cluster's hosts (admin_url's, the brokers its lookups
// and broker list name, and these). A redirect elsewhere is followed without credentials.
//
//	trusted_hosts = ["*.pulsar.internal", "broker-7.example:8443"]
//
// export_dir (a top-level key, before the first [[context]]) is where the TUI's exports go
// when their name is relative: the working directory when unset. It must be absolute (or
// start with ~/).
//
// readonly = true makes a context read-only: the command line refuses every action that
// changes the cluster on it (replay, dlq discard, purge, resend and subscribe) before it
// connects, as --readonly does, and no flag lifts it (a writable twin of the context, under
// another name, is the way to act on that cluster). Reading — the TUI's views, dlq ls, stats
// and export, dry runs — works as on any context.
//
// The package only reads and checks the file; it never connects and never reads token or
// credentials files (the command line does, when it uses a context). A context is used only
// when the user names it (--context NAME, or :context NAME in the TUI): `current` is read and
// checked but never makes letterbox connect somewhere on its own, so `letterbox` with no flags
// keeps meaning the local broker.
//
// An inline token is a Secret: it prints as [redacted], and no error of this package quotes it;
// so are the OAuth2 credentials, which a data: URL holds inline.
package userconfig

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// FileName is the configuration file's name in letterbox's configuration directory.
const FileName = "config.toml"

// Secret is a credential read from the file. Printing it with fmt or slog shows [redacted];
// Reveal gives the value to the code that authenticates with it.
type Secret string

const redacted = "[redacted]"

func (Secret) String() string                 { return redacted }
func (Secret) GoString() string               { return redacted }
func (Secret) LogValue() slog.Value           { return slog.StringValue(redacted) }
func (s Secret) Reveal() string               { return string(s) }
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Context is one named cluster.
type Context struct {
	Name       string
	ServiceURL string // pulsar:// or pulsar+ssl://
	AdminURL   string // http:// or https://
	Token      Secret // an inline token (discouraged: prefer TokenFile)
	TokenFile  string // with ~ expanded
	TLSCAFile  string // with ~ expanded
	// TLSCertFile and TLSKeyFile are a TLS client certificate and its key (tls_cert_file,
	// tls_key_file; both or neither, ~ expanded): presented on every TLS connection, and, with
	// no other credentials, the authentication (upstream's AuthenticationTls).
	TLSCertFile string
	TLSKeyFile  string
	// OAuth2 client credentials (oauth2_*), instead of Token and TokenFile.
	// OAuth2CredentialsFile is a path (with ~ expanded), a file:// URL or a data: URL; a Secret
	// because a data: URL holds the client secret itself.
	OAuth2IssuerURL       string
	OAuth2CredentialsFile Secret
	OAuth2Audience        string
	OAuth2Scope           string
	// TrustedHosts are the cluster's hosts besides admin_url's to which credentials may follow
	// a redirect of the admin API (trusted_hosts): "host", "host:port" or "*.domain". The
	// brokers the cluster's own answers name are trusted without it.
	TrustedHosts []string
	// TLSInsecure skips the verification of the cluster's certificate (a test cluster with a
	// self-signed certificate); never for production.
	TLSInsecure bool
	// ReadOnly refuses every action that changes the cluster (readonly = true): a production
	// cluster looked at, not touched.
	ReadOnly bool
	// Colour is the header's colour for this context as a theme palette value: "#rrggbb" or
	// an ANSI colour index ("1" for red, which the terminal's palette decides). "" means the
	// theme's own.
	Colour string
	// Theme, when set, is the theme the TUI uses on this context (unless --theme says
	// otherwise at start).
	Theme string

	// Where the context is written, for messages: "FILE:LINE" of its [[context]] header and
	// of each of its keys.
	pos    string
	keyPos map[string]string
}

// Pos is "FILE:LINE" of key in the context's table ("" for the [[context]] header itself),
// for messages about a value the file gave.
func (c Context) Pos(key string) string {
	if p, ok := c.keyPos[key]; ok {
		return p
	}
	return c.pos
}

// Config is the file's content.
type Config struct {
	// Path is the file read ("" when there was none).
	Path string
	// Current is the context the file marks current ("" for none). letterbox only checks it.
	Current  string
	Contexts []Context
	// ExportDir is export_dir, with ~ expanded: where the TUI writes exports ("" for the
	// working directory).
	ExportDir string
	// Warnings are problems that do not stop letterbox (a file others may read that holds a
	// token), for the user to see.
	Warnings []string
}

// Names lists the contexts' names in file order.
func (c *Config) Names() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, ctx := range c.Contexts {
		out = append(out, ctx.Name)
	}
	return out
}

// Lookup finds the context called name, or says which ones there are.
func (c *Config) Lookup(name string) (Context, error) {
	if c != nil {
		for _, ctx := range c.Contexts {
			if ctx.Name == name {
				return ctx, nil
			}
		}
	}
	switch {
	case c == nil || c.Path == "":
		return Context{}, fmt.Errorf("no context %q: there is no configuration file", name)
	case len(c.Contexts) == 0:
		return Context{}, fmt.Errorf("no context %q: %s defines none", name, c.Path)
	}
	return Context{}, fmt.Errorf("no context %q in %s (contexts: %s)", name, c.Path, strings.Join(c.Names(), ", "))
}

// Path is where the configuration file is: $XDG_CONFIG_HOME/letterbox/config.toml, or
// ~/.config/letterbox/config.toml when XDG_CONFIG_HOME is unset. getenv is os.Getenv in the
// program and a map lookup in tests.
func Path(getenv func(string) string) (string, error) {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "letterbox", FileName), nil
	}
	home, err := homeDir(getenv)
	if err != nil {
		return "", fmt.Errorf("no configuration directory: set XDG_CONFIG_HOME or HOME: %w", err)
	}
	return filepath.Join(home, ".config", "letterbox", FileName), nil
}

func homeDir(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	return os.UserHomeDir()
}

// Load reads the configuration file at Path. A missing file is an empty configuration, not an
// error: contexts are optional.
func Load(getenv func(string) string) (*Config, error) {
	path, err := Path(getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := LoadFile(path, getenv)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	return cfg, err
}

// LoadFile reads and checks the configuration file at path; getenv supplies HOME for "~".
func LoadFile(path string, getenv func(string) string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := Parse(path, b, getenv)
	if err != nil {
		return nil, err
	}
	if w := permissionWarning(path, cfg); w != "" {
		cfg.Warnings = append(cfg.Warnings, w)
	}
	return cfg, nil
}

// file is the TOML layout.
type file struct {
	Current   string        `toml:"current"`
	ExportDir string        `toml:"export_dir"`
	Context   []fileContext `toml:"context"`
}

type fileContext struct {
	Name        string `toml:"name"`
	ServiceURL  string `toml:"service_url"`
	AdminURL    string `toml:"admin_url"`
	Token       Secret `toml:"token"`
	TokenFile   string `toml:"token_file"`
	TLSCAFile   string `toml:"tls_ca_file"`
	TLSCertFile string `toml:"tls_cert_file"`
	TLSKeyFile  string `toml:"tls_key_file"`
	TLSInsecure bool   `toml:"tls_insecure"`
	ReadOnly    bool   `toml:"readonly"`
	Colour      string `toml:"colour"`
	Color       string `toml:"color"` // the American spelling, accepted too
	Theme       string `toml:"theme"`

	OAuth2IssuerURL       string `toml:"oauth2_issuer_url"`
	OAuth2CredentialsFile Secret `toml:"oauth2_credentials_file"`
	OAuth2Audience        string `toml:"oauth2_audience"`
	OAuth2Scope           string `toml:"oauth2_scope"`

	TrustedHosts []string `toml:"trusted_hosts"`
}

// Parse reads a configuration from b; name is the file's path, for messages. It checks every
// context: a name (no spaces, unique), both URLs with the right schemes, at most one of token,
// token_file and OAuth2, a known colour; and that current names a context.
func Parse(name string, b []byte, getenv func(string) string) (*Config, error) {
	text := string(b)
	var f file
	md, err := toml.Decode(text, &f)
	if err != nil {
		return nil, syntaxError(name, text, err)
	}
	lines := scanLines(name, text)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		where := name
		if len(k) >= 2 && k[0] == "context" {
			// Keys of an array of tables do not say which element; find the first
			// [[context]] table that has it.
			where = lines.firstKey(k[len(k)-1])
		} else if p := lines.topKey(k[0]); p != "" {
			where = p
		}
		return nil, fmt.Errorf("%s: unknown key %q", where, k.String())
	}
	cfg := &Config{Path: name, Current: strings.TrimSpace(f.Current)}
	if d := strings.TrimSpace(f.ExportDir); d != "" {
		where := cmp.Or(lines.topKey("export_dir"), name)
		if cfg.ExportDir, err = expand(d, getenv); err != nil {
			return nil, fmt.Errorf("%s: export_dir %v", where, err)
		}
		if !filepath.IsAbs(cfg.ExportDir) {
			return nil, fmt.Errorf("%s: export_dir %q: want an absolute path (or ~/…): a relative one would change with the directory letterbox starts in", where, d)
		}
	}
	seen := map[string]string{}
	for i, fc := range f.Context {
		pos, keyPos := lines.context(i)
		ctx := Context{
			Name: strings.TrimSpace(fc.Name), ServiceURL: strings.TrimSpace(fc.ServiceURL),
			AdminURL: strings.TrimSpace(fc.AdminURL), Token: Secret(strings.TrimSpace(string(fc.Token))),
			TLSInsecure: fc.TLSInsecure, ReadOnly: fc.ReadOnly, Theme: strings.TrimSpace(fc.Theme),
			pos: pos, keyPos: keyPos,
		}
		at := func(key string) string { return ctx.Pos(key) }
		label := fmt.Sprintf("context %q", ctx.Name)
		switch {
		case ctx.Name == "":
			return nil, fmt.Errorf("%s: context without a name (name = \"…\")", pos)
		case strings.ContainsFunc(ctx.Name, isSpaceOrControl):
			return nil, fmt.Errorf("%s: context name %q: no spaces (it is typed as :context NAME)", at("name"), ctx.Name)
		case seen[ctx.Name] != "":
			return nil, fmt.Errorf("%s: context %q is already defined at %s", at("name"), ctx.Name, seen[ctx.Name])
		}
		seen[ctx.Name] = at("name")
		if err := checkURL(ctx.ServiceURL, "pulsar", "pulsar+ssl"); err != nil {
			return nil, fmt.Errorf("%s: %s: service_url %v", at("service_url"), label, err)
		}
		if err := checkURL(ctx.AdminURL, "http", "https"); err != nil {
			return nil, fmt.Errorf("%s: %s: admin_url %v", at("admin_url"), label, err)
		}
		if ctx.Token != "" && strings.TrimSpace(fc.TokenFile) != "" {
			return nil, fmt.Errorf("%s: %s: token and token_file exclude each other", at("token_file"), label)
		}
		if ctx.TokenFile, err = expand(strings.TrimSpace(fc.TokenFile), getenv); err != nil {
			return nil, fmt.Errorf("%s: %s: token_file: %v", at("token_file"), label, err)
		}
		if ctx.TLSCAFile, err = expand(strings.TrimSpace(fc.TLSCAFile), getenv); err != nil {
			return nil, fmt.Errorf("%s: %s: tls_ca_file: %v", at("tls_ca_file"), label, err)
		}
		if err := parseTrustedHosts(&ctx, fc); err != nil {
			return nil, err
		}
		if err := parseClientCert(&ctx, fc, getenv); err != nil {
			return nil, err
		}
		if err := parseOAuth2(&ctx, fc, getenv); err != nil {
			return nil, err
		}
		colourKey, colour := "colour", fc.Colour
		if fc.Color != "" {
			if fc.Colour != "" {
				return nil, fmt.Errorf("%s: %s: colour and color are the same setting; keep one", at("color"), label)
			}
			colourKey, colour = "color", fc.Color
		}
		if ctx.Colour, err = Colour(colour); err != nil {
			return nil, fmt.Errorf("%s: %s: %s %v", at(colourKey), label, colourKey, err)
		}
		cfg.Contexts = append(cfg.Contexts, ctx)
	}
	if cfg.Current != "" && seen[cfg.Current] == "" {
		where := lines.topKey("current")
		if where == "" {
			where = name
		}
		if len(cfg.Contexts) == 0 {
			return nil, fmt.Errorf("%s: current = %q, but the file defines no context", where, cfg.Current)
		}
		return nil, fmt.Errorf("%s: current = %q names no context (contexts: %s)", where, cfg.Current, strings.Join(cfg.Names(), ", "))
	}
	return cfg, nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// checkURL is CheckURL (urls.go), saying where credentials go in the file instead.
func checkURL(raw string, schemes ...string) error {
	err := CheckURL(raw, schemes...)
	if errors.Is(err, ErrCredentialsInURL) {
		return fmt.Errorf("%w (use token or token_file)", err)
	}
	return err
}

func mapSlice(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// expand replaces a leading "~" or "~/" with the home directory; other paths are unchanged.
// "~user" is not supported.
func expand(p string, getenv func(string) string) (string, error) {
	if p == "" || p[0] != '~' {
		return p, nil
	}
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		return "", fmt.Errorf("%q: only ~/ (your home) is expanded, not ~user", p)
	}
	home, err := homeDir(getenv)
	if err != nil || home == "" {
		return "", fmt.Errorf("%q: no home directory to expand ~ (set HOME)", p)
	}
	return filepath.Join(home, p[1:]), nil
}

// namedColours are the colour names a context may use, as ANSI colour indexes: the terminal's
// own palette decides the exact shade, so "red" looks like the red of everything else on it.
var namedColours = map[string]string{
	"black": "0", "red": "1", "green": "2", "yellow": "3", "blue": "4", "magenta": "5",
	"cyan": "6", "white": "7", "gray": "8", "grey": "8",
	"bright-red": "9", "bright-green": "10", "bright-yellow": "11", "bright-blue": "12",
	"bright-magenta": "13", "bright-cyan": "14", "bright-white": "15",
	"purple": "5", "orange": "208", "pink": "213",
}

var decodeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

var hexColour = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// ColourNames lists the colour names Colour accepts, sorted.
func ColourNames() []string {
	var out []string
	for n := range namedColours {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Colour turns a colour as the file may write it — a name ("red"), "#rrggbb" or an ANSI index
// "0"–"255" — into a theme palette value. "" stays "".
func Colour(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if v, ok := namedColours[strings.ToLower(s)]; ok {
		return v, nil
	}
	if hexColour.MatchString(s) {
		return strings.ToLower(s), nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n <= 255 {
		return s, nil
	}
	return "", fmt.Errorf("%q: want a colour name (%s), #rrggbb or 0-255", s, strings.Join(ColourNames(), ", "))
}

// syntaxError turns a TOML error into "FILE:LINE: message". A value that failed to parse on a
// token's line is not quoted: it may be the token.
func syntaxError(name, text string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		// A decoding error (a value of the wrong type) names its line and key in the text.
		if m := decodeErr.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("%s:%s: %s: %s", name, m[1], m[2], m[3])
		}
		return fmt.Errorf("%s: %v", name, err)
	}
	line := pe.Position.Line
	msg := pe.Message
	if l := lineText(text, line); secretLine(l) || strings.HasSuffix(pe.LastKey, "token") {
		msg = "invalid value (not shown: it is a token)"
	} else if secretKeys[pe.LastKey] {
		msg = "invalid value (not shown: it may hold a secret)"
	}
	return fmt.Errorf("%s:%d: %s", name, line, msg)
}

func lineText(text string, n int) string {
	ls := strings.Split(text, "\n")
	if n < 1 || n > len(ls) {
		return ""
	}
	return ls[n-1]
}

// secretKeys are the keys whose value may be a secret itself.
var secretKeys = map[string]bool{"token": true, "oauth2_credentials_file": true}

// secretLine reports whether a line sets a key of secretKeys.
func secretLine(l string) bool {
	k, _, ok := strings.Cut(strings.TrimSpace(l), "=")
	return ok && secretKeys[strings.Trim(strings.TrimSpace(k), `"'`)]
}

// permissionWarning warns when the file holds an inline token and its group or others may read
// it (not on Windows, whose permissions these bits do not describe).
func permissionWarning(path string, cfg *Config) string {
	if runtime.GOOS == "windows" {
		return ""
	}
	var inline []string
	var tokens, creds bool
	for _, c := range cfg.Contexts {
		t, cr := c.Token != "", inlineCredentials(c.OAuth2CredentialsFile)
		if t || cr {
			inline = append(inline, c.Name)
		}
		tokens, creds = tokens || t, creds || cr
	}
	if len(inline) == 0 {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o044 == 0 {
		return ""
	}
	what, advice := "a token", "move the token to a token_file"
	switch {
	case tokens && creds:
		what, advice = "a token and OAuth2 credentials", "move them to a token_file and a credentials file"
	case creds:
		what, advice = "OAuth2 credentials", "move them to a credentials file"
	}
	return fmt.Sprintf("%s holds %s (context %s) and is readable by others (mode %04o): chmod 600 it, or %s",
		path, what, strings.Join(inline, ", "), fi.Mode().Perm(), advice)
}

// inlineCredentials reports whether an oauth2_credentials_file holds the credentials themselves
// (a data: URL) rather than naming a file.
func inlineCredentials(s Secret) bool { return hasScheme(s.Reveal(), "data:") }
