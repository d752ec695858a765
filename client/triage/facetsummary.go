package triage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// What Facets tell once the letters are counted: each facet's values, exactly counted.

// FacetValue is one value of a facet and the letters that have it.
type FacetValue struct {
	// Value is the value as shown; Absent marks the letters without the facet.
	Value  string `json:"value"`
	Absent bool   `json:"absent,omitempty"`
	// Letters have this value, exactly.
	Letters int64 `json:"letters"`
	// Expr selects exactly these letters (client/expr).
	Expr string `json:"expr"`
}

// FacetSummary is one facet over the selection.
type FacetSummary struct {
	Name string `json:"facet"`
	// Values are the values with more than one letter (and the letters without the facet),
	// most letters first, at most FacetTopValues.
	Values []FacetValue `json:"values"`
	// Distinct is how many different values the letters have (absent not counted); with
	// DistinctAtLeast it is a lower bound (the facet was past its cap).
	Distinct        int64 `json:"distinct"`
	DistinctAtLeast bool  `json:"distinct_at_least,omitempty"`
	// Singles are the values that one letter each has, summarised rather than listed.
	Singles int64 `json:"singles"`
	// Unlisted are letters whose value is not listed (singles, values past FacetTopValues,
	// and values a hashed facet could not name: each had fewer than 1/FacetHeavyCap of the
	// letters).
	Unlisted int64 `json:"unlisted"`
	// PastCap are letters whose value came after the facet reached its cap: their values are
	// counted in none of the above but Unlisted.
	PastCap int64 `json:"past_cap,omitempty"`
	// Errors group the decoder's errors (the payload.decodes facet only), most letters first.
	Errors []Count `json:"errors,omitempty"`
	// Note says what the values mean beyond their names, when they need it.
	Note string `json:"note,omitempty"`
}

// FacetTopValues is how many values a facet summary lists.
const FacetTopValues = 10

// Summary lists every facet: the key, the reason, the payload, the schema, the size, the
// producer, the schema version, the hours, then the properties and JSON fields by name.
func (f *Facets) Summary() []FacetSummary {
	var out []FacetSummary
	cols := slices.Clone(f.order)
	rank := func(name string) int {
		i := slices.Index(FacetNames, name)
		if i < 0 {
			return 100
		}
		return i
	}
	slices.SortStableFunc(cols, func(a, b *facetColumn) int {
		if c := cmp.Compare(rank(a.name), rank(b.name)); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	for _, c := range cols {
		out = append(out, f.summarise(c))
	}
	for bit, name := range f.fieldNames {
		out = append(out, f.fieldSummary(bit, name))
	}
	return out
}

// FacetNames are the facets `dlq stats --by` takes besides property.NAME and json.NAME, in the
// order summaries list them and Facets' fixed slots (slotKey …) number them.
var FacetNames = []string{FacetKey, FacetReason, FacetPayload, FacetSchema, FacetSize, FacetProducer, FacetVersion,
	FacetPublished, FacetEvent}

// ParseFacet checks a facet's name as `dlq stats --by` takes it: one of FacetNames,
// property.NAME or json.NAME (a top-level field of JSON payloads).
func ParseFacet(name string) (string, error) {
	if slices.Contains(FacetNames, name) {
		return name, nil
	}
	for _, prefix := range []string{facetProperty, facetJSON} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" {
			return name, nil
		}
	}
	return "", fmt.Errorf("unknown facet %q (facets: %s, property.NAME, json.NAME)", name, strings.Join(FacetNames, ", "))
}

// Facet summarises the facet name (ParseFacet's): a property or JSON field that no letter has
// is summarised as absent from every letter.
func (f *Facets) Facet(name string) FacetSummary {
	if c := f.columns[name]; c != nil {
		return f.summarise(c)
	}
	if field, ok := strings.CutPrefix(name, facetJSON); ok {
		if bit, ok := f.fieldIndex[field]; ok {
			return f.fieldSummary(bit, field)
		}
	}
	s := FacetSummary{Name: name}
	if f.n > 0 {
		s.Values = []FacetValue{{Value: "(absent)", Absent: true, Letters: f.n, Expr: exprAbsent(name)}}
	}
	return s
}

// fieldSummary summarises the top-level JSON field name, bit bit of f.fields.
func (f *Facets) fieldSummary(bit int, name string) FacetSummary {
	has := f.fields.has(f.n, bit)
	var fv []FacetValue
	if has > 0 {
		fv = append(fv, FacetValue{Value: "present", Letters: has, Expr: exprHas(facetJSON + name)})
	}
	if f.n-has > 0 {
		fv = append(fv, FacetValue{Value: "(absent)", Absent: true, Letters: f.n - has, Expr: exprNot(exprHas(facetJSON + name))})
	}
	slices.SortStableFunc(fv, func(a, b FacetValue) int { return cmp.Compare(b.Letters, a.Letters) })
	return FacetSummary{Name: facetJSON + name, Values: fv, Distinct: min(has, 1)}
}

// valueCounts are a column's values with their exact counts, absent ones apart.
type valueCounts struct {
	values   []valueCount
	absent   int64
	past     int64
	distinct int64
	singles  int64
	atLeast  bool
}

type valueCount struct {
	v    string
	id   uint16 // dictionary mode
	hash uint64 // hash mode
	n    int64
}

// count reads c's column: the exact count of every value it can name, for the first n letters.
// It reads the column once for the letters there are (a scan's summary and its causes ask
// for the same counts); the caller must not change what it returns.
func (c *facetColumn) count(n int64) *valueCounts {
	if c.counted == nil || c.countedAt != n {
		c.counted, c.countedAt = c.countAll(n), n
	}
	return c.counted
}

func (c *facetColumn) countAll(n int64) *valueCounts {
	out := &valueCounts{}
	if c.hashed() {
		c.countHashes(n, out)
	} else {
		counts := make([]int64, len(c.values)+idFirst)
		c.ids.counts(n, counts)
		out.absent = counts[idAbsent]
		out.past = counts[idPast]
		for k, v := range c.values {
			if m := counts[k+idFirst]; m > 0 {
				out.values = append(out.values, valueCount{v: v, id: uint16(k + idFirst), n: m})
				out.distinct++
				if m == 1 {
					out.singles++
				}
			}
		}
		if out.past > 0 {
			out.atLeast = true
			out.distinct++ // at least one more value
		}
	}
	slices.SortFunc(out.values, func(a, b valueCount) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(a.v, b.v)
	})
	return out
}

// hashPartBits are the top bits of a hash that say in which part of a hashed column its value
// is counted: a part at a time, a sorted copy of a sixteenth of the column, rather than of all
// of it once the scan's memory is at its largest.
const hashPartBits = 4

// countHashes counts a hashed column: the values the summary names exactly, and the distinct
// and single values from a sorted copy of each part of it.
func (c *facetColumn) countHashes(n int64, out *valueCounts) {
	named := make(map[uint64]int64, len(c.heavy.entries))
	for _, hv := range c.heavy.entries {
		named[hv.hash] = 0
	}
	var part []uint64
	var present int64
	for p := range uint64(1 << hashPartBits) {
		part = part[:0]
		for _, ch := range c.hashes.chunks {
			if ch.vals == nil && ch.same != 0 && ch.same>>(64-hashPartBits) == p {
				for range ch.n {
					part = append(part, ch.same)
				}
			}
			for _, h := range ch.vals {
				if h != 0 && h>>(64-hashPartBits) == p {
					part = append(part, h)
				}
			}
		}
		present += int64(len(part))
		slices.Sort(part)
		for i := 0; i < len(part); {
			j := i + 1
			for j < len(part) && part[j] == part[i] {
				j++
			}
			out.distinct++
			if j-i == 1 {
				out.singles++
			}
			if _, ok := named[part[i]]; ok {
				named[part[i]] = int64(j - i)
			}
			i = j
		}
	}
	out.absent = n - present
	for h, k := range named {
		if k > 0 {
			name, _ := c.heavy.name(h)
			out.values = append(out.values, valueCount{v: name, hash: h, n: k})
		}
	}
}

func (f *Facets) summarise(c *facetColumn) FacetSummary {
	vc := c.count(f.n)
	s := FacetSummary{Name: c.name, Distinct: vc.distinct, DistinctAtLeast: vc.atLeast, Singles: vc.singles, PastCap: vc.past}
	listed := int64(0)
	for _, v := range vc.values {
		if len(s.Values) == FacetTopValues || (v.n < 2 && vc.distinct > FacetTopValues) {
			break
		}
		s.Values = append(s.Values, FacetValue{Value: v.v, Letters: v.n, Expr: exprIs(c.name, v.v)})
		listed += v.n
	}
	if vc.absent > 0 {
		s.Values = append(s.Values, FacetValue{Value: "(absent)", Absent: true, Letters: vc.absent, Expr: exprAbsent(c.name)})
		listed += vc.absent
		slices.SortStableFunc(s.Values, func(a, b FacetValue) int { return cmp.Compare(b.Letters, a.Letters) })
	}
	s.Unlisted = f.n - listed
	if c.name == FacetSchema {
		if f.unschemed > 0 {
			s.Note = fmt.Sprintf("%d of them had no schema to decode with (a payload decodes when there is none)", f.unschemed)
		}
		s.Errors = sorted(f.errors, 0)
		for i := range s.Errors {
			if s.Errors[i].Name == "" {
				s.Errors[i].Name = "(other errors)"
			}
		}
	}
	return s
}
