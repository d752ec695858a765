package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/letterbox-dev/letterbox/internal/userconfig"
)

// Where the embedded broker listens by default, and so what client commands connect to.
const (
	defaultServiceURL = "pulsar://127.0.0.1:6650"
	defaultAdminURL   = "http://127.0.0.1:8080"
)

// clientFlags are the flags of every command that acts as a client (the TUI, replay).
type clientFlags struct {
	serviceURL string
	adminURL   string
	token      string
	tokenFile  string
	tlsCAFile  string
	context    string
	oauth2     oauth2Flags     // client_oauth2.go
	clientCert clientCertFlags // client_tls.go

	// TLS without certificate verification (--tls-insecure, or the context's tls_insecure),
	// and the context --context names (nil without it; contexts.go).
	tlsInsecure bool
	named       *userconfig.Context

	// trustedHosts are the context's trusted_hosts: the cluster's hosts besides the admin
	// URL's to which admin credentials may follow a redirect.
	trustedHosts []string

	// readonly is --readonly: refuse every action that changes the cluster. A context's
	// readonly = true adds to it (readOnly), and no flag lifts it.
	readonly bool

	// set holds the names of the flags given explicitly, in the order first seen: with no
	// --service-url the TUI may start its own broker, with one it never does.
	set []string
}

// clientFlagNames lists the client flags in the order of the help.
var clientFlagNames = slices.Concat([]string{"service-url", "admin-url", "token", "token-file"}, oauth2FlagNames,
	[]string{"tls-ca-file"}, clientCertFlagNames, []string{"tls-insecure", "context", "readonly"})

func (c *clientFlags) register(fs *flag.FlagSet) {
	c.registerDefaults(fs, defaultServiceURL, defaultAdminURL, "", "", "", "")
}

// registerWithCurrent registers the flags with the values already parsed as defaults, so a
// subcommand's flag set does not reset what was given before the subcommand's name.
func (c *clientFlags) registerWithCurrent(fs *flag.FlagSet) {
	c.registerDefaults(fs, c.serviceURL, c.adminURL, c.token, c.tokenFile, c.tlsCAFile, c.context)
}

func (c *clientFlags) registerDefaults(fs *flag.FlagSet, serviceURL, adminURL, token, tokenFile, tlsCAFile, context string) {
	fs.StringVar(&c.serviceURL, "service-url", serviceURL, "Pulsar binary protocol `URL` (pulsar:// or pulsar+ssl://; no credentials in it)")
	fs.StringVar(&c.adminURL, "admin-url", adminURL, "admin REST `URL` (http:// or https://; no credentials in it)")
	fs.StringVar(&c.token, "token", token, "authentication `TOKEN` (a JWT)")
	fs.StringVar(&c.tokenFile, "token-file", tokenFile, "read the authentication token from `FILE`")
	c.oauth2.register(fs)
	fs.StringVar(&c.tlsCAFile, "tls-ca-file", tlsCAFile, "trust the CA certificates in `FILE`")
	c.clientCert.register(fs)
	fs.BoolVar(&c.tlsInsecure, "tls-insecure", c.tlsInsecure, "do not verify the cluster's TLS certificate (a warning says so)")
	fs.StringVar(&c.context, "context", context, "use the context `NAME` of $XDG_CONFIG_HOME/letterbox/config.toml (flags given override its settings)")
	fs.BoolVar(&c.readonly, "readonly", c.readonly, "read only: refuse replay and the dlq actions (discard, purge, resend, subscribe); dry runs and reads work")
}

// readOnly says why nothing may be changed on the cluster — "--readonly", or "context NAME"
// for a context with readonly = true — or "" when actions are allowed. The TUI reads it too.
func (c *clientFlags) readOnly() string {
	switch {
	case c.readonly:
		return "--readonly"
	case c.named != nil && c.named.ReadOnly:
		return "context " + c.named.Name
	}
	return ""
}

// refuseReadOnly reports, when the client is read-only, that cmd will not do what (an action
// that changes the cluster, in words) and returns ExitUsage; otherwise ExitOK. Commands call
// it before they connect, so a read-only session never opens a connection to act.
func (c *clientFlags) refuseReadOnly(cmd, what string, stderr io.Writer) int {
	why := c.readOnly()
	if why == "" {
		return ExitOK
	}
	fmt.Fprintf(stderr, "%s: read-only (%s): not allowed to %s\n", cmd, why, what)
	return ExitUsage
}

// noteSet records which client flags fs saw on its command line.
func (c *clientFlags) noteSet(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(clientFlagNames, f.Name) && !slices.Contains(c.set, f.Name) {
			c.set = append(c.set, f.Name)
		}
	})
}

// firstSet is the first client flag given explicitly, for messages.
func (c *clientFlags) firstSet() string {
	if len(c.set) == 0 {
		return ""
	}
	return c.set[0]
}

// validate checks what can be checked without connecting.
func (c *clientFlags) validate() error {
	if c.token != "" && c.tokenFile != "" {
		return errors.New("--token and --token-file exclude each other")
	}
	if err := c.checkAuth(); err != nil {
		return err
	}
	if err := c.clientCert.check(); err != nil {
		return err
	}
	if c.context == "" {
		// Else the context may hold the rest: resolveContext checks again.
		if err := c.oauth2.check(); err != nil {
			return err
		}
	}
	if err := checkURL("service-url", c.serviceURL, "pulsar", "pulsar+ssl"); err != nil {
		return err
	}
	return checkURL("admin-url", c.adminURL, "http", "https")
}

// checkURL checks the URL flag flagName gave (userconfig.CheckURL): credentials in it are refused,
// and never printed.
func checkURL(flagName, raw string, schemes ...string) error {
	err := userconfig.CheckURL(raw, schemes...)
	if errors.Is(err, userconfig.ErrCredentialsInURL) {
		return fmt.Errorf("--%s %w: give them with --token, --token-file or the --oauth2-… flags", flagName, err)
	}
	if err != nil {
		return fmt.Errorf("--%s %w", flagName, err)
	}
	return nil
}
