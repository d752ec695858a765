package auth

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// MethodBasic is the auth method name of upstream's basic provider.
const MethodBasic = "basic"

// ErrBadPassword is a basic-auth user that is unknown or whose password does not match; the
// two are not told apart, as upstream ("Unknown user or invalid password").
var ErrBadPassword = errors.New("unknown user or invalid password")

// ErrMalformedBasic is basic credentials that are not user:password.
var ErrMalformedBasic = errors.New("malformed basic credentials")

// BasicProvider checks user names and passwords as upstream's AuthenticationProviderBasic: an
// htpasswd-style file of user:hash lines, the hash either "$apr1$salt$hash" (htpasswd -m) or
// traditional crypt(3) (htpasswd -d). The role is the user name. Upstream accepts no other
// scheme (bcrypt, SHA), so neither does this.
type BasicProvider struct {
	users map[string]string // user → stored hash
}

// LoadBasicConf reads the users file given as upstream's basicAuthConf accepts it (data: or
// file: URL, a path, or the file's content in base64; LoadKey's forms) and parses it. Errors
// name the line, never a hash.
func LoadBasicConf(spec string) (*BasicProvider, error) {
	data, err := LoadKey(spec)
	if err != nil {
		return nil, fmt.Errorf("basicAuthConf: %w", err)
	}
	return ParseBasicConf(data)
}

// ParseBasicConf parses user:hash lines. As upstream, a line with more or fewer than one ':'
// is an error; blank lines are skipped.
func ParseBasicConf(data []byte) (*BasicProvider, error) {
	p := &BasicProvider{users: make(map[string]string)}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(hash, ":") || hash == "" {
			return nil, fmt.Errorf("basicAuthConf line %d: want user:hash", n)
		}
		p.users[user] = hash
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("basicAuthConf: %w", err)
	}
	if len(p.users) == 0 {
		return nil, errors.New("basicAuthConf holds no users")
	}
	return p, nil
}

// Authenticate checks "user:password" (what clients send in CONNECT's auth_data) and returns
// the user as the role.
func (p *BasicProvider) Authenticate(userPassword []byte) (Principal, error) {
	if len(userPassword) == 0 {
		return Principal{}, ErrNoCredentials
	}
	if len(userPassword) > MaxTokenSize {
		return Principal{}, ErrTokenTooLarge
	}
	// Upstream splits on ':' and wants exactly two parts (Java's split drops trailing empty
	// ones): a password holding ':' cannot be used, nor an empty one.
	parts := strings.Split(string(userPassword), ":")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) != 2 {
		return Principal{}, fmt.Errorf("%w: want user:password", ErrMalformedBasic)
	}
	user, password := parts[0], []byte(parts[1])
	stored, ok := p.users[user]
	if !ok {
		return Principal{}, ErrBadPassword
	}
	var computed string
	if strings.HasPrefix(stored, apr1Magic) {
		// "$apr1$salt$hash" and nothing more, as upstream checks.
		if f := strings.Split(stored, "$"); len(f) == 4 {
			computed = apr1Crypt(password, f[2])
		}
	} else if len(stored) >= 2 {
		computed, _ = desCrypt(password, stored[:2])
	}
	if computed == "" || subtle.ConstantTimeCompare([]byte(computed), []byte(stored)) != 1 {
		return Principal{}, ErrBadPassword
	}
	return Principal{Role: user}, nil
}

// BasicFromHeader decodes an HTTP "Authorization: Basic <base64>" value into user:password, as
// upstream reads it; ok is false for any other header.
func BasicFromHeader(v string) ([]byte, bool) {
	if len(v) < 6 || !strings.EqualFold(v[:6], "basic ") {
		return nil, false
	}
	f := strings.Split(v, " ")
	if len(f) != 2 {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		return nil, false
	}
	return b, true
}
