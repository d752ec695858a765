package expr

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// The parser: a recursive descent over the grammar
//
//	expr      = and { ("or" | "||") and }
//	and       = unary { ("and" | "&&") unary }
//	unary     = "not" unary | "(" expr ")" | condition
//	condition = "has" NAMED | "payload" WORDS | FIELD OP VALUE | TEXT
//
// Keywords are words of any case, ended by a blank, a parenthesis or the end. Anything it does
// not implement is refused with its column rather than read as text: an operator it does not
// know (`=~`, `<>`; `==` is `=`), a lone quote or parenthesis, a condition where "and" or
// "or" should come first, a value left out.

// SyntaxError is an expression that does not parse: what is wrong and where.
type SyntaxError struct {
	Expr string
	Col  int // 1-based, in characters
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Pointer is the expression with a caret under the column, two lines, for a terminal: tabs
// before the column stay tabs, so that the caret lines up.
func (e *SyntaxError) Pointer() string {
	var pad strings.Builder
	for i, r := range []rune(e.Expr) {
		if i >= e.Col-1 {
			break
		}
		if r == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	return e.Expr + "\n" + pad.String() + "^"
}

// Parse parses an expression; relative times (published>=-2h) count back from now. An empty
// or blank expression is the empty Expr, which matches everything: callers that act on a
// selection refuse it (see Expr.Empty).
func Parse(s string, now time.Time) (*Expr, error) {
	p := &parser{s: s, now: now}
	p.space()
	if p.end() {
		return &Expr{}, nil
	}
	n, err := p.or("")
	if err != nil {
		return nil, err
	}
	if !p.end() {
		return nil, p.unexpected()
	}
	return &Expr{root: n}, nil
}

type parser struct {
	s     string
	i     int
	now   time.Time
	depth int // parentheses open at i
	// unclosed is where the last bare value left a parenthesis open, -1 when it did not.
	unclosed int
}

func (p *parser) errAt(i int, msg string) error {
	return &SyntaxError{Expr: p.s, Col: utf8.RuneCountInString(p.s[:i]) + 1, Msg: msg}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isOpChar(c byte) bool { return c == '=' || c == '!' || c == '~' || c == '<' || c == '>' }

func (p *parser) end() bool { return p.i == len(p.s) }

func (p *parser) space() { p.i = skipBlanks(p.s, p.i) }

func skipBlanks(s string, i int) int {
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return i
}

// word is the text from i to the next blank, for messages.
func (p *parser) word() string {
	j := p.i
	for j < len(p.s) && !isBlank(p.s[j]) {
		j++
	}
	return p.s[p.i:j]
}

// keywordAt reports how long the keyword at i is when s holds one of words there (any case),
// ended by a blank, a parenthesis or the end; 0 when it does not.
func keywordAt(s string, i int, words ...string) int {
	for _, w := range words {
		if len(s)-i < len(w) || !strings.EqualFold(s[i:i+len(w)], w) {
			continue
		}
		j := i + len(w)
		if j == len(s) || isBlank(s[j]) || s[j] == '(' || s[j] == ')' {
			return len(w)
		}
	}
	return 0
}

// keyword consumes one of words at i and returns it as typed.
func (p *parser) keyword(words ...string) (string, bool) {
	n := keywordAt(p.s, p.i, words...)
	if n == 0 {
		return "", false
	}
	w := p.s[p.i : p.i+n]
	p.i += n
	return w, true
}

// or parses conditions joined by "or"; after is the keyword or parenthesis before them, for
// messages.
func (p *parser) or(after string) (*node, error) {
	return p.joined(after, opOr, []string{"or", "||"}, p.and)
}

func (p *parser) and(after string) (*node, error) {
	return p.joined(after, opAnd, []string{"and", "&&"}, p.unary)
}

// joined parses operands joined by one of words, into op.
func (p *parser) joined(after string, op nodeOp, words []string, operand func(after string) (*node, error)) (*node, error) {
	n, err := operand(after)
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		w, ok := p.keyword(words...)
		if !ok {
			return n, nil
		}
		r, err := operand(w)
		if err != nil {
			return nil, err
		}
		n = join(op, n, r)
	}
}

func (p *parser) unary(after string) (*node, error) {
	p.space()
	missing := func() error {
		if after == "" || after == "(" {
			if p.end() {
				return p.errAt(p.i, "a condition must follow \"(\"")
			}
			return p.errAt(p.i, fmt.Sprintf("a condition must come before %q", p.word()))
		}
		return p.errAt(p.i, fmt.Sprintf("a condition must follow %q", after))
	}
	if p.end() || p.s[p.i] == ')' || keywordAt(p.s, p.i, "and", "&&", "or", "||") > 0 {
		return nil, missing()
	}
	if w, ok := p.keyword("not"); ok {
		n, err := p.unary(w)
		if err != nil {
			return nil, err
		}
		return &node{op: opNot, kids: []*node{n}, costly: n.costly}, nil
	}
	if p.s[p.i] == '(' {
		open := p.i
		p.i++
		p.depth++
		n, err := p.or("(")
		if err != nil {
			return nil, err
		}
		p.space()
		switch {
		case p.end():
			return nil, p.errAt(open, "\"(\" is not closed")
		case p.s[p.i] != ')':
			return nil, p.unexpected()
		}
		p.i++
		p.depth--
		return n, nil
	}
	t, err := p.condition()
	if err != nil {
		return nil, err
	}
	return &node{op: opCond, t: t, costly: t.op == opDecodes || t.op == opNoDecode}, nil
}

// unexpected is the error for what follows a whole condition where only "and", "or", a
// closing parenthesis or the end may.
func (p *parser) unexpected() error {
	switch {
	case p.s[p.i] == ')' && p.depth == 0:
		return p.errAt(p.i, "\")\" closes no \"(\"")
	case p.depth > 0:
		return p.errAt(p.i, fmt.Sprintf("want \"and\", \"or\" or \")\" here, not %q", p.word()))
	}
	return p.errAt(p.i, fmt.Sprintf("want \"and\", \"or\" or the end here, not %q", p.word()))
}

// condition parses one condition: has NAMED, payload's word forms, FIELD OP VALUE, or text.
func (p *parser) condition() (*term, error) {
	start := p.i
	if _, ok := p.keyword("has"); ok {
		return p.has(start)
	}
	t, named, ok := p.fieldRef()
	k := skipBlanks(p.s, p.i)
	switch {
	case ok && k < len(p.s) && isOpChar(p.s[k]):
		p.i = k
		return p.comparison(t, start, named)
	case ok && t.field == "payload" && !named && k > p.i:
		p.i = k
		if t, ok, err := p.payloadWords(start); ok || err != nil {
			return t, err
		}
	}
	p.i = start
	return p.text()
}

// fieldRef reads FIELD or FIELD.NAME at i (json.PATH's keys quoted where they need it, as
// property.NAME's name); ok is false when no field name starts there. named says a name
// followed the dot.
func (p *parser) fieldRef() (t *term, named, ok bool) {
	j := p.i
	for j < len(p.s) && isNameChar(p.s[j]) && p.s[j] != '.' {
		j++
	}
	if j == p.i {
		return nil, false, false
	}
	t = &term{field: strings.ToLower(p.s[p.i:j])}
	p.i = j
	if j == len(p.s) || p.s[j] != '.' {
		return t, false, true
	}
	p.i++
	for {
		seg, ok := p.name(t.field == "json")
		if !ok {
			return nil, false, false
		}
		if t.field == "json" {
			t.path = append(t.path, seg)
		} else {
			t.name = seg
		}
		if t.field != "json" || p.end() || p.s[p.i] != '.' {
			return t, true, true
		}
		p.i++
	}
}

// isNameChar reports whether c may be part of a bare field or property name.
func isNameChar(c byte) bool {
	return !isBlank(c) && !isOpChar(c) && c != '"' && c != '\'' && c != '(' && c != ')' && c != '\\'
}

// name reads a property name or one key of a JSON path: quoted, or bare up to a blank, an
// operator or a parenthesis (and, in a JSON path, a dot).
func (p *parser) name(json bool) (string, bool) {
	if !p.end() && (p.s[p.i] == '"' || p.s[p.i] == '\'') {
		v, end, _, msg := unquote(p.s, p.i)
		if msg != "" {
			return "", false
		}
		p.i = end
		return v, true
	}
	j := p.i
	for j < len(p.s) && isNameChar(p.s[j]) && !(json && p.s[j] == '.') {
		j++
	}
	if j == p.i {
		return "", false
	}
	v := p.s[p.i:j]
	p.i = j
	return v, true
}

// operators, longest first; "==" is "=", as programmers type it.
var operators = []string{"!=", "!~", ">=", "<=", "==", "=", "~", "<", ">"}

// comparison parses OP VALUE after a field, and checks them.
func (p *parser) comparison(t *term, fieldAt int, named bool) (*term, error) {
	opAt := p.i
	j := p.i
	for j < len(p.s) && isOpChar(p.s[j]) {
		j++
	}
	typed := p.s[p.i:j]
	for _, op := range operators {
		if typed == op {
			t.op = op
		}
	}
	if t.op == "" {
		return nil, p.errAt(opAt, fmt.Sprintf("unknown operator %q: use =, !=, ~, !~, <, <=, > or >= (quote a value that starts with one of =!~<>)", typed))
	}
	if t.op == "==" {
		t.op = "="
	}
	p.i = j
	p.space()
	valueAt := p.i
	if p.end() || p.s[p.i] == ')' || keywordAt(p.s, p.i, "and", "&&", "or", "||") > 0 {
		return nil, p.errAt(p.i, fmt.Sprintf("want a value after %q (\"\" for an empty one)", typed))
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if p.unclosed >= 0 && t.op != "~" && t.op != "!~" {
		return nil, p.errAt(p.unclosed, "\"(\" is not closed: close it, or quote the value to hold it")
	}
	t.value = v
	return t, p.check(t, named, fieldAt, opAt, valueAt)
}

// has parses the field of "has property.NAME", "has json.PATH" or "has event".
func (p *parser) has(start int) (*term, error) {
	p.space()
	at := p.i
	t, named, ok := p.fieldRef()
	if !ok || (t.field == "event") == named || (t.field != "property" && t.field != "json" && t.field != "event") {
		return nil, p.errAt(at, "has takes property.NAME, json.PATH or event")
	}
	t.op = opHas
	return t, nil
}

// payloadWords parses the forms "payload is [not] json", "payload decodes" and "payload does
// not decode", after "payload" and a blank; ok is false when none starts there (the condition
// is then text that starts with the word payload).
func (p *parser) payloadWords(start int) (*term, bool, error) {
	t := &term{field: "payload"}
	at := p.i
	expect := func(form string, words ...string) error {
		for _, w := range words {
			p.space()
			if _, ok := p.keyword(w); !ok {
				return p.errAt(p.i, fmt.Sprintf("want %q here: the condition is %q", w, form))
			}
		}
		return nil
	}
	switch {
	case keywordAt(p.s, at, "is") > 0:
		p.keyword("is")
		p.space()
		t.op = opIsJSON
		if _, ok := p.keyword("not"); ok {
			t.op = opIsNotJSON
		}
		if err := expect("payload "+t.op, "json"); err != nil {
			return nil, true, err
		}
	case keywordAt(p.s, at, "decodes") > 0:
		p.keyword("decodes")
		t.op = opDecodes
	case keywordAt(p.s, at, "does") > 0:
		p.keyword("does")
		t.op = opNoDecode
		if err := expect("payload does not decode", "not", "decode"); err != nil {
			return nil, true, err
		}
	default:
		return nil, false, nil
	}
	return t, true, nil
}

// text parses a text condition: a quoted string, or bare words up to "and", "or", a closing
// parenthesis or the end.
func (p *parser) text() (*term, error) {
	start := p.i
	if isOpChar(p.s[p.i]) {
		return nil, p.errAt(p.i, fmt.Sprintf("a condition cannot start with %q: a field goes before it (key%s…), or quote text to search for it", p.s[p.i:p.i+1], p.s[p.i:p.i+1]))
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if p.unclosed >= 0 {
		return nil, p.errAt(p.unclosed, "\"(\" is not closed: close it, or quote the text to hold it")
	}
	if v == "" {
		return nil, p.errAt(start, "empty text: nothing to search for")
	}
	return &term{value: v, fold: []byte(strings.ToLower(v))}, nil
}
