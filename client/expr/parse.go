package expr

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/letterbox-dev/letterbox/client/naming"
)

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
// expression matches everything.
func Parse(s string, now time.Time) (*Expr, error) {
	p := &parser{s: s, now: now}
	e := &Expr{}
	for {
		p.space()
		if p.i == len(p.s) {
			if len(e.terms) > 0 {
				return nil, p.errAt(p.i, "a condition must follow \"and\"")
			}
			return e, nil
		}
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		e.terms = append(e.terms, t)
		p.space()
		if p.i == len(p.s) {
			return e, nil
		}
		if !p.and() {
			return nil, p.errAt(p.i, fmt.Sprintf("want \"and\" or the end after a quoted value, not %q", p.word()))
		}
	}
}

type parser struct {
	s   string
	i   int
	now time.Time
}

func (p *parser) errAt(i int, msg string) error {
	return &SyntaxError{Expr: p.s, Col: utf8.RuneCountInString(p.s[:i]) + 1, Msg: msg}
}

func (p *parser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// word is the text from i to the next blank, for messages.
func (p *parser) word() string {
	j := p.i
	for j < len(p.s) && p.s[j] != ' ' && p.s[j] != '\t' {
		j++
	}
	return p.s[p.i:j]
}

// and consumes "and" or "&&" followed by a blank or the end.
func (p *parser) and() bool {
	for _, w := range []string{"and", "&&"} {
		if len(p.s)-p.i >= len(w) && strings.EqualFold(p.s[p.i:p.i+len(w)], w) {
			j := p.i + len(w)
			if j == len(p.s) || p.s[j] == ' ' || p.s[j] == '\t' {
				p.i = j
				return true
			}
		}
	}
	return false
}

func isOpChar(c byte) bool { return c == '=' || c == '!' || c == '~' || c == '<' || c == '>' }

// term parses one condition: FIELD OP VALUE, or a text value.
func (p *parser) term() (term, error) {
	start := p.i
	j := p.i
	for j < len(p.s) && p.s[j] != ' ' && p.s[j] != '\t' && p.s[j] != '"' && p.s[j] != '\'' && !isOpChar(p.s[j]) {
		j++
	}
	k := j
	for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
		k++
	}
	if j == start || k == len(p.s) || !isOpChar(p.s[k]) {
		v, err := p.value()
		if err != nil {
			return term{}, err
		}
		if v == "" {
			return term{}, p.errAt(start, "empty text")
		}
		return term{value: v, fold: []byte(strings.ToLower(v))}, nil
	}
	t := term{field: strings.ToLower(p.s[start:j])}
	if f, rest, ok := strings.Cut(p.s[start:j], "."); ok {
		t.field, t.name = strings.ToLower(f), rest
	}
	p.i = k
	for _, op := range []string{"!=", "!~", ">=", "<=", "=", "~", "<", ">"} {
		if strings.HasPrefix(p.s[p.i:], op) {
			t.op = op
			break
		}
	}
	if t.op == "" {
		return term{}, p.errAt(p.i, fmt.Sprintf("unknown operator %q: use =, !=, ~, !~, <, <=, > or >=", p.opText()))
	}
	opAt := p.i
	p.i += len(t.op)
	p.space()
	valueAt := p.i
	v, err := p.value()
	if err != nil {
		return term{}, err
	}
	t.value = v
	return t, p.check(&t, start, opAt, valueAt)
}

func (p *parser) opText() string {
	j := p.i
	for j < len(p.s) && isOpChar(p.s[j]) {
		j++
	}
	return p.s[p.i:j]
}

// value reads a quoted value, or a bare one up to the next " and " or the end.
func (p *parser) value() (string, error) {
	if p.i < len(p.s) && (p.s[p.i] == '"' || p.s[p.i] == '\'') {
		q := p.s[p.i]
		open := p.i
		var b strings.Builder
		for j := p.i + 1; j < len(p.s); j++ {
			switch c := p.s[j]; {
			case c == '\\' && j+1 < len(p.s):
				j++
				b.WriteByte(p.s[j])
			case c == q:
				if j+1 < len(p.s) && p.s[j+1] != ' ' && p.s[j+1] != '\t' {
					// "id":42 is a bare value that starts with a quote, not a quoted one.
					return p.bare(), nil
				}
				p.i = j + 1
				return b.String(), nil
			default:
				b.WriteByte(c)
			}
		}
		return "", p.errAt(open, "quote not closed")
	}
	return p.bare(), nil
}

// bare reads a value up to the next " and " or the end.
func (p *parser) bare() string {
	end := len(p.s)
	for j := p.i; j < len(p.s); j++ {
		if (p.s[j] == ' ' || p.s[j] == '\t') && isAndAt(p.s, j) {
			end = j
			break
		}
	}
	v := strings.TrimRightFunc(p.s[p.i:end], unicode.IsSpace)
	p.i = end
	return v
}

// isAndAt reports whether s has blanks, "and" (or "&&") and a blank or the end at i.
func isAndAt(s string, i int) bool {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for _, w := range []string{"and", "&&"} {
		if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
			j := i + len(w)
			if j == len(s) || s[j] == ' ' || s[j] == '\t' {
				return true
			}
		}
	}
	return false
}

var (
	stringOps = map[string]bool{"=": true, "!=": true, "~": true, "!~": true}
	orderOps  = map[string]bool{"=": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}
)

// check validates field, operator and value, and compiles what the value needs.
func (p *parser) check(t *term, fieldAt, opAt, valueAt int) error {
	named := t.field == "property" || t.field == "json"
	switch {
	case named && t.name == "":
		return p.errAt(fieldAt, t.field+" needs a name: "+t.field+".NAME")
	case !named && t.name != "":
		return p.errAt(fieldAt, fmt.Sprintf("unknown field %q (fields: %s; quote text to search for it)", t.field+"."+t.name, Fields))
	}
	switch t.field {
	case "key", "property", "json", "reason", "origin", "subscription", "payload":
		if !stringOps[t.op] {
			return p.errAt(opAt, t.field+" takes =, !=, ~ or !~, not "+t.op)
		}
		if t.op == "~" || t.op == "!~" {
			re, err := regexp.Compile(t.value)
			if err != nil {
				return p.errAt(valueAt, "bad regular expression: "+strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			t.re = re
		}
		if t.field == "json" {
			t.path = strings.Split(t.name, ".")
		}
		if t.field == "origin" && t.re == nil {
			t.value = qualify(t.value)
		}
	case "reconsumes":
		if !orderOps[t.op] {
			return p.errAt(opAt, "reconsumes takes =, !=, <, <=, > or >=, not "+t.op)
		}
		n, err := strconv.Atoi(t.value)
		if err != nil {
			return p.errAt(valueAt, fmt.Sprintf("want a number, not %q", t.value))
		}
		t.n = n
	case "published":
		if !orderOps[t.op] || t.op == "=" || t.op == "!=" {
			return p.errAt(opAt, "published takes <, <=, > or >=, not "+t.op)
		}
		at, err := ParseTime(t.value, p.now)
		if err != nil {
			return p.errAt(valueAt, err.Error())
		}
		t.at = at
	default:
		return p.errAt(fieldAt, fmt.Sprintf("unknown field %q (fields: %s; quote text to search for it)", t.field, Fields))
	}
	return nil
}

// timeLayouts are the absolute times published accepts; those without a zone are local.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05",
	"2006-01-02 15:04", "2006-01-02"}

// ParseTime reads a time as published>= takes it: RFC 3339, 2026-11-30 08:00[:05],
// 2026-11-30 (local time, now's location), -2h / -30m / -1d (that long before now), or now.
func ParseTime(v string, now time.Time) (time.Time, error) {
	if ago, ok := strings.CutPrefix(v, "-"); ok {
		d, err := parseAgo(ago)
		if err == nil {
			return now.Add(-d), nil
		}
	}
	if strings.EqualFold(v, "now") {
		return now, nil
	}
	loc := now.Location()
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want a time such as 2026-11-30T08:00:00Z, 2026-11-30 08:00, 2026-11-30 or -2h, not %q", v)
}

// parseAgo reads a Go duration, with d for days: 2h, 90m, 1d12h.
func parseAgo(s string) (time.Duration, error) {
	var total time.Duration
	if i := strings.Index(s, "d"); i > 0 {
		days, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, err
		}
		total, s = time.Duration(days)*24*time.Hour, s[i+1:]
		if s == "" {
			return total, nil
		}
	}
	d, err := time.ParseDuration(s)
	return total + d, err
}

// qualify expands a short topic name as the clients do (client/naming's rules); a value that
// is no topic name is kept as written, and matches no letter's origin.
func qualify(topic string) string {
	if t, err := naming.ParseTopic(topic); err == nil {
		return t.String()
	}
	return topic
}
