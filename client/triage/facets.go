package triage

import (
	"bytes"
	"hash/maphash"
	"strconv"
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
//   - A facet starts as a dictionary of at most FacetDictionaryCap distinct values: one byte
//     per letter while it holds fewer than 254, two after.
//   - Past that (keys, ids carried in properties) it switches to hashes, eight bytes per letter,
//     and names its most frequent values with a small summary (heavyValues): every value with
//     more than 1/FacetHeavyCap of the letters is among them, and the counts shown for them are
//     exact, counted from the column. Distinct and single-letter values are counted exactly
//     once the letters are in, from a sorted copy of the column.
//   - At most FacetHashedCap facets switch to hashes; past that a facet keeps counting the
//     values it already tracks exactly and counts every letter with a newer value as "past the
//     cap", so that its summary says "≥" instead of dropping letters silently.
//   - The top-level JSON fields of a payload are a set of bits, and a letter keeps the id of
//     its set among those seen (fieldSets): one or two bytes.
//
// Columns grow in chunks (chunked.go), never by copying themselves. A million letters with
// a dozen facets, two of them hashed, take about 30 MB.
//
// Facets are used by one goroutine at a time (a scan's facetFeed while it counts).
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
	// fields holds each letter's top-level JSON fields as bits of fieldNames.
	fields     fieldSets
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
	fixed [fixedFacets]*facetColumn
	props map[string]*facetColumn // by property name
	js    jsonScanner
	mask  uint64 // the fields of the payload Add reads, for addField
	// fieldAt are the bits of the fields of the last payload, in order: the payloads of a DLQ
	// mostly name the same fields in the same order, which a comparison finds for less than
	// a lookup. at is the field of the payload Add reads.
	fieldAt  []int
	at       int
	addField func([]byte) // f.field, made once
	hours    [2]hourText  // published, event
}

// fixedFacets are the facets every letter may have, by slot: FacetNames' order.
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
	f.addField = f.field
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
	f.mask, f.at = 0, 0
	switch {
	case len(m.Payload) == 0:
		kind = PayloadEmpty
	case f.js.fields(m.Payload, f.addField):
		kind = PayloadJSON
		f.fields.set(i, f.mask)
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
		f.fixed[k] = f.column(FacetNames[k])
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

// field marks the payload Add reads as holding the top-level JSON field written quoted. Names
// as written are looked up without a copy; a form not seen yet is read (unquote) once.
func (f *Facets) field(quoted []byte) {
	at := f.at
	f.at++
	if at < len(f.fieldAt) {
		// The same name as the last payload's here, written without escapes: the same field.
		bit := f.fieldAt[at]
		name := f.fieldNames[bit]
		if len(quoted) == len(name)+2 && string(quoted[1:len(quoted)-1]) == name && bytes.IndexByte(quoted, '\\') < 0 {
			f.mask |= 1 << bit
			return
		}
	}
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
	f.mask |= 1 << bit
	if at < len(f.fieldAt) {
		f.fieldAt[at] = bit
	} else if at == len(f.fieldAt) && at < FacetJSONFieldCap {
		f.fieldAt = append(f.fieldAt, bit)
	}
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
