package expr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// One condition: what it tests and how it is written back.

// The operators of conditions without a value.
const (
	opHas       = "has"
	opIsJSON    = "is json"
	opIsNotJSON = "is not json"
	opDecodes   = "decodes"
	opNoDecode  = "does not decode"
)

type term struct {
	field string   // "" for a text condition
	name  string   // property.NAME's NAME
	path  []string // json.PATH's keys and indexes
	op    string
	value string // as written back (a size in canonical units, a time as typed)
	re    *regexp.Regexp
	at    time.Time
	n     int64  // reconsumes' count, size's bytes
	fold  []byte // a text condition's value, lower case
}

func (t *term) String() string {
	switch {
	case t.field == "":
		return quoteText(t.value)
	case t.op == opHas:
		return "has " + t.fieldName()
	case isWordOp(t.op):
		return "payload " + t.op
	case t.field == "size":
		return "size" + t.op + t.value
	}
	return t.fieldName() + t.op + quoteValue(t.value)
}

func isWordOp(op string) bool {
	return op == opIsJSON || op == opIsNotJSON || op == opDecodes || op == opNoDecode
}

// fieldName is the field as written: key, property.NAME, json.PATH, with names quoted where
// they need it.
func (t *term) fieldName() string {
	switch t.field {
	case "property":
		return "property." + quoteName(t.name, false)
	case "json":
		parts := make([]string, len(t.path))
		for i, p := range t.path {
			parts[i] = quoteName(p, true)
		}
		return "json." + strings.Join(parts, ".")
	}
	return t.field
}

func (t *term) match(ev *evaluator) tri {
	m := ev.m
	switch t.field {
	case "":
		return truth(t.matchText(m))
	case "key":
		return truth(t.str(m.Key, true))
	case "property":
		v, ok := m.Properties[t.name]
		if t.op == opHas {
			return truth(ok)
		}
		return truth(t.str(v, ok))
	case "payload":
		switch t.op {
		case opIsJSON, opIsNotJSON:
			_, ok := ev.json()
			return truth(ok == (t.op == opIsJSON))
		case opDecodes:
			return ev.decodes()
		case opNoDecode:
			switch ev.decodes() {
			case yes:
				return no
			case no:
				return yes
			}
			return unknown
		case "~", "!~":
			return truth(t.re.Match(m.Payload) != (t.op == "!~"))
		}
		return truth((string(m.Payload) == t.value) != (t.op == "!="))
	case "size":
		return truth(compare(int64(len(m.Payload)), t.n, t.op))
	case "json":
		doc, ok := ev.json()
		var v string
		if ok {
			v, ok = jsonAt(doc, t.path)
		}
		if t.op == opHas {
			return truth(ok)
		}
		return truth(t.str(v, ok))
	case "reason":
		_, v := deadletter.Reason(m.Properties)
		return truth(t.str(v, true))
	case "origin":
		return truth(t.str(ev.letter().Origin, true))
	case "subscription":
		l := ev.letter()
		if (t.op == "=" || t.op == "!=") && t.value != "" {
			// The producer's name may split more than one way (a consumer name with a dash):
			// it matches when the name holds the subscription where a subscription goes.
			v := deadletter.SubscriptionAmong(m.ProducerName, l.OriginTopic, []string{t.value})
			return truth((v == t.value) != (t.op == "!="))
		}
		return truth(t.str(l.Subscription, true))
	case "reconsumes":
		return truth(compare(int64(ev.letter().Reconsumes), t.n, t.op))
	case "published":
		return truth(compare(int64(m.PublishTime.Compare(t.at)), 0, t.op))
	case "event":
		// A letter without an event time is neither before nor after any time.
		if t.op == opHas {
			return truth(!m.EventTime.IsZero())
		}
		return truth(!m.EventTime.IsZero() && compare(int64(m.EventTime.Compare(t.at)), 0, t.op))
	case "producer":
		return truth(t.str(m.ProducerName, true))
	case "version":
		return truth(compare(SchemaVersion(m.SchemaVersion), t.n, t.op))
	}
	return no
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

func compare(a, b int64, op string) bool {
	switch op {
	case "=":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
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

// decodeJSON reads a whole payload as one JSON document (numbers kept as written); anything
// after the document makes it no JSON, as json.Valid says.
func decodeJSON(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON document")
	}
	return v, nil
}

// jsonAt returns the value at path in the JSON document v: a string as is, anything else as
// compact JSON.
func jsonAt(v any, path []string) (string, bool) {
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

// SchemaVersion reads a writer schema version as upstream encodes it, a big-endian int64; -1
// when there is none or it is not eight bytes long.
func SchemaVersion(v []byte) int64 {
	if len(v) != 8 {
		return -1
	}
	return int64(binary.BigEndian.Uint64(v))
}
