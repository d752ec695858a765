// Package expr is the expression language that selects dead letters (and any messages), shared
// by every screen and command that filters: the TUI's "/", `letterbox dlq stats|export
// --filter`, `letterbox replay --filter` and the actions on dead letters. Its forms are listed
// once, in Forms, which the help texts print and the documentation is checked against.
//
// An expression is conditions (key=V, property.NAME=V, payload is json, size>10KiB, …, or text)
// joined by "and" and "or", negated by "not" and grouped by parentheses; "not" binds tighter
// than "and", and "and" tighter than "or". Parse reads one; a syntax error is a *SyntaxError
// naming the column. Expr.String writes one back in a form Parse reads as the same selection,
// whatever its values hold (Quote is the rule for one value).
package expr

import (
	"errors"
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
	// EventTime is the application's event time, zero when unset; SchemaVersion the writer
	// schema version as upstream encodes it (a big-endian int64), nil when none.
	EventTime     time.Time
	SchemaVersion []byte
	// Decode decodes Payload with the topic's schema, for "payload decodes": it returns nil
	// when the payload decodes, an error wrapping client.ErrSchema (the decoder's) when it
	// does not, and any other error when it cannot tell. client.PayloadDecoder.DecodeLetter is
	// the rule a DLQ's readers use. Without Decode, "payload decodes" cannot be told.
	Decode func() error
	// Letters, when set, reads the letter fields (reason, origin, subscription, …) that an
	// expression asks of a letter it was not given, remembering what repeats from letter to
	// letter; nil: deadletter.Read.
	Letters *deadletter.Reader
}

// FromClient is the subject of a received message (without Decode: the caller sets it when
// the expression needs it, see Expr.UsesDecode).
func FromClient(m *client.Message) Message {
	return Message{Key: m.Key, Properties: m.Properties, Payload: m.Payload, PublishTime: m.PublishTime,
		ProducerName: m.ProducerName, EventTime: m.EventTime, SchemaVersion: m.SchemaVersion}
}

// ErrNoDecoder is why "payload decodes" cannot be told of a Message without Decode.
var ErrNoDecoder = errors.New(`"payload decodes" needs the topic's schema, which is not at hand here`)

// Expr is a parsed expression; the zero Expr (and a nil one) matches every message.
type Expr struct {
	root *node
}

// Eval reports whether m satisfies e; l is m's letter fields when they were read already
// (nil: read here when needed). When the answer depends on a verdict m.Decode could not give
// (and the rest of the expression does not settle it), Eval returns false and that error.
func (e *Expr) Eval(m *Message, l *deadletter.Letter) (bool, error) {
	if e == nil || e.root == nil {
		return true, nil
	}
	ev := evaluator{m: m, l: l}
	switch e.root.eval(&ev) {
	case yes:
		return true, nil
	case unknown:
		return false, ev.err
	}
	return false, nil
}

// Match reports whether m surely satisfies e: a message whose match cannot be told (see
// Eval) is not selected.
func (e *Expr) Match(m *Message) bool { return e.MatchLetter(m, nil) }

// MatchLetter is Match for a message whose letter fields were read already (l may be nil).
func (e *Expr) MatchLetter(m *Message, l *deadletter.Letter) bool {
	ok, _ := e.Eval(m, l)
	return ok
}

// Empty reports whether e has no condition.
func (e *Expr) Empty() bool { return e == nil || e.root == nil }

// UsesDecode reports whether e has a "payload decodes" condition, which needs Message.Decode.
func (e *Expr) UsesDecode() bool { return e != nil && e.root != nil && e.root.costly }

// String is e in canonical form: keywords in lower case, values quoted where needed,
// parentheses where precedence needs them. Parse reads it back as the same selection (with
// relative times counted from the new now).
func (e *Expr) String() string {
	if e == nil || e.root == nil {
		return ""
	}
	var b strings.Builder
	e.root.write(&b, precOr)
	return b.String()
}

// And is e and o together.
func (e *Expr) And(o *Expr) *Expr {
	switch {
	case e.Empty() && o.Empty():
		return &Expr{}
	case e.Empty():
		return &Expr{root: o.root}
	case o.Empty():
		return &Expr{root: e.root}
	}
	return &Expr{root: join(opAnd, e.root, o.root)}
}

// Or is e or o; an empty side matches everything, and so does the result.
func (e *Expr) Or(o *Expr) *Expr {
	if e.Empty() || o.Empty() {
		return &Expr{}
	}
	return &Expr{root: join(opOr, e.root, o.root)}
}

// Properties are the property names e's conditions name (property.NAME, has property.NAME),
// each once, in the order written: what a caller checks against the names letters carry.
func (e *Expr) Properties() []string {
	var out []string
	if e == nil || e.root == nil {
		return nil
	}
	e.root.walk(func(t *term) {
		if t.field == "property" {
			for _, n := range out {
				if n == t.name {
					return
				}
			}
			out = append(out, t.name)
		}
	})
	return out
}

// Fields is the list of field names, for errors.
const Fields = "key, property.NAME, payload, json.PATH, size, reason, origin, subscription, reconsumes, published, event, producer, version"
