// Package expr is the expression language that selects dead letters (and any messages), shared
// by every screen and command that filters: the TUI's "/", `letterbox dlq stats|export
// --filter`, `letterbox replay --filter` and the actions on dead letters. An expression is
// conditions joined by "and":
//
//	key=VALUE               the message key (also !=, ~REGEX, !~REGEX)
//	property.NAME=VALUE     property NAME; an absent property equals nothing
//	payload~REGEX           the payload matches (payload=TEXT: equals)
//	json.PATH=VALUE         the payload is JSON and the value at the dotted PATH (object
//	                        keys, array indexes) equals VALUE: strings unquoted, other
//	                        values as JSON
//	reason=VALUE            the dead letter's reason, as the TUI shows it (reason="" for
//	                        letters without one)
//	origin=TOPIC            the topic it died on (REAL_TOPIC; a short name works)
//	subscription=NAME       the subscription it died on, when its producer's name tells
//	reconsumes>=N           RECONSUMETIMES (=, !=, <, <=, >, >=; -1 when absent)
//	published>=TIME         the publish time (>, >=, <, <=): 2026-11-30T08:00:00Z,
//	                        2026-11-30 08:00, 2026-11-30 (local time), or -2h, -30m, -1d
//	                        (that long ago)
//	TEXT                    any other word or "quoted text": the key, a property or the
//	                        payload contains it, ignoring case
//
// A value runs to the next " and " or the end; quote it ("…", with \" and \\) to hold
// " and " or to end it early. A syntax error is a *SyntaxError naming the column.
package expr

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// Message is what an expression is matched against.
type Message struct {
	Key          string
	Properties   map[string]string
	Payload      []byte
	PublishTime  time.Time
	ProducerName string
}

// FromClient is the subject of a received message.
func FromClient(m *client.Message) Message {
	return Message{Key: m.Key, Properties: m.Properties, Payload: m.Payload, PublishTime: m.PublishTime,
		ProducerName: m.ProducerName}
}

// Expr is a parsed expression; the zero Expr (and a nil one) matches every message.
type Expr struct {
	terms []term
}

// Match reports whether every condition of e holds for m.
func (e *Expr) Match(m *Message) bool { return e.MatchLetter(m, nil) }

// MatchLetter is Match for a message whose letter fields were read already (l may be nil).
func (e *Expr) MatchLetter(m *Message, l *deadletter.Letter) bool {
	if e == nil {
		return true
	}
	letter := func() *deadletter.Letter {
		if l == nil {
			v := deadletter.Read(m.Properties, m.ProducerName)
			l = &v
		}
		return l
	}
	for i := range e.terms {
		if !e.terms[i].match(m, letter) {
			return false
		}
	}
	return true
}

// Empty reports whether e has no condition.
func (e *Expr) Empty() bool { return e == nil || len(e.terms) == 0 }

// String is e in canonical form: conditions joined by " and ", values quoted where needed.
// Two expressions with the same String select the same messages.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	parts := make([]string, len(e.terms))
	for i, t := range e.terms {
		parts[i] = t.String()
	}
	return strings.Join(parts, " and ")
}

// And is e and o together.
func (e *Expr) And(o *Expr) *Expr {
	out := &Expr{}
	if e != nil {
		out.terms = append(out.terms, e.terms...)
	}
	if o != nil {
		out.terms = append(out.terms, o.terms...)
	}
	return out
}

// Fields is the list of field names, for help texts and errors.
const Fields = "key, property.NAME, payload, json.PATH, reason, origin, subscription, reconsumes, published"

type term struct {
	field string // "" for a text condition
	name  string // property.NAME's NAME, json.PATH's PATH
	path  []string
	op    string
	value string
	re    *regexp.Regexp
	at    time.Time
	n     int
	fold  []byte // a text condition's value, lower case
}

func (t term) String() string {
	if t.field == "" {
		return quote(t.value, true)
	}
	f := t.field
	if t.name != "" {
		f += "." + t.name
	}
	return f + t.op + quote(t.value, false)
}

// quote writes v so that Parse reads it back: bare when it can be.
func quote(v string, text bool) string {
	bare := v != "" && v == strings.TrimSpace(v) && !strings.ContainsAny(v, "\"'") &&
		!containsAnd(v) && !(text && strings.ContainsAny(v, "=!~<>"))
	if bare {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

func containsAnd(v string) bool {
	f := strings.Fields(strings.ToLower(v))
	for i := 1; i < len(f); i++ {
		if f[i] == "and" || f[i] == "&&" {
			return true
		}
	}
	return false
}

func (t *term) match(m *Message, letter func() *deadletter.Letter) bool {
	switch t.field {
	case "":
		return t.matchText(m)
	case "key":
		return t.str(m.Key, true)
	case "property":
		v, ok := m.Properties[t.name]
		return t.str(v, ok)
	case "payload":
		if t.re != nil {
			return t.re.Match(m.Payload) != (t.op == "!~")
		}
		return (string(m.Payload) == t.value) != (t.op == "!=")
	case "json":
		v, ok := jsonAt(m.Payload, t.path)
		return t.str(v, ok)
	case "reason":
		_, v := deadletter.Reason(m.Properties)
		return t.str(v, true)
	case "origin":
		return t.str(letter().Origin, true)
	case "subscription":
		l := letter()
		if (t.op == "=" || t.op == "!=") && t.value != "" {
			// The producer's name may split more than one way (a consumer name with a dash):
			// it matches when the name holds the subscription where a subscription goes.
			v := deadletter.SubscriptionAmong(m.ProducerName, l.OriginTopic, []string{t.value})
			return (v == t.value) != (t.op == "!=")
		}
		return t.str(l.Subscription, true)
	case "reconsumes":
		return compare(letter().Reconsumes-t.n, t.op)
	case "published":
		return compare(m.PublishTime.Compare(t.at), t.op)
	}
	return false
}

// str applies a string operator; present is false for an absent property, which equals
// nothing and matches no regular expression.
func (t *term) str(v string, present bool) bool {
	switch t.op {
	case "=":
		return present && v == t.value
	case "!=":
		return !present || v != t.value
	case "~":
		return present && t.re.MatchString(v)
	case "!~":
		return !present || !t.re.MatchString(v)
	}
	return false
}

func compare(c int, op string) bool {
	switch op {
	case "=":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

func (t *term) matchText(m *Message) bool {
	if containsFold([]byte(m.Key), t.fold) || containsFold(m.Payload, t.fold) {
		return true
	}
	for k, v := range m.Properties {
		if containsFold([]byte(k), t.fold) || containsFold([]byte(v), t.fold) {
			return true
		}
	}
	return false
}

// containsFold reports whether hay contains needle (lower case) ignoring case, without
// allocating for ASCII needles.
func containsFold(hay, needle []byte) bool {
	if len(needle) == 0 {
		return true
	}
	for _, c := range needle {
		if c >= 0x80 {
			return bytes.Contains(bytes.ToLower(hay), needle)
		}
	}
	first := needle[0]
	for i := 0; i+len(needle) <= len(hay); i++ {
		if lower(hay[i]) != first {
			continue
		}
		j := 1
		for j < len(needle) && lower(hay[i+j]) == needle[j] {
			j++
		}
		if j == len(needle) {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// jsonAt returns the value at path in the JSON document doc: a string as is, anything else
// as compact JSON.
func jsonAt(doc []byte, path []string) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return "", false
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}
