package userconfig

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The cluster's URLs, from config.toml and from the command line alike. A URL may not carry
// credentials (user:password@host): letterbox prints its URLs (the replay history, the log,
// the TUI's header), and the credentials belong in the token settings, which it never prints.

// ErrCredentialsInURL is the error of a URL with credentials in it.
var ErrCredentialsInURL = errors.New("no credentials in the URL")

// CheckURL checks that raw is scheme://HOST[:PORT] for one of schemes, without credentials.
// Its errors quote raw with any credentials masked (Redacted).
func CheckURL(raw string, schemes ...string) error {
	if raw == "" {
		return fmt.Errorf("is missing (want %s://HOST:PORT)", schemes[0])
	}
	u, err := url.Parse(raw)
	switch {
	case err == nil && u.User != nil:
		return fmt.Errorf("%q: %w", u.Redacted(), ErrCredentialsInURL)
	case err != nil || !slices.Contains(schemes, u.Scheme) || u.Host == "":
		return fmt.Errorf("%q: want %s", Redacted(raw), strings.Join(mapSlice(schemes, func(s string) string { return s + "://HOST:PORT" }), " or "))
	}
	return nil
}

// Redacted is raw with the password of any credentials in it masked, as url.URL.Redacted
// writes it, also when raw does not parse as a URL.
func Redacted(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		rest = raw
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(authority[:at], ":")
	if !hasPassword {
		return raw
	}
	start := len(raw) - len(rest)
	return raw[:start] + user + ":xxxxx" + raw[start+at:]
}
