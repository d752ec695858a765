package expr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/letterbox-dev/letterbox/client"
)

// The forms beyond key=V and "and": or, not, parentheses, payload's word forms, has, size,
// and what is refused.

func mustParse(t *testing.T, s string) *Expr {
	t.Helper()
	e, err := Parse(s, now)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return e
}

func TestNewForms(t *testing.T) {
	big := letter()
	big.Payload = []byte(strings.Repeat("x", 10*1024+1))
	empty := letter()
	empty.Payload = nil
	cases := []struct {
		expr string
		m    *Message
		want bool
	}{
		{"payload is json", letter(), true},
		{"payload is not json", letter(), false},
		{"PAYLOAD IS NOT JSON", big, true},
		{"payload is json", empty, false},
		{"payload is not json", empty, true},
		{"has property.reason", letter(), true},
		{"has property.REASON", letter(), false},
		{"not has property.region", letter(), true},
		{"has json.order.lines.0.sku", letter(), true},
		{"has json.order.lines.1", letter(), false},
		{"has json.order", big, false},
		{"size > 10KiB", big, true},
		{"size>10KiB", letter(), false},
		{"size<10241", big, false},
		{"size<=10241", big, true},
		{"size=10241", big, true},
		{"size>=10.241kb", big, true},
		{"size!=0", empty, false},
		{"size=0", empty, true},
		{"size<1MiB", big, true},
		{"key=customer-27 or key=x", letter(), true},
		{"key=x or key=customer-27", letter(), true},
		{"key=x or key=y", letter(), false},
		{"key=x || reconsumes=3", letter(), true},
		{"not key=x", letter(), true},
		{"not key=customer-27", letter(), false},
		{"not not key=customer-27", letter(), true},
		// not > and > or: "not a and b" is (not a) and b; "a or b and c" is a or (b and c).
		{"not key=x and key=customer-27", letter(), true},
		{"not (key=x and key=customer-27)", letter(), true},
		{"key=customer-27 or key=x and key=y", letter(), true},
		{"(key=customer-27 or key=x) and key=y", letter(), false},
		{"key=x and key=y or key=customer-27", letter(), true},
		{"key=x and (key=y or key=customer-27)", letter(), false},
		{`property.reason=payment declined and not (key="" or key=UNKNOWN)`, letter(), true},
		{`(reason=payment declined)`, letter(), true},
		{`reason="payment declined")`[:len(`reason="payment declined"`)], letter(), true},
		{"key==customer-27", letter(), true},
		{"reason=can't pay", letter(), false},
		{"payload~(Rush|Slow) and (key=x or payload~\"id\":42)", letter(), true},
		{"could not connect", letter(), false},
	}
	for _, c := range cases {
		if got := mustParse(t, c.expr).Match(c.m); got != c.want {
			t.Errorf("%q matched %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestValuesRunToKeywords: a bare value keeps its blanks and its parentheses, and ends at
// "and", "or" or the parenthesis that closes its group.
func TestValuesRunToKeywords(t *testing.T) {
	for _, c := range []struct{ expr, value string }{
		{"reason=payment declined", "payment declined"},
		{"reason=payment declined or key=x", "payment declined"},
		{"reason=could not connect", "could not connect"},
		{"reason=failed (timeout)", "failed (timeout)"},
		{"(reason=failed (timeout))", "failed (timeout)"},
		{"(reason=failed )", "failed"},
		{"reason=can't connect", "can't connect"},
		{`payload~"id":42`, `"id":42`},
		{`payload~\(`, `\(`},
		{`key="say \"hi\""`, `say "hi"`},
		{`key='it\'s'`, `it's`},
		{`key="\x1b[2J\n\t\u00e9\\d"`, "\x1b[2J\n\té\\d"},
		{`key="\d+"`, `\d+`},
		{`key=""`, ""},
		{`key="a and b"`, "a and b"},
	} {
		e := mustParse(t, c.expr)
		var got []string
		e.root.walk(func(tm *term) { got = append(got, tm.value) })
		if len(got) == 0 || got[0] != c.value {
			t.Errorf("%q: value %q, want %q", c.expr, got, c.value)
		}
	}
}

// TestRefused: what cannot mean what was typed is an error at its column, never a literal.
func TestRefused(t *testing.T) {
	cases := []struct {
		expr string
		col  int
		msg  string
	}{
		{"kye=x", 1, `unknown field "kye"`},
		{"payload~(", 9, "bad regular expression"},
		{"published>=yesterday", 12, "want a time"},
		{"published=2026-11-30", 10, "published takes"},
		{"key=a and", 10, "a condition must follow"},
		{`key="a`, 5, "quote not closed"},
		{`key="a" reason=b`, 9, `want "and"`},
		{"reconsumes>=many", 13, "want a number"},
		{"property=x", 1, "needs a name"},
		{"key!x", 4, "unknown operator"},
		{"key<x", 4, "key takes"},
		{"published>=", 12, "want a value"},
		{"é and kye=x", 7, `unknown field "kye"`},
		{"key=~x", 4, `unknown operator "=~"`},
		{"key<>x", 4, `unknown operator "<>"`},
		{"key===x", 4, `unknown operator "==="`},
		{"key= =x", 6, "a value cannot start with"},
		{"=x", 1, "a condition cannot start with"},
		{"key=", 5, "want a value"},
		{"key= and key=x", 6, "want a value"},
		{`key=a"`, 6, "quote not closed"},
		{`key="a`, 5, "quote not closed"},
		{`reason=it's "fine`, 13, "quote not closed"},
		{`'abc`, 1, "quote not closed"},
		{"key=a reason=b", 7, `"reason=" starts another condition`},
		{`key=UNKNOWN key=""`, 13, `"key=" starts another condition`},
		{"declined key=x", 10, `"key=" starts another condition`},
		{"key=a kye=b", 7, `"kye=" starts another condition`},
		{"key=a has property.x", 7, `"has property.x" starts another condition`},
		{"key=a payload is json", 7, `"payload is json" starts another condition`},
		{"key=UNKNOWN or", 15, `a condition must follow "or"`},
		{"or key=a", 1, `a condition must come before "or"`},
		{"key=a and or key=b", 11, `a condition must follow "and"`},
		{"not", 4, `a condition must follow "not"`},
		{"(key=a", 1, `"(" is not closed`},
		{"key=a)", 6, `")" closes no "("`},
		{"(key=a))", 8, `")" closes no "("`},
		{"()", 2, "a condition must come before"},
		{"(key=a key=b)", 8, "starts another condition"},
		{`(key="a" x)`, 10, `want "and", "or" or ")"`},
		{`key="a" x`, 9, `want "and", "or" or the end`},
		{"reason=failed (x", 15, `"(" is not closed`},
		{"failed (x", 8, `"(" is not closed`},
		{"payload~(", 9, "bad regular expression"},
		{"payload is broken", 12, `want "json"`},
		{"payload is not xml", 16, `want "json"`},
		{"payload does decode", 14, `want "not"`},
		{"has key", 5, "has takes property.NAME, json.PATH or event"},
		{"has", 4, "has takes"},
		{"has property.x=1", 15, `want "and", "or" or the end`},
		{"size>big", 6, "want a size"},
		{"size>10XB", 6, "want a size"},
		{"size>1.5B", 6, "not a whole number of bytes"},
		{"size~1", 5, "size takes"},
		{"size.x=1", 1, `unknown field "size.x"`},
		{`key="\x1"`, 6, `\x wants 2 hex digits`},
		{`key="\ud800"`, 6, `\u wants 4 hex digits`},
		{"reconsumes>=99999999999", 13, "want a number"},
	}
	for _, c := range cases {
		_, err := Parse(c.expr, now)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a SyntaxError", c.expr, err)
			continue
		}
		if se.Col != c.col || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("Parse(%q): column %d %q, want column %d %q", c.expr, se.Col, se.Msg, c.col, c.msg)
		}
	}
}

// TestCanonical: String writes keywords in lower case, "=" for "==", sizes in their units,
// and parentheses only where precedence needs them; what it writes parses to itself.
func TestCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"KEY==x AND NOT key=y OR key=z", "key=x and not key=y or key=z"},
		{"key=a || key=b && key=c", "key=a or key=b and key=c"},
		{"(key=a or key=b) and key=c", "(key=a or key=b) and key=c"},
		{"((key=a))", "key=a"},
		{"not (key=a or key=b)", "not (key=a or key=b)"},
		{"not (key=a and key=b)", "not (key=a and key=b)"},
		{"not (not key=a)", "not not key=a"},
		{"key=a and (key=b and key=c)", "key=a and key=b and key=c"},
		{"size > 10kib", "size>10KiB"},
		{"size >= 1.5 mb", "size>=1.5MB"},
		{"payload  IS   not JSON", "payload is not json"},
		{"payload Does Not Decode", "payload does not decode"},
		{"has  property.'my prop'", `has property."my prop"`},
		{`json."a.b".c=1`, `json."a.b".c=1`},
		{`property.region=eu and not (key="" or key=UNKNOWN)`, `property.region=eu and not (key="" or key=UNKNOWN)`},
		{`"not"`, `"not"`},
		{`"a=b"`, `"a=b"`},
		{`key="and"`, `key="and"`},
		{`key=' x'`, `key=" x"`},
		{`key="(a"`, `key="(a"`},
		{`key="a)"`, `key="a)"`},
		{`key="=a"`, `key="=a"`},
	} {
		e := mustParse(t, c.in)
		if got := e.String(); got != c.want {
			t.Errorf("%q → %q, want %q", c.in, got, c.want)
		}
		if again := mustParse(t, e.String()).String(); again != e.String() {
			t.Errorf("%q → %q → %q", c.in, e.String(), again)
		}
	}
}

// nasty are values a letter may hold: whatever they are, an expression written with Quote
// selects exactly them.
var nasty = []string{
	"", " ", "  lead", "trail  ", "a and b", "a or b", "AND", "or", "not", "has", "x && y", "a || b",
	`"`, `'`, `"quoted"`, `it's`, `\`, `\\`, `\d+`, `a\"b`, "(", ")", "(a", "a)", "(a)", "=", "==x",
	"!x", "~", "<>", "key=x", "a key=x", "payload is json", "has property.x", "\x00", "\x1b]0;title\x07",
	"\x1b[2J", "line\nbreak", "tab\there", "\r", "\x7f", "\u2028", "\u00e9t\u00e9", "\xff\xfe", "a\xffb",
	"UNKNOWN", "-", "-2h", "😀", "\u200b", "a.b", "{\"a\":1}",
}

func TestQuoteSelectsExactly(t *testing.T) {
	for _, v := range nasty {
		for _, name := range []string{"region", "my prop", "a.b", "=", "", "\x1b", "x)", `"`} {
			expr := "property." + QuoteName(name) + "=" + Quote(v)
			e, err := Parse(expr, now)
			if err != nil {
				t.Errorf("value %q, name %q: %q does not parse: %v", v, name, expr, err)
				continue
			}
			if !e.Match(&Message{Properties: map[string]string{name: v}}) {
				t.Errorf("%q does not select property %q = %q", expr, name, v)
			}
			if e.Match(&Message{Properties: map[string]string{name: v + "x"}}) || e.Match(&Message{Properties: map[string]string{name + "x": v}}) {
				t.Errorf("%q selects more than property %q = %q", expr, name, v)
			}
			if strings.ContainsFunc(expr, func(r rune) bool { return r < 0x20 || r == 0x7f }) || !utf8.ValidString(expr) {
				t.Errorf("%q holds a control character or a byte that is not UTF-8", expr)
			}
		}
		if v == "" {
			continue
		}
		text := quoteText(v)
		e, err := Parse(text, now)
		if err != nil || e.root.op != opCond || e.root.t.field != "" || e.root.t.value != v {
			t.Errorf("text %q written %q reads back as %v, %v", v, text, e, err)
		}
	}
}

func FuzzQuote(f *testing.F) {
	for _, v := range nasty {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		expr := "key=" + Quote(v) + " or not key=" + Quote(v)
		e, err := Parse(expr, now)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		var got []string
		e.root.walk(func(tm *term) { got = append(got, tm.value) })
		if len(got) != 2 || got[0] != v || got[1] != v {
			t.Fatalf("%q read back as %q", expr, got)
		}
	})
}

// FuzzParse: nothing crashes the parser, and what parses is written back as something that
// parses to the same text again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"key=a", "not (a or b) and c", `payload~"id":42`, "size>1KiB", "has json.a.b",
		"payload is not json", `key="\x1b"`, "(((", "reason=can't (x)", "a\tand\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s, now)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Col < 1 || se.Col > utf8.RuneCountInString(s)+1 {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			return
		}
		again, err := Parse(e.String(), now)
		if err != nil {
			t.Fatalf("%q → %q: %v", s, e.String(), err)
		}
		if again.String() != e.String() {
			t.Fatalf("%q → %q → %q", s, e.String(), again.String())
		}
	})
}

// TestDecodes: "payload decodes" asks Message.Decode once per message; a verdict it cannot
// give leaves the answer unknown (nothing selected, the error returned) unless the rest of
// the expression settles it.
func TestDecodes(t *testing.T) {
	notDecoded := fmt.Errorf("%w: cannot decode record", client.ErrSchema)
	down := errors.New("broker unreachable")
	cases := []struct {
		expr    string
		verdict error
		want    bool
		wantErr error
	}{
		{"payload decodes", nil, true, nil},
		{"payload decodes", notDecoded, false, nil},
		{"payload does not decode", notDecoded, true, nil},
		{"not payload decodes", notDecoded, true, nil},
		{"payload decodes", down, false, down},
		{"not payload decodes", down, false, down},
		{"payload does not decode", down, false, down},
		{"payload decodes or key=customer-27", down, true, nil},
		{"payload decodes and key=x", down, false, nil},
		{"not (payload decodes and key=x)", down, true, nil},
		{"payload decodes and key=customer-27", down, false, down},
	}
	for _, c := range cases {
		e := mustParse(t, c.expr)
		if !e.UsesDecode() {
			t.Errorf("%q: UsesDecode false", c.expr)
		}
		m := letter()
		calls := 0
		m.Decode = func() error { calls++; return c.verdict }
		got, err := e.Eval(m, nil)
		if got != c.want || !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
			t.Errorf("%q with verdict %v: %v, %v; want %v, %v", c.expr, c.verdict, got, err, c.want, c.wantErr)
		}
		if calls > 1 {
			t.Errorf("%q: Decode called %d times", c.expr, calls)
		}
	}
	// A cheap condition that settles the answer spares the decoding, wherever it is written.
	m := letter()
	m.Decode = func() error { t.Error("decoded although key=x settles it"); return nil }
	mustParse(t, "payload decodes and key=x").Match(m)
	if mustParse(t, "key=x").UsesDecode() {
		t.Error("key=x: UsesDecode true")
	}
	// Without a decoder nothing can be told.
	if ok, err := mustParse(t, "payload decodes").Eval(letter(), nil); ok || !errors.Is(err, ErrNoDecoder) {
		t.Errorf("without Decode: %v, %v", ok, err)
	}
}

// TestJSONIsOneDocument: trailing data makes a payload no JSON, for "payload is json" and
// json.PATH alike.
func TestJSONIsOneDocument(t *testing.T) {
	m := &Message{Payload: []byte(`{"a":1} trailing`)}
	for _, s := range []string{"payload is json", "json.a=1", "has json.a"} {
		if mustParse(t, s).Match(m) {
			t.Errorf("%q matched a payload with data after its JSON", s)
		}
	}
	if !mustParse(t, "payload is json").Match(&Message{Payload: []byte(" 42 \n")}) {
		t.Error("a JSON number with blanks around it is JSON")
	}
}

func TestProperties(t *testing.T) {
	e := mustParse(t, `property.region=eu and not (has property.tenant or property.region~x) or property."a b"!=1`)
	if got, want := fmt.Sprint(e.Properties()), "[region tenant a b]"; got != want {
		t.Errorf("Properties() = %s, want %s", got, want)
	}
}

func TestAndOr(t *testing.T) {
	a, b := mustParse(t, "key=a or key=b"), mustParse(t, "reason=x")
	if got := a.And(b).String(); got != "(key=a or key=b) and reason=x" {
		t.Errorf("And: %q", got)
	}
	if got := a.Or(b).String(); got != "key=a or key=b or reason=x" {
		t.Errorf("Or: %q", got)
	}
	if got := (*Expr)(nil).And(b).String(); got != "reason=x" {
		t.Errorf("nil.And: %q", got)
	}
	if !a.Or(nil).Empty() {
		t.Error("an empty side of or selects everything")
	}
}

// TestForms: every variant the help lists parses, placeholders and all.
func TestForms(t *testing.T) {
	for _, f := range Forms() {
		for _, v := range strings.Split(f.Syntax, ", ") {
			// The placeholders that only a number or a time can stand for.
			v = strings.NewReplacer(">=N", ">=3", "=N", "=3", ">=TIME", ">=-2h").Replace(v)
			if _, err := Parse(v, now); err != nil {
				t.Errorf("form %q: %v", v, err)
			}
		}
		if f.Meaning == "" {
			t.Errorf("form %q means nothing", f.Syntax)
		}
	}
	u := Usage("  ", 100)
	for _, f := range Forms() {
		if !strings.Contains(u, f.Syntax) {
			t.Errorf("Usage lacks %q", f.Syntax)
		}
	}
}

// TestEventProducerVersion: the fields the causes of a DLQ are written with (its facets):
// event time (absent matches no time), producer and writer schema version.
func TestEventProducerVersion(t *testing.T) {
	at := time.Date(2026, 12, 6, 8, 30, 0, 0, time.UTC)
	v3 := []byte{0, 0, 0, 0, 0, 0, 0, 3}
	with := Message{EventTime: at, ProducerName: "orders-billing-c1-abcde-DLQ", SchemaVersion: v3}
	without := Message{}
	cases := []struct {
		expr          string
		with, without bool
	}{
		{"event>=2026-12-06T08:00:00Z and event<2026-12-06T09:00:00Z", true, false},
		{"event<2026-12-06T08:00:00Z", false, false},
		{"has event", true, false},
		{"not has event", false, true},
		{"producer=orders-billing-c1-abcde-DLQ", true, false},
		{"producer~-DLQ$", true, false},
		{"producer!=x", true, true},
		{"version=3", true, false},
		{"version=-1", false, true},
		{"version>=2", true, false},
	}
	for _, c := range cases {
		e, err := Parse(c.expr, at)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := e.Match(&with); got != c.with {
			t.Errorf("%s on a letter with them: %v, want %v", c.expr, got, c.with)
		}
		if got := e.Match(&without); got != c.without {
			t.Errorf("%s on a letter without them: %v, want %v", c.expr, got, c.without)
		}
		if back, err := Parse(e.String(), at); err != nil || back.String() != e.String() {
			t.Errorf("%s written back as %q: %v", c.expr, e.String(), err)
		}
	}
	for _, bad := range []string{"event=2026-12-06", "has event.x", "version~3", "version=x", "has producer"} {
		if _, err := Parse(bad, at); err == nil {
			t.Errorf("%s parsed; want an error", bad)
		}
	}
}
