package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Values as they are read (quoted, or bare up to the next "and" or "or") and written back.
//
// A quoted value is "…" or '…', with \" \' \\ \n \r \t \xHH (a byte) \uHHHH \UHHHHHHHH; any
// other backslash stays as typed, so that regular expressions read as they do unquoted
// ("\d+" is \d+). A bare value runs to the next "and", "or", "&&" or "||" between blanks, a
// parenthesis that closes a group, or the end, and keeps blanks inside; its quotes and
// parentheses must pair (an apostrophe between letters is no quote), and a word followed by an
// operator after a blank (key=a reason=b) is refused: "and" or "or" is missing, or the value
// wants quotes.

// value reads a quoted value, or a bare one.
func (p *parser) value() (string, error) {
	p.unclosed = -1
	if c := p.s[p.i]; c == '"' || c == '\'' {
		v, end, err := p.unquote(p.i)
		if err != nil {
			return "", err
		}
		if end == len(p.s) || isBlank(p.s[end]) || p.s[end] == ')' {
			p.i = end
			return v, nil
		}
		// "id":42 is a bare value that starts with a quote, not a quoted one.
	}
	if isOpChar(p.s[p.i]) {
		return "", p.errAt(p.i, fmt.Sprintf("a value cannot start with %q: quote it (\"%s…\")", p.s[p.i:p.i+1], p.s[p.i:p.i+1]))
	}
	return p.bare()
}

// unquote reads the quoted string that opens at i: its value and the index after it.
func (p *parser) unquote(i int) (string, int, error) {
	v, end, at, msg := unquote(p.s, i)
	if msg != "" {
		return "", 0, p.errAt(at, msg)
	}
	return v, end, nil
}

// unquote reads the quoted string that opens at s[i]; on failure msg says why and at where.
func unquote(s string, i int) (v string, end, at int, msg string) {
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == q:
			return b.String(), j + 1, 0, ""
		case c != '\\':
			b.WriteByte(c)
			continue
		case j+1 == len(s):
			return "", 0, i, "quote not closed"
		}
		j++
		switch e := s[j]; e {
		case '\\', '"', '\'':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'x', 'u', 'U':
			digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if j+1+digits > len(s) {
				return "", 0, j - 1, fmt.Sprintf("\\%c wants %d hex digits", e, digits)
			}
			n, err := strconv.ParseUint(s[j+1:j+1+digits], 16, 32)
			if err != nil || (e != 'x' && !utf8.ValidRune(rune(n))) {
				return "", 0, j - 1, fmt.Sprintf("\\%c wants %d hex digits of a character", e, digits)
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			j += digits
		default:
			b.WriteByte('\\') // \d stays \d, for regular expressions
			b.WriteByte(e)
		}
	}
	return "", 0, i, "quote not closed"
}

// bare reads a value up to the next "and" or "or", a parenthesis that closes a group, or the
// end. It records an opening parenthesis left open in p.unclosed: a regular expression
// reports its own error for it, other values refuse it.
func (p *parser) bare() (string, error) {
	start, end, parens := p.i, len(p.s), []int(nil)
	j := p.i
scan:
	for j < len(p.s) {
		switch c := p.s[j]; {
		case c == '\\':
			j += 2 // the next character ends nothing and opens nothing
			continue
		case c == '"' || c == '\'' && !isApostrophe(p.s, j):
			k := closingQuote(p.s, j)
			if k < 0 {
				return "", p.errAt(j, "quote not closed: close it, or quote the whole value (with \\\" or \\' inside) to hold a lone quote")
			}
			j = k + 1
			continue
		case c == '(':
			parens = append(parens, j)
		case c == ')':
			if len(parens) == 0 {
				if p.depth > 0 {
					end = j
					break scan
				}
				return "", p.errAt(j, "\")\" closes no \"(\": quote the value to hold it")
			}
			parens = parens[:len(parens)-1]
		case isBlank(c):
			k := skipBlanks(p.s, j)
			if k == len(p.s) || keywordAt(p.s, k, "and", "&&", "or", "||") > 0 {
				end = j
				break scan
			}
			if w, ok := looksLikeCondition(p.s, k); ok {
				return "", p.errAt(k, fmt.Sprintf("%q starts another condition: join conditions with \"and\" or \"or\", or quote the value that holds it", w))
			}
			j = k
			continue
		}
		j++
	}
	end = min(end, len(p.s))
	if len(parens) > 0 {
		p.unclosed = parens[0]
	}
	v := strings.TrimRight(p.s[start:end], " \t\r\n")
	p.i = end
	return v, nil
}

// isApostrophe reports whether the quote at s[i] stands between two letters or digits, as in
// can't: a part of a word, not a quote.
func isApostrophe(s string, i int) bool {
	if s[i] != '\'' || i == 0 || i+1 >= len(s) {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i+1:])
	wordy := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	return wordy(before) && wordy(after)
}

// closingQuote is the index of the quote that closes the one at s[i] (a backslash escapes
// one), -1 when none does.
func closingQuote(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case s[i]:
			return j
		}
	}
	return -1
}

// looksLikeCondition reports whether a condition starts at s[k]: a name followed by an
// operator, "has property.…", or one of payload's word forms. It is how a bare value finds
// an "and" or "or" left out; the word it returns names what it found.
func looksLikeCondition(s string, k int) (string, bool) {
	q := &parser{s: s, i: k}
	if _, ok := q.keyword("has"); ok {
		q.space()
		j := q.i
		if _, named, ok := q.fieldRef(); ok && named {
			return s[k:q.i], true
		}
		q.i = j
		return "", false
	}
	r, _ := utf8.DecodeRuneInString(s[k:])
	if !unicode.IsLetter(r) && r != '_' {
		return "", false
	}
	t, named, ok := q.fieldRef()
	if !ok {
		return "", false
	}
	w := s[k:q.i]
	j := skipBlanks(s, q.i)
	if j < len(s) && isOpChar(s[j]) {
		return w + s[j:j+1], true
	}
	if t.field == "payload" && !named && j > q.i {
		q.i = j
		if _, ok, err := q.payloadWords(k); ok && err == nil {
			return s[k:q.i], true
		}
	}
	return "", false
}

// Quote writes v as a condition's value (key=…, property.NAME=…) so that Parse reads back
// exactly v, whatever it holds: bare when it reads back so, else in double quotes with
// escapes for quotes, backslashes, control characters and bytes that are not UTF-8.
func Quote(v string) string { return quoteValue(v) }

// QuoteName writes v as a property name (property.…, has property.…) that Parse reads back
// as exactly v.
func QuoteName(v string) string { return quoteName(v, false) }

func quoteValue(v string) string {
	if plain(v) {
		if e, err := Parse("(key="+v+")", time.Time{}); err == nil && e.root.op == opCond && e.root.t.value == v {
			return v
		}
	}
	return quoted(v)
}

// quoteText writes a text condition's value: bare when it reads back as that text, not as a
// keyword or a condition.
func quoteText(v string) string {
	if plain(v) {
		if e, err := Parse("("+v+")", time.Time{}); err == nil && e.root.op == opCond && e.root.t.field == "" && e.root.t.value == v {
			return v
		}
	}
	return quoted(v)
}

// quoteName writes a property name, or one key of a JSON path (json: a dot needs quotes).
func quoteName(v string, json bool) string {
	ok := plain(v)
	for i := 0; ok && i < len(v); i++ {
		ok = isNameChar(v[i]) && !(json && v[i] == '.')
	}
	if ok {
		return v
	}
	return quoted(v)
}

// plain reports whether v can be written as it is: not empty, UTF-8, printable, no blank at
// either end.
func plain(v string) bool {
	if v == "" || !utf8.ValidString(v) || strings.TrimSpace(v) != v {
		return false
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// quoted writes v in double quotes, escaping what Parse would not read back as typed and
// what a terminal would not show.
func quoted(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, v[i])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) && r != ' ':
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// QuotePathKey writes v as one key of a JSON path (json.…, has json.…) that Parse reads back
// as exactly v: a dot inside a key needs quotes.
func QuotePathKey(v string) string { return quoteName(v, true) }
