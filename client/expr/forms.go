package expr

import (
	"strings"
)

// The grammar's forms, once: the help of every command that takes an expression prints them,
// and a test holds the documentation to them.

// Form is one form of the grammar as the help lists it.
type Form struct {
	// Syntax is the form as typed, one or more variants separated by ", " (each variant is
	// written in backquotes in the documentation).
	Syntax string
	// Meaning says what it selects.
	Meaning string
}

// Forms are the grammar's forms, in the order the help lists them.
func Forms() []Form {
	return []Form{
		{"key=V, key!=V, key~REGEX, key!~REGEX", "the message key"},
		{"property.NAME=V", "property NAME (also !=, ~, !~); an absent property equals nothing"},
		{"has property.NAME", "the property is there, whatever its value"},
		{"payload=TEXT, payload~REGEX", "the payload equals TEXT, matches REGEX (also !=, !~)"},
		{"payload is json, payload is not json", "the payload is one JSON document (an empty payload is not)"},
		{"payload decodes, payload does not decode",
			"with the schema the letter was written with (the DLQ's at the letter's schema version, else the origin's); " +
				"a topic without a schema decodes anything"},
		{"size>10KiB", "the payload's size in bytes (=, !=, <, <=, >, >=; units B, KB, MB, GB, KiB, MiB, GiB)"},
		{"json.PATH=V", "the value at a dotted path of a JSON payload (json.order.lines.0.sku=A-1; also !=, ~, !~)"},
		{"has json.PATH", "the JSON payload has a value at PATH"},
		{"reason=V", "the letter's reason property; reason=\"\" for letters without one"},
		{"origin=TOPIC", "the topic it died on (REAL_TOPIC; a short name works)"},
		{"subscription=NAME", "the subscription it died on, when its producer's name tells"},
		{"reconsumes>=N", "RECONSUMETIMES (=, !=, <, <=, >, >=); -1 when absent"},
		{"published>=TIME", "the publish time (>, >=, <, <=): 2026-11-30T08:00:00Z, 2026-11-30 08:00, 2026-11-30 (local), -2h, -30m, -1d"},
		{"event>=TIME, has event", "the event time the application set (>, >=, <, <=, times as published takes them); a letter without one matches no time"},
		{"producer=NAME", "the name of the producer that published the letter (also !=, ~, !~)"},
		{"version=N", "the writer schema version (=, !=, <, <=, >, >=); -1 when the letter has none"},
		{"TEXT, \"quoted text\"", "the key, a property or the payload contains it, in any case"},
		{"A and B, A && B", "both"},
		{"A or B, A || B", "either"},
		{"not A", "A does not hold"},
		{"(A or B) and C", "parentheses group; without them not binds tighter than and, and than or"},
	}
}

// Notes are the rules of values and errors that go with Forms.
const Notes = `== is =. A value runs to the next and/or or the end; quote it ("…" or '…', with \", \\, \n,
\t, \xHH, \uHHHH) to hold and/or, quotes, blanks at its ends or control characters. An
expression that cannot mean what was typed is refused with its column: unknown fields and
operators, lone quotes and parentheses, a condition where and/or is missing.`

// Usage is Forms and Notes as an indented table for a --help, width columns wide at most where
// the meanings allow it.
func Usage(indent string, width int) string {
	forms := Forms()
	w := 0
	for _, f := range forms {
		w = max(w, len(f.Syntax))
	}
	w = min(w, 40)
	var b strings.Builder
	for _, f := range forms {
		left := indent + f.Syntax
		pad := indent + strings.Repeat(" ", w)
		if len(f.Syntax) > w {
			b.WriteString(left + "\n")
			left = pad
		} else {
			left += strings.Repeat(" ", w-len(f.Syntax))
		}
		for i, line := range wrap(f.Meaning, max(width-len(pad)-2, 30)) {
			if i > 0 {
				left = pad
			}
			b.WriteString(left + "  " + line + "\n")
		}
	}
	b.WriteString("\n")
	for line := range strings.SplitSeq(Notes, "\n") {
		b.WriteString(indent + line + "\n")
	}
	return b.String()
}

// wrap breaks s into lines of at most width characters at blanks.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	return append(lines, line)
}
