package userconfig

import (
	"fmt"
	"strings"
)

// parseOAuth2 reads and checks a context's oauth2_* keys into ctx: credentials are needed by
// the other keys and exclude token and token_file; the issuer URL, when given, is http(s); a
// credentials path has its ~ expanded (file:// and data: URLs are kept as written). Errors
// never quote the credentials: a data: URL holds the secret.
func parseOAuth2(ctx *Context, fc fileContext, getenv func(string) string) error {
	at := ctx.Pos
	label := fmt.Sprintf("context %q", ctx.Name)
	ctx.OAuth2IssuerURL = strings.TrimSpace(fc.OAuth2IssuerURL)
	ctx.OAuth2Audience = strings.TrimSpace(fc.OAuth2Audience)
	ctx.OAuth2Scope = strings.TrimSpace(fc.OAuth2Scope)
	creds := strings.TrimSpace(fc.OAuth2CredentialsFile.Reveal())
	if creds == "" {
		for _, k := range []struct{ key, value string }{
			{"oauth2_issuer_url", ctx.OAuth2IssuerURL}, {"oauth2_audience", ctx.OAuth2Audience}, {"oauth2_scope", ctx.OAuth2Scope},
		} {
			if k.value != "" {
				return fmt.Errorf("%s: %s: %s needs oauth2_credentials_file", at(k.key), label, k.key)
			}
		}
		return nil
	}
	if ctx.Token != "" || ctx.TokenFile != "" {
		return fmt.Errorf("%s: %s: oauth2_credentials_file excludes token and token_file: authenticate with one of them",
			at("oauth2_credentials_file"), label)
	}
	if ctx.OAuth2IssuerURL != "" {
		if err := checkURL(ctx.OAuth2IssuerURL, "https", "http"); err != nil {
			return fmt.Errorf("%s: %s: oauth2_issuer_url %v", at("oauth2_issuer_url"), label, err)
		}
	}
	if !hasScheme(creds, "data:") && !hasScheme(creds, "file:") {
		p, err := expand(creds, getenv)
		if err != nil {
			return fmt.Errorf("%s: %s: oauth2_credentials_file: %v", at("oauth2_credentials_file"), label, err)
		}
		creds = p
	}
	ctx.OAuth2CredentialsFile = Secret(creds)
	return nil
}

func hasScheme(s, scheme string) bool {
	return len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme)
}
