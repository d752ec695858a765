package termtext

import "testing"

func TestLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"order-42", "order-42"},
		{"zürich · 東京 · 🙂", "zürich · 東京 · 🙂"},
		{`C:\path\x1b`, `C:\path\x1b`}, // a backslash is text, not an escape
		{"\x1b]0;owned\x07\x1b[2J", `\x1b]0;owned\x07\x1b[2J`},
		{"a\x00b", `a\x00b`},
		{"one\ntwo\tthree\r", `one\ntwo\tthree\r`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085\u009b", `c1\u0085\u009b`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"\u2066x\u2069\u200f", `\u2066x\u2069\u200f`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if Safe(tc.in) != (tc.in == tc.want) {
			t.Errorf("Safe(%q) = %v", tc.in, Safe(tc.in))
		}
	}
}

func TestBlockKeepsLines(t *testing.T) {
	t.Parallel()
	in := "{\n\t\"k\": \"\x1b[31mred\"\r\n}"
	want := "{\n\t\"k\": \"\\x1b[31mred\"\\r\n}"
	if got := Block(in); got != want {
		t.Fatalf("Block = %q, want %q", got, want)
	}
}

// No output of Line holds a byte a terminal acts on, whatever the input.
func FuzzLine(f *testing.F) {
	f.Add("\x1b[2J\x00\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		for i, r := range out {
			if r < 0x20 || (r >= 0x7f && r < 0xa0) || unsafeRune(r, false) {
				t.Fatalf("Line(%q) = %q: %U at %d", s, out, r, i)
			}
		}
		if Safe(s) && out != s {
			t.Fatalf("a safe string changed: %q → %q", s, out)
		}
		if Block(s) == s != (firstUnsafe(s, true) < 0) {
			t.Fatalf("Block(%q) disagrees with firstUnsafe", s)
		}
	})
}

func TestQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `C:\path\x41\\`, "k\x1b]0;t\x07\x00", "a\nb\tc\r", "\xff\xfe", "\u202e\u0085", `\u0041`} {
		for _, q := range []string{Quote(s), QuoteBlock(s)} {
			got, err := Unquote(q)
			if err != nil || got != s {
				t.Errorf("Unquote(%q) = %q, %v; want %q", q, got, err, s)
			}
		}
		if i := firstUnsafe(Quote(s), false); i >= 0 {
			t.Errorf("Quote(%q) = %q is not safe", s, Quote(s))
		}
	}
	if got := Quote(`a\b` + "\x1b"); got != `a\\b\x1b` {
		t.Errorf("Quote = %q", got)
	}
	if got := QuoteBlock("a\n\x1b"); got != "a\n\\x1b" {
		t.Errorf("QuoteBlock = %q", got)
	}
	for _, bad := range []string{`\`, `\q`, `\x4`, `\xzz`, `\u12`} {
		if _, err := Unquote(bad); err == nil {
			t.Errorf("Unquote(%q) accepted", bad)
		}
	}
}

func FuzzQuote(f *testing.F) {
	f.Add("\x1b[2J\\x1b\x00\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		for _, q := range []string{Quote(s), QuoteBlock(s)} {
			if got, err := Unquote(q); err != nil || got != s {
				t.Fatalf("Unquote(%q) = %q, %v; want %q", q, got, err, s)
			}
		}
	})
}
