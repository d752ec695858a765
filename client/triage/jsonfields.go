package triage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// jsonScanner checks payloads for the payload facets: whether one is a JSON document, as
// json.Valid says, and the names of its top-level fields when it is an object. It validates and
// collects in one pass over the bytes, without decoding values: json.Valid's state machine
// alone cost more than the rest of a scan's facets together, for every letter of a large DLQ.
// A scanner is reused from letter to letter (it keeps its buffer) by one goroutine.
type jsonScanner struct {
	b     []byte
	i     int
	depth int
	names [][2]int // the top-level fields' names, quotes included, as ranges of b
}

// maxJSONDepth is encoding/json's bound on nesting: a deeper document is not valid there.
const maxJSONDepth = 10000

// fields reports whether b is valid JSON and, when it is an object, calls fn with the name of
// each of its top-level fields, in order, as written: quotes and escapes included (unquote
// reads it). The bytes are b's: fn must copy what it keeps.
func (p *jsonScanner) fields(b []byte, fn func(quoted []byte)) bool {
	p.b, p.i, p.depth, p.names = b, 0, 0, p.names[:0]
	defer func() { p.b = nil }() // the payload is not ours to keep
	p.space()
	if !p.value(true) {
		return false
	}
	p.space()
	if p.i != len(b) {
		return false
	}
	for _, r := range p.names {
		fn(b[r[0]:r[1]])
	}
	return true
}

func (p *jsonScanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) value(top bool) bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(top)
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return false
}

func (p *jsonScanner) object(top bool) bool {
	if empty, ok := p.open('}'); empty || !ok {
		return ok
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return false
		}
		start := p.i
		if !p.str() {
			return false
		}
		if top {
			p.names = append(p.names, [2]int{start, p.i})
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		if !p.value(false) {
			return false
		}
		if more, ok := p.next('}'); !more {
			return ok
		}
	}
}

func (p *jsonScanner) array() bool {
	if empty, ok := p.open(']'); empty || !ok {
		return ok
	}
	for {
		if !p.value(false) {
			return false
		}
		if more, ok := p.next(']'); !more {
			return ok
		}
	}
}

// open enters the object or array at p.i, which close ends, as deep as encoding/json allows;
// empty when close follows at once (and is read).
func (p *jsonScanner) open(close byte) (empty, ok bool) {
	if p.depth++; p.depth > maxJSONDepth {
		return false, false
	}
	p.i++
	p.space()
	if p.i < len(p.b) && p.b[p.i] == close {
		p.i++
		p.depth--
		return true, true
	}
	return false, true
}

// next reads what follows a member of the object or array that close ends: a comma (more
// members), or close (the end).
func (p *jsonScanner) next(close byte) (more, ok bool) {
	p.space()
	if p.i >= len(p.b) {
		return false, false
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		p.space()
		return true, true
	case close:
		p.i++
		p.depth--
		return false, true
	}
	return false, false
}

// shortString is how many bytes of a string str reads one at a time before it searches.
const shortString = 16

// str reads a string from its opening quote. As encoding/json, it refuses control characters
// and unknown escapes, and takes any other byte as it is (no UTF-8 check).
//
// Most of a payload's bytes are in strings and most strings hold no escape: it finds the
// closing quote and the backslashes with bytes.IndexByte (vector instructions), and checks the
// bytes between for control characters eight at a time. Each search starts where the last
// ended, so a string full of escapes is still read in one pass.
func (p *jsonScanner) str() bool {
	b := p.b
	i := p.i + 1
	// Most strings are short (names, ids, codes): read byte by byte, they end before the
	// searches below, three calls and three passes, would have started.
	for end := min(i+shortString, len(b)); i < end; i++ {
		switch c := b[i]; {
		case c == '"':
			p.i = i + 1
			return true
		case c == '\\' || c < 0x20:
			goto search // the escape is read below; a control character refused there
		}
	}
search:
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return false
		}
		q += i // the next quote: the end, unless a backslash before it escapes it
		for {
			e := bytes.IndexByte(b[i:q], '\\')
			if e < 0 {
				if control(b[i:q]) {
					return false
				}
				p.i = q + 1
				return true
			}
			e += i
			if control(b[i:e]) || e+1 >= len(b) {
				return false
			}
			switch b[e+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i = e + 2
			case 'u':
				if e+5 >= len(b) || !hex(b[e+2]) || !hex(b[e+3]) || !hex(b[e+4]) || !hex(b[e+5]) {
					return false
				}
				i = e + 6
			default:
				return false
			}
			if i > q {
				break // the escape took the quote (or passed it): find the next one
			}
		}
	}
}

// control reports whether s holds a control character (a byte below 0x20), eight bytes at a
// time: the classic test for a byte below n in a word, exact as to whether any byte is one.
func control(s []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 16 {
		w, v := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
		if ((w-ones*0x20)&^w|(v-ones*0x20)&^v)&highs != 0 {
			return true
		}
		s = s[16:]
	}
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64(s)
		if (w-ones*0x20)&^w&highs != 0 {
			return true
		}
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 {
			return true
		}
	}
	return false
}

func hex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func (p *jsonScanner) digits() bool {
	start := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonScanner) number() bool {
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i >= len(p.b):
		return false
	case p.b[p.i] == '0':
		p.i++
	case '1' <= p.b[p.i] && p.b[p.i] <= '9':
		p.digits()
	default:
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return false
		}
	}
	return true
}

func (p *jsonScanner) literal(word string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		return false
	}
	p.i += len(word)
	return true
}

// unquote is the JSON string q (quotes included) as Go text, as encoding/json reads it (bytes
// that are not UTF-8 become U+FFFD): the name `has json.NAME` finds.
func unquote(q []byte) string {
	if len(q) >= 2 && bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1 : len(q)-1])
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return string(q)
	}
	return s
}
