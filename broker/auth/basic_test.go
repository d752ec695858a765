package auth

import (
	"crypto/des"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Vectors from the C library's crypt(3) and `openssl passwd -apr1`, what htpasswd -d and -m
// write.
func TestCryptVectors(t *testing.T) {
	for _, v := range []struct{ pw, salt, want string }{
		{"123456", "ab", "ab01FAX.bQRSU"},
		{"password", "xy", "xyAjYtmfRYx/."},
		{"a", "./", "./xT2u5QYaHcU"},
		{"longpassword123", "Zz", "ZzIyHEjAFZRko"},
		{"", "AB", "AB/PLgjMdnCMg"},
		{"pässwort", "q9", "q9/g0u3sabe.."},
	} {
		if got, ok := desCrypt([]byte(v.pw), v.salt); !ok || got != v.want {
			t.Errorf("desCrypt(%q, %q) = %q, want %q", v.pw, v.salt, got, v.want)
		}
	}
	if _, ok := desCrypt([]byte("x"), "$1"); ok {
		t.Error("a salt outside crypt's alphabet was accepted")
	}
	for _, v := range []struct{ pw, salt, want string }{
		{"123456", "abcdefgh", "$apr1$abcdefgh$6LbQcMCxitqz7DTxoNR2s1"},
		{"secret", "x", "$apr1$x$12YdXEY0/hH4rDNkmZupO0"},
		{"", "salt1234", "$apr1$salt1234$5H34QiH40LY95k4Ru.Rsw0"},
		{"a-much-longer-password-than-16", "AbC./9", "$apr1$AbC./9$AOC.WNdFAZ9ZfAx87PDIH/"},
	} {
		if got := apr1Crypt([]byte(v.pw), v.salt); got != v.want {
			t.Errorf("apr1Crypt(%q, %q) = %q, want %q", v.pw, v.salt, got, v.want)
		}
	}
}

// Without a salt, crypt's DES is the standard one: compare it with crypto/des.
func TestDESMatchesStandard(t *testing.T) {
	for range 50 {
		var kb, pb [8]byte
		rand.Read(kb[:])
		rand.Read(pb[:])
		c, _ := des.NewCipher(kb[:])
		var want [8]byte
		c.Encrypt(want[:], pb[:])
		ks := desKeySchedule(binary.BigEndian.Uint64(kb[:]))
		e := desE
		if got := desEncrypt(binary.BigEndian.Uint64(pb[:]), &ks, &e); got != binary.BigEndian.Uint64(want[:]) {
			t.Fatalf("key %x block %x: %x, want %x", kb, pb, got, want)
		}
	}
}

func TestBasicProvider(t *testing.T) {
	conf := "admin:$apr1$abcdefgh$6LbQcMCxitqz7DTxoNR2s1\nold:ab01FAX.bQRSU\n\n"
	dir := t.TempDir()
	path := filepath.Join(dir, ".htpasswd")
	os.WriteFile(path, []byte(conf), 0o600)
	for _, spec := range []string{path, "file://" + path, "data:;base64," + base64.StdEncoding.EncodeToString([]byte(conf)),
		base64.StdEncoding.EncodeToString([]byte(conf))} {
		p, err := LoadBasicConf(spec)
		if err != nil {
			t.Fatalf("%.20s: %v", spec, err)
		}
		for _, ok := range []string{"admin:123456", "old:123456"} {
			if pr, err := p.Authenticate([]byte(ok)); err != nil || pr.Role != strings.Split(ok, ":")[0] {
				t.Errorf("%s: %v %v", ok, pr, err)
			}
		}
		for _, bad := range []string{"admin:1234567", "old:12345", "nobody:123456", "admin", "admin:", "admin:1:2", ""} {
			if _, err := p.Authenticate([]byte(bad)); err == nil {
				t.Errorf("%q accepted", bad)
			}
		}
	}
	p, _ := ParseBasicConf([]byte(conf))
	if _, err := p.Authenticate([]byte("admin:nope")); !errors.Is(err, ErrBadPassword) {
		t.Errorf("wrong password: %v", err)
	}
	for _, bad := range []string{"admin", "a:b:c", ""} {
		if _, err := ParseBasicConf([]byte(bad)); err == nil {
			t.Errorf("conf %q accepted", bad)
		}
	}
	if b, ok := BasicFromHeader("Basic " + base64.StdEncoding.EncodeToString([]byte("admin:123456"))); !ok || string(b) != "admin:123456" {
		t.Errorf("header: %q %v", b, ok)
	}
	for _, h := range []string{"Bearer x", "Basic", "Basic a b", "Basic !!!"} {
		if _, ok := BasicFromHeader(h); ok {
			t.Errorf("header %q accepted", h)
		}
	}
}
