package auth

import "strings"

// Traditional Unix crypt(3): DES with a 12-bit salt, 25 rounds over a zero block. Upstream's
// basic provider checks every password that is not "$apr1$..." this way (commons-codec
// Crypt.crypt with the stored hash's first two characters as the salt), so htpasswd -d files
// work against letterbox as against upstream. Go's crypto/des cannot perturb the expansion with
// a salt, so this is a plain bit-by-bit DES: slow by DES standards (about a millisecond per
// password), which is nothing next to a connection's handshake.
//
// Tables are the standard ones of FIPS 46-3, bits numbered from 1 at the most significant end.

var (
	desIP = [64]byte{
		58, 50, 42, 34, 26, 18, 10, 2, 60, 52, 44, 36, 28, 20, 12, 4,
		62, 54, 46, 38, 30, 22, 14, 6, 64, 56, 48, 40, 32, 24, 16, 8,
		57, 49, 41, 33, 25, 17, 9, 1, 59, 51, 43, 35, 27, 19, 11, 3,
		61, 53, 45, 37, 29, 21, 13, 5, 63, 55, 47, 39, 31, 23, 15, 7,
	}
	desFP = [64]byte{
		40, 8, 48, 16, 56, 24, 64, 32, 39, 7, 47, 15, 55, 23, 63, 31,
		38, 6, 46, 14, 54, 22, 62, 30, 37, 5, 45, 13, 53, 21, 61, 29,
		36, 4, 44, 12, 52, 20, 60, 28, 35, 3, 43, 11, 51, 19, 59, 27,
		34, 2, 42, 10, 50, 18, 58, 26, 33, 1, 41, 9, 49, 17, 57, 25,
	}
	desE = [48]byte{
		32, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8, 9, 8, 9, 10, 11, 12, 13, 12, 13, 14, 15, 16, 17,
		16, 17, 18, 19, 20, 21, 20, 21, 22, 23, 24, 25, 24, 25, 26, 27, 28, 29, 28, 29, 30, 31, 32, 1,
	}
	desP = [32]byte{
		16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10,
		2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4, 25,
	}
	desPC1 = [56]byte{
		57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18,
		10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36,
		63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22,
		14, 6, 61, 53, 45, 37, 29, 21, 13, 5, 28, 20, 12, 4,
	}
	desPC2 = [48]byte{
		14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10, 23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2,
		41, 52, 31, 37, 47, 55, 30, 40, 51, 45, 33, 48, 44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32,
	}
	desShifts = [16]byte{1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1}
	desS      = [8][4][16]byte{
		{{14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7}, {0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8},
			{4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0}, {15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13}},
		{{15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10}, {3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5},
			{0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15}, {13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9}},
		{{10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8}, {13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1},
			{13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7}, {1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12}},
		{{7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15}, {13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9},
			{10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4}, {3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14}},
		{{2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9}, {14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6},
			{4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14}, {11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3}},
		{{12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11}, {10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8},
			{9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6}, {4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13}},
		{{4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1}, {13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6},
			{1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2}, {6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12}},
		{{13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7}, {1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2},
			{7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8}, {2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11}},
	}
)

// cryptAlphabet is crypt(3)'s base-64 alphabet, for the salt and the hash alike.
const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// permute picks the bits table names (1 = most significant of an n-bit in) into a new value.
func permute(in uint64, n int, table []byte) uint64 {
	var out uint64
	for _, t := range table {
		out = out<<1 | (in>>(n-int(t)))&1
	}
	return out
}

// desKeySchedule returns the 16 round keys (48 bits each) of a 64-bit key.
func desKeySchedule(key uint64) [16]uint64 {
	k := permute(key, 64, desPC1[:])
	c, d := k>>28, k&0xfffffff
	var ks [16]uint64
	for i, s := range desShifts {
		c = (c<<s | c>>(28-s)) & 0xfffffff
		d = (d<<s | d>>(28-s)) & 0xfffffff
		ks[i] = permute(c<<28|d, 56, desPC2[:])
	}
	return ks
}

// desEncrypt encrypts one block with the round keys ks and the expansion table e (the standard
// one, or one a crypt(3) salt has swapped bits of).
func desEncrypt(block uint64, ks *[16]uint64, e *[48]byte) uint64 {
	x := permute(block, 64, desIP[:])
	l, r := x>>32, x&0xffffffff
	for i := range ks {
		l, r = r, l^desF(r, ks[i], e)
	}
	return permute(r<<32|l, 64, desFP[:])
}

func desF(r, k uint64, e *[48]byte) uint64 {
	x := permute(r, 32, e[:]) ^ k
	var out uint64
	for i := range 8 {
		six := (x >> (42 - 6*i)) & 0x3f
		row := (six>>4)&2 | six&1
		out = out<<4 | uint64(desS[i][row][(six>>1)&0xf])
	}
	return permute(out, 32, desP[:])
}

// desCrypt computes crypt(3) of password with the two-character salt: the 13-character string
// htpasswd -d writes. ok is false for a salt outside crypt's alphabet, which upstream's
// commons-codec refuses too.
func desCrypt(password []byte, salt string) (string, bool) {
	if len(salt) != 2 {
		return "", false
	}
	e := desE
	for i := range 2 {
		v := strings.IndexByte(cryptAlphabet, salt[i])
		if v < 0 {
			return "", false
		}
		for j := range 6 {
			if v>>j&1 == 1 {
				e[6*i+j], e[6*i+j+24] = e[6*i+j+24], e[6*i+j]
			}
		}
	}
	// The key is the first 8 bytes, 7 bits each, shifted over DES's parity bit.
	var key uint64
	for i := range 8 {
		var c byte
		if i < len(password) {
			c = password[i]
		}
		key = key<<8 | uint64(c<<1)
	}
	ks := desKeySchedule(key)
	var block uint64
	for range 25 {
		block = desEncrypt(block, &ks, &e)
	}
	out := make([]byte, 0, 13)
	out = append(out, salt...)
	// 64 bits and two zero bits, six at a time from the most significant.
	for i := range 11 {
		shift := 58 - 6*i
		var v uint64
		if shift >= 0 {
			v = block >> shift & 0x3f
		} else {
			v = block << -shift & 0x3f
		}
		out = append(out, cryptAlphabet[v])
	}
	return string(out), true
}
