package expr

import (
	"errors"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// The tree a parsed expression is, how it is evaluated and how it is written back.

type nodeOp int8

const (
	opCond nodeOp = iota
	opAnd
	opOr
	opNot
)

// node is one condition, or and/or/not over its kids.
type node struct {
	op   nodeOp
	kids []*node
	t    *term // opCond's condition
	// costly is set when the node holds a "payload decodes": and/or evaluate such kids after
	// the others, so that a cheap condition that settles the answer spares the decoding (the
	// answer is the same in any order; the order written is kept for String).
	costly bool
}

// join is a op b, flattening a side that is already op.
func join(op nodeOp, a, b *node) *node {
	n := &node{op: op, costly: a.costly || b.costly}
	for _, k := range []*node{a, b} {
		if k.op == op {
			n.kids = append(n.kids, k.kids...)
		} else {
			n.kids = append(n.kids, k)
		}
	}
	return n
}

// tri is a three-valued truth: a condition whose verdict cannot be told (a payload whose
// decoding could not be tried) is unknown, and stays so unless the rest settles the answer
// (false and unknown is false; true or unknown is true), as in SQL. A message is selected
// only when the whole expression is yes, so "not payload decodes" never takes a letter that
// "payload decodes" could not judge.
type tri int8

const (
	no tri = iota
	yes
	unknown
)

func truth(b bool) tri {
	if b {
		return yes
	}
	return no
}

// evaluator is one evaluation: the message, what was read of it once, and the first reason an
// answer could not be told.
type evaluator struct {
	m      *Message
	l      *deadletter.Letter
	doc    any // the payload as JSON, once read
	docErr error
	docSet bool
	dec    tri // the decode verdict, once asked (0: not yet, as no is never stored)
	decSet bool
	err    error
}

func (ev *evaluator) letter() *deadletter.Letter {
	if ev.l == nil {
		var v deadletter.Letter
		if ev.m.Letters != nil {
			v = ev.m.Letters.Read(ev.m.Properties, ev.m.ProducerName)
		} else {
			v = deadletter.Read(ev.m.Properties, ev.m.ProducerName)
		}
		ev.l = &v
	}
	return ev.l
}

// json is the payload read as JSON (once per evaluation).
func (ev *evaluator) json() (any, bool) {
	if !ev.docSet {
		ev.doc, ev.docErr = decodeJSON(ev.m.Payload)
		ev.docSet = true
	}
	return ev.doc, ev.docErr == nil
}

// decodes asks m.Decode (once per evaluation).
func (ev *evaluator) decodes() tri {
	if ev.decSet {
		return ev.dec
	}
	ev.decSet = true
	switch err := ev.decodeErr(); {
	case err == nil:
		ev.dec = yes
	case errors.Is(err, client.ErrSchema):
		ev.dec = no
	default:
		ev.dec = unknown
		if ev.err == nil {
			ev.err = err
		}
	}
	return ev.dec
}

func (ev *evaluator) decodeErr() error {
	if ev.m.Decode == nil {
		return ErrNoDecoder
	}
	return ev.m.Decode()
}

func (n *node) eval(ev *evaluator) tri {
	switch n.op {
	case opAnd, opOr:
		// and stops at the first no, or at the first yes; unknown sides leave the answer
		// unknown unless another settles it.
		stop, out := no, yes
		if n.op == opOr {
			stop, out = yes, no
		}
		for _, costly := range []bool{false, true} {
			for _, k := range n.kids {
				if k.costly != costly {
					continue
				}
				switch k.eval(ev) {
				case stop:
					return stop
				case unknown:
					out = unknown
				}
			}
		}
		return out
	case opNot:
		switch n.kids[0].eval(ev) {
		case yes:
			return no
		case no:
			return yes
		}
		return unknown
	}
	return n.t.match(ev)
}

// Precedences, loosest first: a node is parenthesised when written where a tighter one is
// expected.
const (
	precOr = iota
	precAnd
	precNot
)

func (n *node) prec() int {
	switch n.op {
	case opOr:
		return precOr
	case opAnd:
		return precAnd
	}
	return precNot
}

// write writes n where an operand of precedence at least min is expected.
func (n *node) write(b *strings.Builder, min int) {
	paren := n.prec() < min
	if paren {
		b.WriteByte('(')
	}
	switch n.op {
	case opAnd, opOr:
		sep, kid := " and ", precNot
		if n.op == opOr {
			sep, kid = " or ", precAnd
		}
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(sep)
			}
			k.write(b, kid)
		}
	case opNot:
		b.WriteString("not ")
		n.kids[0].write(b, precNot)
	default:
		b.WriteString(n.t.String())
	}
	if paren {
		b.WriteByte(')')
	}
}

// walk calls f with every condition of n.
func (n *node) walk(f func(*term)) {
	if n.t != nil {
		f(n.t)
	}
	for _, k := range n.kids {
		k.walk(f)
	}
}
