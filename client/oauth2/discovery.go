package oauth2

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// wellKnownPath is where an OpenID provider publishes its configuration, under the issuer URL
// (OpenID Connect Discovery 1.0; the official Go client looks nowhere else).
const wellKnownPath = "/.well-known/openid-configuration"

// maxResponse bounds what is read of an issuer's answer: a configuration or a token is a few KB.
const maxResponse = 1 << 20

// discover returns the token endpoint the issuer's OpenID configuration names.
func discover(ctx context.Context, hc *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", fmt.Errorf("discovery: %w", err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + wellKnownPath
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("discovery: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("discovery: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return "", fmt.Errorf("discovery: GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("discovery: GET %s: HTTP %d", u, resp.StatusCode)
	}
	var doc struct {
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fmt.Errorf("discovery: GET %s: not an OpenID configuration: %w", u, err)
	}
	ep, err := url.Parse(doc.TokenEndpoint)
	if doc.TokenEndpoint == "" || err != nil || (ep.Scheme != "https" && ep.Scheme != "http") || ep.Host == "" {
		return "", fmt.Errorf("discovery: GET %s: token_endpoint %q is not an http(s) URL", u, doc.TokenEndpoint)
	}
	return doc.TokenEndpoint, nil
}
