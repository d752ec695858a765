package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/internal/userconfig"
	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// Contexts (docs/design.md "Command line"): --context NAME takes the cluster's URLs, credentials
// and TLS settings from the context NAME of $XDG_CONFIG_HOME/letterbox/config.toml; client
// flags given as well override the context's fields one by one (--token or --token-file
// replaces its authentication as a whole, --oauth2-* flags its token, --tls-cert-file and
// --tls-key-file its client certificate). A context is used only
// when named: the file's `current` never makes `letterbox` with no flags leave the local
// broker, nor `replay` act on a cluster the command line does not name.

// loadConfig reads the configuration file (none is an empty configuration).
func loadConfig() (*userconfig.Config, error) { return userconfig.Load(os.Getenv) }

// resolveContext applies --context, when given, to c, and returns the configuration read (nil
// when --context was not given and the file was not needed). Problems are usage errors, the
// file's warnings go to stderr. cmd names the command for messages.
func (c *clientFlags) resolveContext(cmd string, stderr io.Writer) (*userconfig.Config, int) {
	if slices.Contains(c.set, "tls-insecure") && c.tlsInsecure {
		fmt.Fprintf(stderr, "%s: warning: --tls-insecure: the cluster's certificate is not verified\n", cmd)
	}
	if c.context == "" {
		if slices.Contains(c.set, "context") {
			return nil, usageError(stderr, cmd, fmt.Errorf("--context: want a context's NAME"))
		}
		return nil, ExitOK
	}
	cfg, err := loadConfig()
	if err != nil {
		return nil, usageError(stderr, cmd, err)
	}
	warn(stderr, cmd, cfg.Warnings)
	ctx, err := cfg.Lookup(c.context)
	if err != nil {
		return nil, usageError(stderr, cmd, err)
	}
	c.useContext(ctx)
	if err := c.oauth2.check(); err != nil {
		return nil, usageError(stderr, cmd, fmt.Errorf("context %s: %w", ctx.Name, err))
	}
	if ctx.TLSInsecure && !slices.Contains(c.set, "tls-insecure") {
		fmt.Fprintf(stderr, "%s: warning: context %s has tls_insecure = true: the cluster's certificate is not verified\n", cmd, ctx.Name)
	}
	return cfg, ExitOK
}

// useContext fills every client setting the user did not give as a flag from ctx. A context's
// readonly = true is not a setting a flag overrides: it stays with the context (named), and
// readOnly reports it whatever --readonly says.
func (c *clientFlags) useContext(ctx userconfig.Context) {
	given := func(name string) bool { return slices.Contains(c.set, name) }
	if !given("service-url") {
		c.serviceURL = ctx.ServiceURL
	}
	if !given("admin-url") {
		c.adminURL = ctx.AdminURL
	}
	// Authentication: a token flag replaces the context's whole; OAuth2 flags replace its
	// token, and override its OAuth2 settings one by one.
	tokenGiven := given("token") || given("token-file")
	if !tokenGiven && !c.oauth2Given() {
		c.token, c.tokenFile = ctx.Token.Reveal(), ctx.TokenFile
	}
	if !tokenGiven {
		if !given("oauth2-issuer-url") {
			c.oauth2.issuerURL = ctx.OAuth2IssuerURL
		}
		if !given("oauth2-credentials-file") {
			c.oauth2.credentialsFile = ctx.OAuth2CredentialsFile.Reveal()
		}
		if !given("oauth2-audience") {
			c.oauth2.audience = ctx.OAuth2Audience
		}
		if !given("oauth2-scope") {
			c.oauth2.scope = ctx.OAuth2Scope
		}
	}
	if !given("tls-ca-file") {
		c.tlsCAFile = ctx.TLSCAFile
	}
	if !c.clientCertGiven() { // the pair goes together: a flag replaces the context's whole
		c.clientCert = clientCertFlags{certFile: ctx.TLSCertFile, keyFile: ctx.TLSKeyFile}
	}
	if !given("tls-insecure") {
		c.tlsInsecure = ctx.TLSInsecure
	}
	c.trustedHosts = ctx.TrustedHosts
	c.named = &ctx
}

// origin names where a setting came from, for messages: the flag, or the context's line.
func (c *clientFlags) origin(flagName, key string) string {
	if c.named == nil || slices.Contains(c.set, flagName) {
		return "--" + flagName
	}
	return c.named.Pos(key) + ": context " + c.named.Name + ": " + key
}

func warn(stderr io.Writer, cmd string, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "%s: warning: %s\n", cmd, w)
	}
}

// checkContextTheme reports a context's theme that no theme has (when --theme does not
// override it), with the file's line.
func (c *clientFlags) checkContextTheme(tf *tuiFlags) error {
	if c.named == nil || c.named.Theme == "" || tf.theme != "" || os.Getenv("NO_COLOR") != "" {
		return nil
	}
	user, _ := themes.LoadDir(themes.UserDir(os.Getenv))
	if _, ok := themes.Find(c.named.Theme, user); !ok {
		return fmt.Errorf("%s: context %s: unknown theme %q (themes: %s)", c.named.Pos("theme"), c.named.Name,
			c.named.Theme, strings.Join(themes.Names(user), ", "))
	}
	return nil
}

// tuiContexts is what the TUI needs for its header and :context: cfg's contexts (any, when
// the file could be read), the one letterbox starts on, and how to open each. The cluster
// letterbox started on (name "", for ":context -", or the context --context named) reopens
// with start, the settings it started with, flags over the context included.
func tuiContexts(cfg *userconfig.Config, cfgErr error, named *userconfig.Context, start data.AdminOptions, log *slog.Logger) tui.Contexts {
	tc := tui.Contexts{}
	if named != nil {
		tc.Current = tuiContext(*named)
	}
	if cfgErr != nil {
		tc.Problem = cfgErr.Error()
	}
	if cfg != nil {
		for _, c := range cfg.Contexts {
			tc.List = append(tc.List, tuiContext(c))
		}
	}
	tc.Open = func(_ context.Context, name string) (data.Source, error) {
		if name == "" || (named != nil && name == named.Name) {
			return data.NewAdmin(start)
		}
		ctx, err := cfg.Lookup(name)
		if err != nil {
			return nil, err
		}
		var cf clientFlags
		cf.useContext(ctx)
		opts := data.AdminOptions{AdminURL: cf.adminURL, ServiceURL: cf.serviceURL, Context: ctx.Name}
		if err := cf.apply(&opts); err != nil {
			return nil, err
		}
		log.Info("switching context", "context", ctx.Name, "service_url", opts.ServiceURL, "admin_url", opts.AdminURL)
		return data.NewAdmin(opts)
	}
	return tc
}

func tuiContext(c userconfig.Context) tui.Context {
	return tui.Context{Name: c.Name, Colour: c.Colour, Theme: c.Theme, ReadOnly: c.ReadOnly}
}
