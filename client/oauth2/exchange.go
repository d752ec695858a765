package oauth2

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// TokenError is the issuer's refusal of a token request: its HTTP status and, when it answered
// as RFC 6749 section 5.2 says, the error code and description ("invalid_client").
type TokenError struct {
	Status      int
	Code        string
	Description string
}

func (e *TokenError) Error() string {
	var b strings.Builder
	b.WriteString("token request refused")
	if e.Code != "" {
		b.WriteString(": " + e.Code)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	return b.String()
}

// token is an access token and when to stop using it.
type token struct {
	access string
	// expires is when the issuer said it expires; zero when it did not say (expires_in).
	expires time.Time
	// lifetime is expires_in, for the refresh margin.
	lifetime time.Duration
}

// exchange asks the token endpoint for an access token with the client-credentials grant. As the
// official Go client, the client id and secret go in the form (client_secret_post), not in a
// Basic Authorization header; scope and audience only when set.
func exchange(ctx context.Context, hc *http.Client, endpoint string, cr credentials, audience string, scopes []string) (token, error) {
	form := url.Values{}
	form.Set("grant_type", "client_credentials")
	form.Set("client_id", cr.ClientID)
	form.Set("client_secret", cr.ClientSecret)
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	if audience != "" {
		form.Set("audience", audience)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return token{}, fmt.Errorf("token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	sent := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		// The error names the endpoint; never the form, which holds the secret.
		return token{}, fmt.Errorf("token request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return token{}, fmt.Errorf("token request: POST %s: %w", endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		te := &TokenError{Status: resp.StatusCode}
		var e struct {
			Error            string `json:"error"`
			ErrorDescription string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			te.Code, te.Description = e.Error, e.ErrorDescription
		}
		return token{}, te
	}
	var tr struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		return token{}, fmt.Errorf("token request: POST %s: answer is not JSON: %w", endpoint, err)
	}
	if tr.AccessToken == "" {
		return token{}, errors.New("token request: the answer holds no access_token")
	}
	t := token{access: tr.AccessToken}
	if tr.ExpiresIn > 0 {
		// Counted from when the request left: the token may have been made just after.
		t.lifetime = time.Duration(tr.ExpiresIn) * time.Second
		t.expires = sent.Add(t.lifetime)
	}
	return t, nil
}
