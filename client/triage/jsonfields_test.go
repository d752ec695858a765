package triage

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// jsonPieces are fragments random documents are made of: every token of the grammar, and the
// near misses a hand-written validator could take for one.
var jsonPieces = []string{`{`, `}`, `[`, `]`, `:`, `,`, ` `, "\t", "\n", "\r", `"`, `"a"`, `"\"`, `"\u00e9"`, `"\u00g9"`,
	`"\x"`, `\`, `"\/\b\f\n\r\t"`, "\"\x01\"", "\"\xff\xfe\"", `0`, `-`, `-0`, `01`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1E-7`,
	`12e3`, `+1`, `true`, `tru`, `false`, `null`, `nul`, `NaN`, `x`, "\x00", "é"}

// The scanner says what json.Valid says, on random compositions of the pieces above and on
// the fields' edge cases: the facet "json" must mean what `payload is json` means.
func TestJSONScannerAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var p jsonScanner
	check := func(doc string) {
		t.Helper()
		if got, want := p.fields([]byte(doc), func([]byte) {}), json.Valid([]byte(doc)); got != want {
			t.Fatalf("%q: scanner says valid %v, json.Valid %v", doc, got, want)
		}
	}
	for range 200_000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(jsonPieces[rng.IntN(len(jsonPieces))])
		}
		check(b.String())
	}
	// Valid documents, then each cut short: every prefix of a valid document but itself and
	// whitespace around it is invalid, and must be said so.
	for _, doc := range []string{`{"a":[1,2,{"b":null}],"c":"d\"e","f":-1.5e+3}`, `[[],{},"",0,true,false]`, ` "x" `} {
		for i := range len(doc) + 1 {
			check(doc[:i])
		}
	}
	// Strings long enough for the word-at-a-time checks, with each byte that matters at each
	// place of them: control characters, escapes, a stray backslash, a quote too early.
	for n := range 40 {
		for at := range n {
			for _, c := range []string{"\x00", "\x1f", " ", "\x7f", "\\", `\"`, `\\`, `\u00e9`, `\u00z9`, `\q`, `"`} {
				body := []byte(strings.Repeat("ab cd ef ", 5)[:n])
				check(`"` + string(body[:at]) + c + string(body[at:]) + `"`)
				check(`{"` + string(body[:at]) + c + string(body[at:]) + `":1}`)
			}
		}
	}
	check(`"` + strings.Repeat(`\"x`, 10_000) + `"`)
	check(`"` + strings.Repeat(`\\`, 10_001) + `"`)
	check(strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth))
	check(strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1))
	check(strings.Repeat(`{"a":`, maxJSONDepth) + "1" + strings.Repeat("}", maxJSONDepth))
	check(strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1))
}

func FuzzJSONScanner(f *testing.F) {
	for _, s := range jsonPieces {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a":1,"b":{"c":[1,2,{"d":"}"}]},"e\"f":"x","g.h":true}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var names []string
		if got, want := (&jsonScanner{}).fields(doc, func(q []byte) { names = append(names, unquote(q)) }), json.Valid(doc); got != want {
			t.Fatalf("%q: scanner says valid %v, json.Valid %v", doc, got, want)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(doc, &obj) == nil && obj != nil {
			for _, n := range names {
				if _, ok := obj[n]; !ok {
					t.Fatalf("%q: field %q named, not in the object", doc, n)
				}
			}
			if len(obj) > len(names) {
				t.Fatalf("%q: %d fields named, the object has %d", doc, len(names), len(obj))
			}
		}
	})
}

// BenchmarkJSONFields reads the fields of an order like the bench's scan part's: a dozen
// short strings and numbers, then a long note.
func BenchmarkJSONFields(b *testing.B) {
	doc := []byte(`{"order_id":"o-123456","customer":"customer-4242","amount_cents":31337,"currency":"EUR","lines":[{"sku":"SKU-1234","qty":3}],"note":"`)
	for len(doc) < 1022 {
		doc = append(doc, "lorem ipsum "[len(doc)%12])
	}
	doc = append(doc, `"}`...)
	var p jsonScanner
	n := 0
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if !p.fields(doc, func([]byte) { n++ }) {
			b.Fatal("not valid")
		}
	}
}
