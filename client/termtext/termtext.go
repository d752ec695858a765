// Package termtext makes text from strangers safe to print on a terminal. A dead letter's key,
// properties and payload, a producer's name, a topic named by a letter's REAL_TOPIC: any of
// them may hold an escape sequence that retitles the window, clears the screen or draws a fake
// prompt, a NUL that truncates a line, or a bidirectional override that makes text read
// backwards. Every command and screen that prints such text passes it through Line (one line:
// a cell, a field of a preview) or Block (a payload shown whole), which write each such
// character visibly, as Go writes it in a string literal: \x1b, \x00, \u202e. Printable text,
// any script included, is returned unchanged and without allocating.
//
// A form that edits such text (the TUI's resend) shows it with Quote, which also writes a
// backslash as \\, and reads it back with Unquote, losslessly.
//
// JSON output is exact and needs none of this: encoding/json escapes control characters itself.
//
// The package imports nothing of letterbox, so the command line and the TUI share it.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line returns s with every character a terminal would act on written as an escape: C0
// controls (tab and newline included, as \t and \n, so that the text stays on one line), DEL,
// C1 controls, the bidirectional formatting characters, the line and paragraph separators,
// and each byte of s that is not UTF-8 (\xff).
func Line(s string) string { return escape(s, false) }

// Block is Line for text shown over several lines: newlines and tabs are kept, everything else
// Line escapes is escaped (a carriage return too, which would let a line overwrite itself).
func Block(s string) string { return escape(s, true) }

// Safe reports whether Line would return s unchanged.
func Safe(s string) bool { return firstUnsafe(s, false) < 0 }

func escape(s string, block bool) string {
	i := firstUnsafe(s, block)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case !unsafeRune(r, block):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			writeHex(&b, `\x`, uint32(r), 2)
		default:
			writeHex(&b, `\u`, uint32(r), 4)
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of the first byte of s that escape would change, or -1.
func firstUnsafe(s string, block bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r, block) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports whether r is written as an escape.
func unsafeRune(r rune, block bool) bool {
	switch {
	case block && (r == '\n' || r == '\t'):
		return false
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	}
	switch r {
	case 0x061c, // arabic letter mark
		0x200e, 0x200f, // left-to-right and right-to-left marks
		0x202a, 0x202b, 0x202c, 0x202d, 0x202e, // embeddings and overrides
		0x2066, 0x2067, 0x2068, 0x2069, // isolates
		0x2028, 0x2029: // line and paragraph separators
		return true
	}
	return false
}

func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := (digits - 1) * 4; shift >= 0; shift -= 4 {
		b.WriteByte(hex[v>>uint(shift)&0xf])
	}
}

// Quote is Line made reversible, for a form that edits a stranger's text: what Line escapes,
// and a backslash written as \\, so that Unquote gives s back exactly.
func Quote(s string) string { return quote(s, false) }

// QuoteBlock is Quote keeping newlines and tabs, for text edited over several lines.
func QuoteBlock(s string) string { return quote(s, true) }

func quote(s string, block bool) string {
	if !strings.Contains(s, `\`) {
		return escape(s, block)
	}
	var b strings.Builder
	for i, part := range strings.Split(s, `\`) {
		if i > 0 {
			b.WriteString(`\\`)
		}
		b.WriteString(escape(part, block))
	}
	return b.String()
}

// Unquote reverses Quote and QuoteBlock: \\, \n, \t, \r, \xNN (a byte) and \uNNNN (a
// character); any other backslash is an error naming its place (from 1, in characters).
func Unquote(s string) (string, error) {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s, nil
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		bad := func() error {
			return fmt.Errorf(`character %d: %q is no escape (\\, \n, \t, \r, \xNN or \uNNNN; a backslash is \\)`,
				utf8.RuneCountInString(s[:i])+1, s[i:min(i+2, len(s))])
		}
		if i+1 >= len(s) {
			return "", bad()
		}
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
			i += 2
		case 'n':
			b.WriteByte('\n')
			i += 2
		case 't':
			b.WriteByte('\t')
			i += 2
		case 'r':
			b.WriteByte('\r')
			i += 2
		case 'x', 'u':
			digits := 2
			if s[i+1] == 'u' {
				digits = 4
			}
			if i+2+digits > len(s) {
				return "", bad()
			}
			v, err := strconv.ParseUint(s[i+2:i+2+digits], 16, 32)
			if err != nil {
				return "", bad()
			}
			if digits == 2 {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += 2 + digits
		default:
			return "", bad()
		}
	}
	return b.String(), nil
}
