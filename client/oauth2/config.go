// Package oauth2 gets access tokens with the OAuth2 client-credentials grant, configured as
// upstream's Pulsar clients configure it, so an existing configuration carries over: an issuer
// URL (issuerUrl), a credentials file (privateKey: a path, a file:// URL or a data: URL of a
// JSON document with client_id and client_secret), an audience and a scope.
//
// A TokenSource discovers the issuer's token endpoint from its OpenID configuration, POSTs the
// grant, caches the access token and fetches a new one before it expires; callers that need a
// token at the same time share one request. Its Token method is what client.Options.TokenSource
// wants (the binary protocol's auth method "token"), its Authorization method what an HTTP
// client puts in the Authorization header. The token request, which carries the client secret,
// follows no redirect to another host, and nothing follows one from https to http (redirect.go).
//
// The package uses only the standard library and imports nothing of letterbox: the client takes
// a TokenSource through its own interface. It starts no goroutine: a fetch runs on the goroutine
// of the caller that needed it.
package oauth2

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Config is the client-credentials configuration; the official Go client's parameter name of
// each field is in brackets.
type Config struct {
	// IssuerURL is the authorization server (issuerUrl). Its token endpoint is the
	// token_endpoint of {IssuerURL}/.well-known/openid-configuration. Empty: the credentials
	// file's issuer_url.
	IssuerURL string
	// PrivateKey is the credentials file (privateKey): a path, a file:// URL or a data: URL
	// (RFC 2397, base64 or not) of a JSON document holding client_id and client_secret, and
	// optionally issuer_url and scope. A file is read again on every fetch, so a rotated
	// secret is picked up.
	PrivateKey string
	// Audience is sent as the audience parameter when set (audience).
	Audience string
	// Scope is a space-separated list of scopes, sent with the credentials file's own (scope).
	Scope string
	// HTTPClient makes the requests to the issuer; default: a client with a 10 s timeout. The
	// source uses a copy whose redirects it checks itself (redirect.go).
	HTTPClient *http.Client
}

// credentials is the JSON document PrivateKey names. Other fields (type, client_email) are
// ignored, as upstream's clients do.
type credentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	IssuerURL    string `json:"issuer_url"`
	Scope        string `json:"scope"`
}

// maxCredentialsFile bounds what is read from a credentials file: they are a few hundred bytes.
const maxCredentialsFile = 64 << 10

// readCredentials reads and checks the credentials PrivateKey names. Errors name the file, or
// "data: URL" for inline credentials, and never quote the content: it holds the secret.
func readCredentials(spec string) (credentials, error) {
	what := describe(spec)
	b, err := loadCredentials(spec)
	if err != nil {
		return credentials{}, fmt.Errorf("%s: %w", what, err)
	}
	var cr credentials
	if err := json.Unmarshal(b, &cr); err != nil {
		return credentials{}, fmt.Errorf("%s: not a JSON credentials document (client_id, client_secret)", what)
	}
	cr.ClientID = strings.TrimSpace(cr.ClientID)
	cr.IssuerURL = strings.TrimSpace(cr.IssuerURL)
	switch {
	case cr.ClientID == "":
		return credentials{}, fmt.Errorf("%s: no client_id", what)
	case cr.ClientSecret == "":
		return credentials{}, fmt.Errorf("%s: no client_secret", what)
	}
	return cr, nil
}

// describe names the credentials for messages: the file, or the data: URL without its content.
func describe(spec string) string {
	if hasPrefixFold(spec, "data:") {
		return "credentials data: URL"
	}
	return "credentials file " + strings.TrimPrefix(spec, "file://")
}

func loadCredentials(spec string) ([]byte, error) {
	switch {
	case spec == "":
		return nil, errors.New("not set")
	case hasPrefixFold(spec, "data://"):
		// The official Go client's own form: the JSON follows data:// as is.
		return []byte(spec[len("data://"):]), nil
	case hasPrefixFold(spec, "data:"):
		return decodeDataURL(spec)
	case hasPrefixFold(spec, "file://"):
		// As upstream's clients: what follows file:// is the path (file:///abs/path).
		return readFile(spec[len("file://"):])
	}
	return readFile(spec)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialsFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxCredentialsFile {
		return nil, fmt.Errorf("larger than %d bytes", maxCredentialsFile)
	}
	return b, nil
}

// decodeDataURL decodes data:[<media type>][;base64],<data>. Without ;base64 the data is used
// as is when it is already JSON (the official Go client does not unescape it), and
// percent-decoded otherwise (RFC 2397).
func decodeDataURL(spec string) ([]byte, error) {
	meta, data, ok := strings.Cut(spec[len("data:"):], ",")
	if !ok {
		return nil, errors.New("malformed: want data:application/json;base64,<base64>")
	}
	if strings.HasSuffix(strings.ToLower(meta), ";base64") {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(strings.TrimSpace(data)); err == nil {
				return b, nil
			}
		}
		return nil, errors.New("not valid base64")
	}
	if json.Valid([]byte(data)) {
		return []byte(data), nil
	}
	s, err := url.PathUnescape(data)
	if err != nil {
		return nil, errors.New("not valid percent-encoding")
	}
	return []byte(s), nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// checkIssuer checks an issuer URL is http(s)://HOST[/path].
func checkIssuer(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("issuer URL %q: want https://HOST[/PATH]", raw)
	}
	if u.User != nil {
		return fmt.Errorf("issuer URL %q: no credentials in the URL (they belong in the credentials file)", u.Redacted())
	}
	return nil
}
