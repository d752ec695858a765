package auth

import (
	"crypto/md5"
	"strings"
)

// apr1Magic starts the hashes of Apache's MD5 crypt variant, what `htpasswd -m` (its default)
// writes and upstream's basic provider checks with commons-codec Md5Crypt.apr1Crypt.
const apr1Magic = "$apr1$"

// apr1Crypt computes "$apr1$salt$hash" for password, with salt cut at 8 characters or its
// first '$' (as Md5Crypt does).
func apr1Crypt(password []byte, salt string) string {
	if i := strings.IndexByte(salt, '$'); i >= 0 {
		salt = salt[:i]
	}
	salt = salt[:min(len(salt), 8)]

	alt := md5.New()
	alt.Write(password)
	alt.Write([]byte(salt))
	alt.Write(password)
	altSum := alt.Sum(nil)

	h := md5.New()
	h.Write(password)
	h.Write([]byte(apr1Magic))
	h.Write([]byte(salt))
	for n := len(password); n > 0; n -= 16 {
		h.Write(altSum[:min(n, 16)])
	}
	for n := len(password); n != 0; n >>= 1 {
		if n&1 == 1 {
			h.Write([]byte{0})
		} else {
			h.Write(password[:1])
		}
	}
	sum := h.Sum(nil)

	// A thousand rounds, to make guessing slow (as md5crypt always did).
	for i := range 1000 {
		r := md5.New()
		if i&1 == 1 {
			r.Write(password)
		} else {
			r.Write(sum)
		}
		if i%3 != 0 {
			r.Write([]byte(salt))
		}
		if i%7 != 0 {
			r.Write(password)
		}
		if i&1 == 1 {
			r.Write(sum)
		} else {
			r.Write(password)
		}
		sum = r.Sum(sum[:0])
	}

	out := make([]byte, 0, len(apr1Magic)+len(salt)+1+22)
	out = append(out, apr1Magic...)
	out = append(out, salt...)
	out = append(out, '$')
	put := func(v uint32, n int) {
		for range n {
			out = append(out, cryptAlphabet[v&0x3f])
			v >>= 6
		}
	}
	b := func(i int) uint32 { return uint32(sum[i]) }
	put(b(0)<<16|b(6)<<8|b(12), 4)
	put(b(1)<<16|b(7)<<8|b(13), 4)
	put(b(2)<<16|b(8)<<8|b(14), 4)
	put(b(3)<<16|b(9)<<8|b(15), 4)
	put(b(4)<<16|b(10)<<8|b(5), 4)
	put(b(11), 2)
	return string(out)
}
