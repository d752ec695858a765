package triage

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/expr"
)

// Facets count what a selection's letters have in common and what splits them, in the same
// pass that reads them: the key, every property (up to FacetPropertyCap names), the payload's
// kind, whether it decodes with the topic's schema, its top-level JSON fields, its size, the
// producer, the schema version, and the publish and event hours. Causes then splits the
// selection into the few groups that explain it (causes.go).
//
// Every facet keeps one small value per letter (a column), so that any combination of the
// values it tracks can be counted exactly afterwards without reading the letters again: the
// counts a cause reports are the counts its expression selects. Memory stays bounded:
//
//   - A facet starts as a dictionary of at most FacetDictionaryCap distinct values, two bytes
//     per letter.
//   - Past that (keys, ids carried in properties) it switches to hashes, eight bytes per letter,
//     and names its most frequent values with a small summary (FacetHeavyCap values): every
//     value with more than 1/FacetHeavyCap of the letters is among them, and the counts shown
//     for them are exact, counted from the column. Distinct and single-letter values are
//     counted exactly at the end, from a sorted copy of the column.
//   - At most FacetHashedCap facets switch to hashes; past that a facet keeps counting the
//     values it already tracks exactly and counts every letter with a newer value as "past the
//     cap", so that its summary says "≥" instead of dropping letters silently.
//
// Facets are used by the one goroutine that scans.
type Facets struct {
	n       int64
	seed    maphash.Seed
	hashed  int // facets in hash mode
	columns map[string]*facetColumn
	order   []*facetColumn // in the order first seen, for a stable output
	// extraNames counts property names seen past FacetPropertyCap.
	extraNames map[string]bool
	// errors groups decoder errors by text, at most facetErrorCap of them.
	errors map[string]int64
	// json holds each letter's top-level JSON fields as bits of fieldNames (nil until a
	// payload is a JSON object).
	json       []uint64
	fieldNames []string
	fieldIndex map[string]int
	fieldForms map[string]int // a field's name as written in the payload → its bit
	// properties is how many property facets there are.
	properties int
	// unschemed counts the letters that had no schema to decode with.
	unschemed int64
	// reasonKeys are the property names letters took their reason from.
	reasonKeys map[string]int64

	// What Add uses for every letter, kept at hand: a letter costs no map lookup per facet,
	// no closure and no formatting of an hour it saw last time.
	fixed    [fixedFacets]*facetColumn
	props    map[string]*facetColumn // by property name
	js       jsonScanner
	cur      int64        // the letter Add counts, for addField
	addField func([]byte) // f.field of cur, made once
	hours    [2]hourText  // published, event
}

// fixedFacets are the facets every letter may have, by slot.
const (
	slotKey = iota
	slotReason
	slotPayload
	slotSchema
	slotSize
	slotProducer
	slotVersion
	slotPublished
	slotEvent
	fixedFacets
)

var fixedNames = [fixedFacets]string{FacetKey, FacetReason, FacetPayload, FacetSchema, FacetSize, FacetProducer, FacetVersion,
	FacetPublished, FacetEvent}

// hourText is the last hour formatted, for the next letter of the same hour.
type hourText struct {
	hour int64
	text string
}

func (h *hourText) of(t time.Time) string {
	hour := t.Unix() / 3600
	if t.Unix()%3600 < 0 {
		hour-- // before 1970: Truncate rounds down too
	}
	if h.text == "" || h.hour != hour {
		h.hour, h.text = hour, hourOf(t)
	}
	return h.text
}

// Caps of what Facets keep; docs/dead-letters.md ("Causes") documents them.
const (
	FacetPropertyCap   = 50
	FacetDictionaryCap = 4094
	FacetHeavyCap      = 1024
	FacetHashedCap     = 8
	FacetJSONFieldCap  = 64
	facetErrorCap      = 20
)

// The facets, by the names `letterbox dlq stats --by` takes; property.NAME and json.NAME (a
// top-level field of JSON payloads) complete them.
const (
	FacetKey       = "key"
	FacetReason    = "reason"
	FacetPayload   = "payload.kind"
	FacetSchema    = "payload.decodes"
	FacetSize      = "payload.size"
	FacetProducer  = "producer"
	FacetVersion   = "schema.version"
	FacetPublished = "published.hour"
	FacetEvent     = "event.hour"
	facetProperty  = "property."
	facetJSON      = "json."
)

// Values of the payload and schema facets.
const (
	PayloadEmpty   = "empty"
	PayloadJSON    = "json"
	PayloadNotJSON = "not json"
	SchemaDecodes  = "decodes"
	SchemaFails    = "does not decode"
)

// notFaceted are properties that differ on every letter by construction (the clients write the
// original message's id on each): they can name no cause and would each cost a hashed column.
var notFaceted = map[string]bool{
	client.PropertyOriginMessageID:    true,
	client.PropertyOriginMessageIDOld: true,
}

// Decoded is what the scan learnt from decoding a letter's payload with its topic's schema.
type Decoded struct {
	// Checked is false when the topic has no schema to decode with (bytes).
	Checked bool
	// Err is why the payload does not decode; "" when it does.
	Err string
}

// NewFacets returns empty Facets.
func NewFacets() *Facets {
	f := &Facets{seed: maphash.MakeSeed(), columns: map[string]*facetColumn{}, extraNames: map[string]bool{},
		errors: map[string]int64{}, fieldIndex: map[string]int{}, reasonKeys: map[string]int64{}, props: map[string]*facetColumn{},
		fieldForms: map[string]int{}}
	f.addField = func(quoted []byte) { f.field(f.cur, quoted) }
	return f
}

// Letters is how many letters were added.
func (f *Facets) Letters() int64 { return f.n }

// Add counts one letter: m as received, l as deadletter.Read read it, d what decoding said.
func (f *Facets) Add(m *client.Message, l *deadletter.Letter, d Decoded) {
	i := f.n
	f.n++
	f.slot(slotKey).set(f, i, m.Key)
	if l.ReasonKey != "" {
		f.slot(slotReason).set(f, i, l.Reason)
		f.reasonKeys[l.ReasonKey]++
	}
	for k, v := range m.Properties {
		c := f.props[k]
		if c == nil {
			if notFaceted[k] {
				continue
			}
			if f.properties >= FacetPropertyCap {
				f.extraNames[k] = true
				continue
			}
			f.properties++
			c = f.column(facetProperty + k)
			f.props[k] = c
		}
		c.set(f, i, v)
	}
	kind := PayloadNotJSON
	f.cur = i
	switch {
	case len(m.Payload) == 0:
		kind = PayloadEmpty
	case f.js.fields(m.Payload, f.addField):
		kind = PayloadJSON
	}
	f.slot(slotPayload).set(f, i, kind)
	// Without a schema a payload decodes, as "payload decodes" says: the facet agrees with the
	// expression, and its summary says how many had none.
	switch {
	case !d.Checked:
		f.slot(slotSchema).set(f, i, SchemaDecodes)
		f.unschemed++
	case d.Err == "":
		f.slot(slotSchema).set(f, i, SchemaDecodes)
	default:
		f.slot(slotSchema).set(f, i, SchemaFails)
		if _, ok := f.errors[d.Err]; ok || len(f.errors) < facetErrorCap {
			f.errors[d.Err]++
		} else {
			f.errors[""]++ // other errors
		}
	}
	f.slot(slotSize).set(f, i, sizeBucket(len(m.Payload)))
	if m.ProducerName != "" {
		f.slot(slotProducer).set(f, i, m.ProducerName)
	}
	if v := schemaVersion(m.SchemaVersion); v != "" {
		f.slot(slotVersion).set(f, i, v)
	}
	f.slot(slotPublished).set(f, i, f.hours[0].of(m.PublishTime))
	if !m.EventTime.IsZero() {
		f.slot(slotEvent).set(f, i, f.hours[1].of(m.EventTime))
	}
}

// slot is the column of fixed facet k, made on first use like any column.
func (f *Facets) slot(k int) *facetColumn {
	if f.fixed[k] == nil {
		f.fixed[k] = f.column(fixedNames[k])
	}
	return f.fixed[k]
}

func isProperty(facet string) bool {
	return len(facet) > len(facetProperty) && facet[:len(facetProperty)] == facetProperty
}

func (f *Facets) column(name string) *facetColumn {
	c := f.columns[name]
	if c == nil {
		c = &facetColumn{name: name, index: map[string]uint16{}}
		f.columns[name] = c
		f.order = append(f.order, c)
	}
	return c
}

// field marks letter i's payload as holding the top-level JSON field written quoted. Names as
// written are looked up without a copy; a form not seen yet is read (unquote) once.
func (f *Facets) field(i int64, quoted []byte) {
	bit, ok := f.fieldForms[string(quoted)]
	if !ok {
		name := unquote(quoted)
		if bit, ok = f.fieldIndex[name]; !ok {
			if len(f.fieldNames) >= FacetJSONFieldCap {
				return
			}
			bit = len(f.fieldNames)
			f.fieldIndex[name] = bit
			f.fieldNames = append(f.fieldNames, name)
		}
		if len(f.fieldForms) < 4*FacetJSONFieldCap { // escapes may spell a name many ways
			f.fieldForms[string(quoted)] = bit
		}
	}
	for int64(len(f.json)) <= i {
		f.json = append(f.json, 0)
	}
	f.json[i] |= 1 << bit
}

// sizeBuckets are the payload size buckets: a payload of n bytes is in the last bucket whose
// lower bound is ≤ n.
var sizeBuckets = []struct {
	from  int
	label string
}{
	{0, "0 B"}, {1, "1–99 B"}, {100, "100 B–1 KiB"}, {1 << 10, "1–10 KiB"}, {10 << 10, "10–100 KiB"},
	{100 << 10, "100 KiB–1 MiB"}, {1 << 20, "≥ 1 MiB"},
}

func sizeBucket(n int) string {
	label := sizeBuckets[0].label
	for _, b := range sizeBuckets {
		if n >= b.from {
			label = b.label
		}
	}
	return label
}

// schemaVersion is a schema version as the expressions read it (version=N), "" when the letter
// has none they can read.
func schemaVersion(v []byte) string {
	if n := expr.SchemaVersion(v); n >= 0 {
		return strconv.FormatInt(n, 10)
	}
	return ""
}

func hourOf(t time.Time) string {
	return t.UTC().Truncate(time.Hour).Format(time.RFC3339)
}

// facetColumn is one facet: a value per letter, first in a dictionary, then hashed.
type facetColumn struct {
	name string
	// Dictionary mode: ids[i] is letter i's value: 0 absent, 1 past the cap, k ≥ 2 values[k-2].
	ids    []uint16
	values []string
	index  map[string]uint16
	// Hash mode: hashes[i] is letter i's value's hash, 0 when absent; heavy names the values
	// seen most often (a space-saving summary).
	hashes []uint64
	heavy  *heavyValues
	// capped: no new value gets an id; letters with one count as past the cap.
	capped bool
}

const (
	idAbsent = 0
	idPast   = 1
	idFirst  = 2
)

func (c *facetColumn) hashed() bool { return c.hashes != nil }

// set records letter i's value v.
func (c *facetColumn) set(f *Facets, i int64, v string) {
	if c.hashed() {
		for int64(len(c.hashes)) < i {
			c.hashes = append(c.hashes, 0)
		}
		h := f.hash(v)
		c.hashes = append(c.hashes, h)
		c.heavy.add(h, v)
		return
	}
	for int64(len(c.ids)) < i {
		c.ids = append(c.ids, idAbsent)
	}
	id, ok := c.index[v]
	switch {
	case ok:
	case c.capped:
		id = idPast
	case len(c.values) < FacetDictionaryCap:
		id = uint16(idFirst + len(c.values))
		c.index[v] = id
		c.values = append(c.values, v)
	case f.hashed < FacetHashedCap:
		f.hashed++
		c.toHashes(f)
		c.set(f, i, v)
		return
	default:
		c.capped = true
		id = idPast
	}
	c.ids = append(c.ids, id)
}

// toHashes moves c from its dictionary to hashes.
func (c *facetColumn) toHashes(f *Facets) {
	byID := make([]uint64, len(c.values))
	for k, v := range c.values {
		byID[k] = f.hash(v)
	}
	c.hashes = make([]uint64, len(c.ids), max(2*len(c.ids), 1024))
	c.heavy = newHeavyValues(FacetHeavyCap)
	counts := make([]int64, len(c.values))
	for i, id := range c.ids {
		if id >= idFirst {
			c.hashes[i] = byID[id-idFirst]
			counts[id-idFirst]++
		}
	}
	for k, v := range c.values {
		c.heavy.addN(byID[k], v, counts[k])
	}
	c.ids, c.values, c.index = nil, nil, nil
}

// hash is v's hash, never 0 (0 marks an absent value).
func (f *Facets) hash(v string) uint64 {
	h := maphash.String(f.seed, v)
	if h == 0 {
		h = 1
	}
	return h
}

// heavyValues is a space-saving summary: the values seen most often, each with an upper bound of
// its count. Every value seen more than n/cap times, of n, is among them. The counters are a
// min-heap, so that a newcomer replaces the least counted value in O(log cap): with values
// that never repeat (a trace id per letter), every letter is a newcomer.
type heavyValues struct {
	cap   int
	heap  []heavyValue   // a min-heap by n
	index map[uint64]int // hash → position in heap
}

type heavyValue struct {
	hash uint64
	n    int64
	name string
}

func newHeavyValues(capacity int) *heavyValues {
	return &heavyValues{cap: capacity, index: map[uint64]int{}}
}

func (h *heavyValues) add(hash uint64, v string) { h.addN(hash, v, 1) }

func (h *heavyValues) addN(hash uint64, v string, n int64) {
	if i, ok := h.index[hash]; ok {
		h.heap[i].n += n
		h.down(i)
		return
	}
	if len(h.heap) < h.cap {
		h.heap = append(h.heap, heavyValue{hash: hash, n: n, name: v})
		h.index[hash] = len(h.heap) - 1
		h.up(len(h.heap) - 1)
		return
	}
	// Replace the least counted value: the newcomer inherits its count as an upper bound.
	least := h.heap[0]
	delete(h.index, least.hash)
	h.heap[0] = heavyValue{hash: hash, n: least.n + n, name: v}
	h.index[hash] = 0
	h.down(0)
}

func (h *heavyValues) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.index[h.heap[i].hash], h.index[h.heap[j].hash] = i, j
}

func (h *heavyValues) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h.heap[parent].n <= h.heap[i].n {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *heavyValues) down(i int) {
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h.heap) && h.heap[l].n < h.heap[least].n {
			least = l
		}
		if r < len(h.heap) && h.heap[r].n < h.heap[least].n {
			least = r
		}
		if least == i {
			return
		}
		h.swap(i, least)
		i = least
	}
}

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
		i := slices.Index([]string{FacetKey, FacetReason, FacetPayload, FacetSchema, FacetSize, FacetProducer,
			FacetVersion, FacetPublished, FacetEvent}, name)
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

// FacetNames are the facets `dlq stats --by` takes besides property.NAME and json.NAME.
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

// fieldSummary summarises the top-level JSON field name, bit bit of f.json.
func (f *Facets) fieldSummary(bit int, name string) FacetSummary {
	var has int64
	for _, w := range f.json {
		if w&(1<<bit) != 0 {
			has++
		}
	}
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

// count reads c's column once: the exact count of every value it can name.
func (c *facetColumn) count(n int64) valueCounts {
	var out valueCounts
	if c.hashed() {
		// Exact counts for the values the summary names, from the column.
		named := make(map[uint64]int64, len(c.heavy.heap))
		for _, hv := range c.heavy.heap {
			named[hv.hash] = 0
		}
		sorted := make([]uint64, 0, len(c.hashes))
		for _, h := range c.hashes {
			if h == 0 {
				out.absent++
				continue
			}
			if _, ok := named[h]; ok {
				named[h]++
			}
			sorted = append(sorted, h)
		}
		out.absent += n - int64(len(c.hashes))
		slices.Sort(sorted)
		for i := 0; i < len(sorted); {
			j := i + 1
			for j < len(sorted) && sorted[j] == sorted[i] {
				j++
			}
			out.distinct++
			if j-i == 1 {
				out.singles++
			}
			i = j
		}
		for h, k := range named {
			if k > 0 {
				out.values = append(out.values, valueCount{v: c.heavy.heap[c.heavy.index[h]].name, hash: h, n: k})
			}
		}
	} else {
		counts := make([]int64, len(c.values)+idFirst)
		for _, id := range c.ids {
			counts[id]++
		}
		out.absent = counts[idAbsent] + n - int64(len(c.ids))
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
