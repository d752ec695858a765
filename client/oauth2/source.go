package oauth2

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// maxRefreshMargin is how long before its expiry a token is replaced at most: upstream's clients
// use one minute, which would leave nothing of a short-lived token.
const maxRefreshMargin = time.Minute

// refreshMargin is how long before expiry a token of lifetime is replaced: a fifth of its
// lifetime, at most maxRefreshMargin, so a token is never handed out just as it expires.
func refreshMargin(lifetime time.Duration) time.Duration {
	return min(maxRefreshMargin, lifetime/5)
}

// TokenSource hands out access tokens of one client-credentials configuration, cached until
// shortly before they expire. It is safe for concurrent use; callers that need a new token at
// the same time share one request to the issuer.
type TokenSource struct {
	cfg Config
	now func() time.Time

	mu       sync.Mutex
	cur      token
	issuer   string // the issuer endpoint was discovered from
	endpoint string // its token endpoint, "" until discovered
	inflight *fetch // the request under way, nil when none
}

// fetch is one request to the issuer; done is closed once tok, err and abandoned are set.
type fetch struct {
	done chan struct{}
	tok  token
	err  error
	// abandoned: the request failed because the caller that made it gave up (its ctx ended),
	// which says nothing about the issuer.
	abandoned bool
}

// NewTokenSource checks cfg — the credentials can be read and an issuer URL is known — without
// contacting the issuer.
func NewTokenSource(cfg Config) (*TokenSource, error) {
	cfg.IssuerURL = strings.TrimSpace(cfg.IssuerURL)
	cfg.PrivateKey = strings.TrimSpace(cfg.PrivateKey)
	if cfg.PrivateKey == "" {
		return nil, errors.New("oauth2: no credentials file (privateKey)")
	}
	cr, err := readCredentials(cfg.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("oauth2: %w", err)
	}
	issuer := issuerOf(cfg, cr)
	if issuer == "" {
		return nil, fmt.Errorf("oauth2: no issuer URL: set issuerUrl or issuer_url in the %s", describe(cfg.PrivateKey))
	}
	if err := checkIssuer(issuer); err != nil {
		return nil, fmt.Errorf("oauth2: %w", err)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	if cfg.HTTPClient != nil {
		copied := *cfg.HTTPClient // the caller's client keeps its own redirect policy
		hc = &copied
	}
	hc.CheckRedirect = checkRedirect // redirect.go
	cfg.HTTPClient = hc
	return &TokenSource{cfg: cfg, now: time.Now}, nil
}

// issuerOf is the configured issuer, or else the credentials file's, as upstream's clients.
func issuerOf(cfg Config, cr credentials) string {
	if cfg.IssuerURL != "" {
		return cfg.IssuerURL
	}
	return cr.IssuerURL
}

// Issuer is the issuer URL tokens come from (the configured one, or the credentials file's), for
// messages.
func (ts *TokenSource) Issuer() string {
	ts.mu.Lock()
	issuer := ts.issuer
	ts.mu.Unlock()
	if issuer != "" {
		return issuer
	}
	if ts.cfg.IssuerURL != "" {
		return ts.cfg.IssuerURL
	}
	cr, err := readCredentials(ts.cfg.PrivateKey)
	if err != nil {
		return ""
	}
	return cr.IssuerURL
}

// Token returns the cached access token, or fetches one when there is none or the cached one is
// about to expire. Errors name the issuer URL.
func (ts *TokenSource) Token(ctx context.Context) (string, error) {
	return ts.get(ctx, false)
}

// Refresh fetches a new access token whatever the cache holds (joining a request already under
// way): for when the server found the current one expired or refused it, as a broker's
// AUTH_CHALLENGE or an HTTP 401 says.
func (ts *TokenSource) Refresh(ctx context.Context) (string, error) {
	return ts.get(ctx, true)
}

// Authorization is the value of an HTTP Authorization header: "Bearer " and the token of Token.
func (ts *TokenSource) Authorization(ctx context.Context) (string, error) {
	tok, err := ts.Token(ctx)
	if err != nil {
		return "", err
	}
	return "Bearer " + tok, nil
}

func (ts *TokenSource) get(ctx context.Context, force bool) (string, error) {
	for {
		ts.mu.Lock()
		if !force && ts.fresh() {
			tok := ts.cur.access
			ts.mu.Unlock()
			return tok, nil
		}
		if f := ts.inflight; f != nil {
			ts.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return "", fmt.Errorf("oauth2: issuer %s: waiting for a token: %w", ts.Issuer(), ctx.Err())
			}
			if f.abandoned && ctx.Err() == nil {
				continue // the caller that made the request gave up; make our own
			}
			return f.tok.access, f.err
		}
		f := &fetch{done: make(chan struct{})}
		ts.inflight = f
		ts.mu.Unlock()

		f.tok, f.err = ts.fetch(ctx)
		f.abandoned = f.err != nil && ctx.Err() != nil
		ts.mu.Lock()
		if f.err == nil {
			ts.cur = f.tok
		}
		ts.inflight = nil
		ts.mu.Unlock()
		close(f.done)
		return f.tok.access, f.err
	}
}

// fresh reports whether the cached token may still be handed out. ts.mu is held.
func (ts *TokenSource) fresh() bool {
	if ts.cur.access == "" {
		return false
	}
	if ts.cur.expires.IsZero() {
		return true // the issuer gave no lifetime: used until a server refuses it (Refresh)
	}
	return ts.now().Before(ts.cur.expires.Add(-refreshMargin(ts.cur.lifetime)))
}

// fetch reads the credentials again (a rotated secret is picked up), discovers the token
// endpoint when the issuer is new, and asks it for a token.
func (ts *TokenSource) fetch(ctx context.Context) (token, error) {
	cr, err := readCredentials(ts.cfg.PrivateKey)
	if err != nil {
		return token{}, fmt.Errorf("oauth2: %w", err)
	}
	issuer := issuerOf(ts.cfg, cr)
	if issuer == "" {
		return token{}, fmt.Errorf("oauth2: no issuer URL: set issuerUrl or issuer_url in the %s", describe(ts.cfg.PrivateKey))
	}
	ts.mu.Lock()
	endpoint := ""
	if ts.issuer == issuer {
		endpoint = ts.endpoint
	}
	ts.mu.Unlock()
	if endpoint == "" {
		if endpoint, err = discover(ctx, ts.cfg.HTTPClient, issuer); err != nil {
			return token{}, fmt.Errorf("oauth2: issuer %s: %w", issuer, err)
		}
		ts.mu.Lock()
		ts.issuer, ts.endpoint = issuer, endpoint
		ts.mu.Unlock()
	}
	tok, err := exchange(ctx, ts.cfg.HTTPClient, endpoint, cr, ts.cfg.Audience, scopes(ts.cfg.Scope, cr.Scope))
	if err != nil {
		// Discover again next time: the endpoint may have moved.
		ts.mu.Lock()
		ts.endpoint = ""
		ts.mu.Unlock()
		return token{}, fmt.Errorf("oauth2: issuer %s: %w", issuer, err)
	}
	return tok, nil
}

// scopes merges the configured scopes with the credentials file's, as the official Go client.
func scopes(configured, fromFile string) []string {
	var out []string
	for _, s := range append(strings.Fields(configured), strings.Fields(fromFile)...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
