package cli

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/client/oauth2"
)

// oauth2Flags are OAuth2 client-credentials authentication, as upstream's clients take it:
// issuerUrl, privateKey (the credentials file), audience and scope. Either they or --token /
// --token-file, never both.
type oauth2Flags struct {
	issuerURL       string
	credentialsFile string // a path, a file:// URL or a data: URL
	audience        string
	scope           string
}

// oauth2FlagNames are the flags' names, in the order of the help.
var oauth2FlagNames = []string{"oauth2-issuer-url", "oauth2-credentials-file", "oauth2-audience", "oauth2-scope"}

// register registers the flags with the values already set as defaults, so a subcommand's flag
// set keeps what was given before the subcommand's name.
func (o *oauth2Flags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.issuerURL, "oauth2-issuer-url", o.issuerURL, "OAuth2 issuer `URL`, whose /.well-known/openid-configuration names the token endpoint (default: the credentials' issuer_url)")
	fs.StringVar(&o.credentialsFile, "oauth2-credentials-file", o.credentialsFile, "OAuth2 client credentials: JSON with client_id and client_secret in `FILE` (a path, file:// or data: URL)")
	fs.StringVar(&o.audience, "oauth2-audience", o.audience, "OAuth2 `AUDIENCE` to ask tokens for")
	fs.StringVar(&o.scope, "oauth2-scope", o.scope, "OAuth2 `SCOPES` to ask for, space-separated")
}

// configured reports whether any OAuth2 setting is there.
func (o oauth2Flags) configured() bool { return o != oauth2Flags{} }

// check reports settings that make no sense without the credentials file.
func (o oauth2Flags) check() error {
	if o.configured() && o.credentialsFile == "" {
		return errors.New("--oauth2-issuer-url, --oauth2-audience and --oauth2-scope need --oauth2-credentials-file")
	}
	return nil
}

// oauth2Given reports whether an OAuth2 flag was given on the command line.
func (c *clientFlags) oauth2Given() bool {
	return slices.ContainsFunc(c.set, func(n string) bool { return slices.Contains(oauth2FlagNames, n) })
}

// checkAuth reports OAuth2 settings given with --token or --token-file.
func (c *clientFlags) checkAuth() error {
	if c.oauth2.configured() && (c.token != "" || c.tokenFile != "") {
		other := "--token"
		if c.tokenFile != "" {
			other = "--token-file"
		}
		return fmt.Errorf("--oauth2-* and %s exclude each other: authenticate with one of them", other)
	}
	return nil
}

// tokenSource is the OAuth2 token source the client settings describe, nil without OAuth2.
// The binary protocol takes it as client.Options.TokenSource, the admin API its Authorization.
// As the official Go client, it reaches the issuer with the system's CAs: --tls-ca-file and
// --tls-insecure are about the cluster.
func (c *clientFlags) tokenSource() (*oauth2.TokenSource, error) {
	if !c.oauth2.configured() {
		return nil, nil
	}
	ts, err := oauth2.NewTokenSource(oauth2.Config{IssuerURL: c.oauth2.issuerURL, PrivateKey: c.oauth2.credentialsFile,
		Audience: c.oauth2.audience, Scope: c.oauth2.scope, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		if c.named != nil && !c.oauth2Given() {
			return nil, fmt.Errorf("%s: context %s: %w", c.named.Pos("oauth2_credentials_file"), c.named.Name, err)
		}
		return nil, err
	}
	return ts, nil
}
