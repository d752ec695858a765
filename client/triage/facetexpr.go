package triage

import (
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/expr"
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
		return "payload does not decode"
	case FacetSize:
		return sizeExpr(v)
	case FacetVersion:
		return "version=" + v
	case FacetPublished, FacetEvent:
		field := strings.TrimSuffix(facet, ".hour")
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return field + ">=" + v + " and " + field + "<" + t.Add(time.Hour).Format(time.RFC3339)
		}
	}
	if isProperty(facet) {
		// An absent property equals nothing: "=" alone says it is there.
		return "property." + expr.QuoteName(facet[len(facetProperty):]) + "=" + expr.Quote(v)
	}
	return facet + "=" + expr.Quote(v)
}

// exprAbsent selects the letters without the facet.
func exprAbsent(facet string) string {
	switch facet {
	case FacetReason:
		return `reason=""`
	case FacetVersion:
		return "version=-1"
	case FacetEvent:
		return "not has event"
	}
	return exprNot(exprHas(facet))
}

// exprHas selects the letters that have a property or a top-level JSON field.
func exprHas(facet string) string {
	switch {
	case isProperty(facet):
		return "has property." + expr.QuoteName(facet[len(facetProperty):])
	case strings.HasPrefix(facet, facetJSON):
		return "has json." + expr.QuotePathKey(facet[len(facetJSON):])
	}
	return "has " + facet
}

// exprNot, exprAnd and exprOr combine expressions through client/expr, which writes them back
// with the parentheses their precedence needs.
func exprNot(e string) string { return combine("not (" + e + ")") }

func exprAnd(es ...string) string { return combine("(" + strings.Join(es, ") and (") + ")") }

func exprOr(es ...string) string { return combine("(" + strings.Join(es, ") or (") + ")") }

func combine(s string) string {
	e, err := expr.Parse(s, time.Time{})
	if err != nil {
		// Every part was written by this file from quoted values: a failure here is a bug,
		// and the expression is kept as built so that the error shows where it is used.
		return s
	}
	return e.String()
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
	return "size=" + expr.Quote(label)
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n)
}

// facetLabel is how a label names the facet.
func facetLabel(facet string) string {
	switch facet {
	case FacetSchema:
		return ""
	case FacetPayload, FacetSize:
		return "payload"
	case FacetVersion:
		return "schema version"
	case FacetPublished:
		return "published"
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
	case FacetSize:
		return "payload " + v
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
