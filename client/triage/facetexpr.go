package triage

import (
	"strings"
	"time"
)

// How a facet value is written as an expression (client/expr) that selects exactly the letters
// with it, and as a label for people.

// exprIs selects the letters whose facet has value v.
func exprIs(facet, v string) string {
	switch facet {
	case FacetPayload:
		switch v {
		case PayloadEmpty:
			return "size=0"
		case PayloadJSON:
			return "payload is json"
		}
		return "payload is not json and size>0"
	case FacetSchema:
		if v == SchemaDecodes {
			return "payload decodes"
		}
		return "not payload decodes"
	case FacetSize:
		return sizeExpr(v)
	case FacetPublished, FacetEvent:
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return facet + "=" + quoteValue(v)
		}
		return facet + ">=" + v + " and " + facet + "<" + t.Add(time.Hour).Format(time.RFC3339)
	}
	if isProperty(facet) {
		// An absent property equals nothing, so "=" alone says it is present.
		return facet + "=" + quoteValue(v)
	}
	return facet + "=" + quoteValue(v)
}

// exprAbsent selects the letters without the facet.
func exprAbsent(facet string) string {
	switch facet {
	case FacetReason:
		return `reason=""`
	}
	return exprNot(exprHas(facet))
}

func exprHas(facet string) string { return "has " + facet }

func exprNot(e string) string {
	if topOp(e) == "" {
		return "not " + e
	}
	return "not (" + e + ")"
}

// exprAnd joins es with "and"; an "or" inside is parenthesised, since "and" binds tighter.
func exprAnd(es ...string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e
		if topOp(e) == "or" {
			parts[i] = "(" + e + ")"
		}
	}
	return strings.Join(parts, " and ")
}

// exprOr joins es with "or"; an "and" inside is parenthesised for the reader.
func exprOr(es ...string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e
		if topOp(e) == "and" {
			parts[i] = "(" + e + ")"
		}
	}
	return strings.Join(parts, " or ")
}

// topOp is the operator that joins e at its top level, outside quotes and parentheses: "or"
// if any, else "and" if any, else "" (e is one condition, possibly negated or parenthesised).
func topOp(e string) string {
	depth, quoted := 0, byte(0)
	low := strings.ToLower(e)
	op := ""
	for i := 0; i < len(e); i++ {
		c := e[i]
		switch {
		case quoted != 0:
			if c == '\\' {
				i++
			} else if c == quoted {
				quoted = 0
			}
		case c == '"' || c == '\'':
			quoted = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && c == ' ' && strings.HasPrefix(low[i:], " or "):
			return "or"
		case depth == 0 && c == ' ' && strings.HasPrefix(low[i:], " and "):
			op = "and"
		}
	}
	return op
}

// quoteValue writes v so that the expression parser reads it back as exactly v.
func quoteValue(v string) string {
	bare := v != ""
	for _, r := range v {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`"'()=!~<>\`, r) {
			bare = false
			break
		}
	}
	if bare {
		switch strings.ToLower(v) {
		case "and", "or", "not", "is", "has":
			bare = false
		}
	}
	if bare {
		return v
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range v {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func sizeExpr(label string) string {
	for i, b := range sizeBuckets {
		if b.label != label {
			continue
		}
		if b.from == 0 {
			return "size=0"
		}
		if i == len(sizeBuckets)-1 {
			return "size>=" + sizeText(b.from)
		}
		return "size>=" + sizeText(b.from) + " and size<" + sizeText(sizeBuckets[i+1].from)
	}
	return "size=" + quoteValue(label)
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// facetLabel is how a label names the facet.
func facetLabel(facet string) string {
	switch facet {
	case FacetSchema:
		return ""
	case FacetVersion:
		return "schema version"
	case FacetEvent:
		return "event time"
	}
	if isProperty(facet) {
		return "property " + facet[len(facetProperty):]
	}
	return facet
}

// valueLabel labels the letters whose facet has value v: "property region=eu", "key empty".
func valueLabel(facet, v string) string {
	switch facet {
	case FacetKey:
		if v == "" {
			return "key empty"
		}
		return "key " + v
	case FacetPayload:
		switch v {
		case PayloadEmpty:
			return "payload empty"
		case PayloadJSON:
			return "payload JSON"
		}
		return "payload not JSON"
	case FacetSchema:
		return v
	case FacetPublished, FacetEvent:
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return facetLabel(facet) + " " + t.Format("2006-01-02 15:04") + "–" + t.Add(time.Hour).Format("15:04") + " UTC"
		}
	}
	if isProperty(facet) {
		return facetLabel(facet) + "=" + v
	}
	return facetLabel(facet) + " " + v
}

// absentLabel labels the letters without the facet: "no property region".
func absentLabel(facet string) string {
	switch facet {
	case FacetReason:
		return "no reason"
	}
	return "no " + facetLabel(facet)
}
