package auth

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// maxKeyFile bounds what LoadKey reads from a file: keys are a few KB.
const maxKeyFile = 1 << 20

// LoadKey reads a key given as upstream's tokenSecretKey / tokenPublicKey accept it:
//
//   - file:///path/to/key (or file:/path) — the file's bytes;
//   - data:;base64,<base64> (any media type; without ;base64 the data is percent-encoded);
//   - a path to an existing file;
//   - otherwise the value itself, base64-encoded.
//
// Errors name the form or the file, never the key material.
func LoadKey(spec string) ([]byte, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "":
		return nil, errors.New("empty key setting")
	case hasPrefixFold(spec, "data:"):
		return decodeDataURL(spec)
	case hasPrefixFold(spec, "file:"):
		u, err := url.Parse(spec)
		if err != nil || u.Path == "" || u.Opaque != "" {
			return nil, errors.New("malformed file: URL; want file:///absolute/path")
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("file: URL names host %q; only local files can be read", u.Host)
		}
		return readKeyFile(u.Path)
	}
	if st, err := os.Stat(spec); err == nil && st.Mode().IsRegular() {
		return readKeyFile(spec)
	}
	// A missing file in an existing directory is a mistake, not a base64 key (whose alphabet
	// has '/'); only such a value is quoted: anything else may be a mistyped key.
	if dir := filepath.Dir(spec); strings.ContainsRune(spec, os.PathSeparator) && dir != "/" && dir != "." {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return nil, fmt.Errorf("key file %s does not exist", spec)
		}
	}
	if key, err := decodeBase64(spec); err == nil && len(key) > 0 {
		return key, nil
	}
	return nil, errors.New("key setting is neither a file:, data: URL, an existing file nor base64")
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("key file %s: %w", path, err)
	case len(b) > maxKeyFile:
		return nil, fmt.Errorf("key file %s: larger than %d bytes", path, maxKeyFile)
	case len(b) == 0:
		return nil, fmt.Errorf("key file %s is empty", path)
	}
	return b, nil
}

// decodeDataURL decodes an RFC 2397 data: URL, as java.net.URL with Pulsar's data handler does.
func decodeDataURL(spec string) ([]byte, error) {
	meta, data, ok := strings.Cut(spec[len("data:"):], ",")
	if !ok {
		return nil, errors.New("malformed data: URL; want data:;base64,<key>")
	}
	var key []byte
	if strings.HasSuffix(strings.ToLower(meta), ";base64") {
		k, err := decodeBase64(data)
		if err != nil {
			return nil, errors.New("data: URL: the key is not valid base64")
		}
		key = k
	} else {
		s, err := url.PathUnescape(data)
		if err != nil {
			return nil, errors.New("data: URL: the key is not valid percent-encoding")
		}
		key = []byte(s)
	}
	if len(key) == 0 {
		return nil, errors.New("data: URL holds no key")
	}
	return key, nil
}

// decodeBase64 accepts standard and URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// ParsePublicKey parses an RSA or EC public key, DER or PEM encoded (SubjectPublicKeyInfo,
// or PKCS#1 for RSA). Any other key type is refused with ErrInvalidKey.
func ParsePublicKey(b []byte) (any, error) {
	der := b
	if looksLikePEM(b) {
		block, _ := pem.Decode(b)
		if block == nil {
			return nil, fmt.Errorf("%w: malformed PEM", ErrInvalidKey)
		}
		if strings.Contains(block.Type, "PRIVATE") {
			return nil, fmt.Errorf("%w: a private key was given where the public key belongs", ErrInvalidKey)
		}
		der = block.Bytes
	}
	var key any
	if k, err := x509.ParsePKIXPublicKey(der); err == nil {
		key = k
	} else if k, err := x509.ParsePKCS1PublicKey(der); err == nil {
		key = k
	} else {
		return nil, fmt.Errorf("%w: not an X.509 (PKIX) or PKCS#1 public key", ErrInvalidKey)
	}
	switch key.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
		return key, nil
	}
	return nil, fmt.Errorf("%w: %T keys are not supported; use RSA or EC (P-256, P-384, P-521)", ErrInvalidKey, key)
}

func looksLikePEM(b []byte) bool {
	return strings.HasPrefix(strings.TrimSpace(string(b[:min(len(b), 64)])), "-----BEGIN")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
