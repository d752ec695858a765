package triage

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// TestFacetsCountExactlyAcrossChunks: over more letters than two chunks hold, with a property
// first seen in the second chunk, one absent from a whole chunk, one of a value for whole
// chunks but a letter, a dictionary past one byte an id, a facet switched to hashes (with a
// chunk of one value) and JSON fields in any order and spelling, every value a summary lists
// is counted exactly, and the letters of each value and of none are exactly those Causes is
// given.
func TestFacetsCountExactlyAcrossChunks(t *testing.T) {
	const n = 2*chunkLen + 1234
	rng := rand.New(rand.NewPCG(7, 8))
	f := NewFacets()
	want := map[string]map[string]int64{} // facet → value → letters ("" key for absent)
	count := func(facet, v string) {
		if want[facet] == nil {
			want[facet] = map[string]int64{}
		}
		want[facet][v]++
	}
	has := make([]map[string]string, n) // each letter's properties, for the sets
	for i := range n {
		props := map[string]string{}
		if i%7 == 0 && (i/chunkLen)%2 == 0 {
			props["sparse"] = "s" + strconv.Itoa(i%3)
		}
		if i%3 != 0 {
			props["trace"] = fmt.Sprintf("t-%d", i)
		}
		if i >= 2*chunkLen {
			props["trace"] = "T" // the last chunk of a hashed column is one value
		}
		if i >= chunkLen+1000 && i < chunkLen+1100 {
			props["burst"] = "x"
		}
		switch { // one value for whole chunks, another once in one, none after a while in the last
		case i == chunkLen+500:
			props["mostly"] = "odd"
		case i < 2*chunkLen+600:
			props["mostly"] = "m"
		}
		props["wide"] = "w" + strconv.Itoa(i%300)
		if i%5000 == 17 {
			props["wide"] = "HEAVY" // a value both past the first byte of ids and among many
		}
		for _, name := range []string{"sparse", "trace", "burst", "mostly", "wide"} {
			if v, ok := props[name]; ok {
				count("property."+name, v)
			} else {
				count("property."+name, "\x00absent")
			}
		}
		has[i] = props
		fields := []string{`"a":1`, `"b":[2]`, `"c":{"d":3}`, `"\u0061x":4`}
		rng.Shuffle(len(fields), func(a, b int) { fields[a], fields[b] = fields[b], fields[a] })
		fields = fields[:rng.IntN(len(fields)+1)]
		payload := "{"
		for k, fl := range fields {
			if k > 0 {
				payload += ","
			}
			payload += fl
		}
		payload += "}"
		if i%11 == 0 {
			payload = "not json"
		}
		for _, name := range []string{"a", "b", "c", "ax"} {
			present := false
			for _, fl := range fields {
				present = present || (payload != "not json" && (fl[1:len(name)+2] == name+`"` || (name == "ax" && fl[1] == '\\')))
			}
			if present {
				count("json."+name, "present")
			} else {
				count("json."+name, "\x00absent")
			}
		}
		m := &client.Message{Key: "k", Payload: []byte(payload), PublishTime: time.Unix(0, 0), Properties: props}
		l := deadletter.Read(props, "")
		f.Add(m, &l, Decoded{})
	}
	for facet, values := range want {
		s := f.Facet(facet)
		if len(s.Values) == 0 {
			t.Errorf("%s: no values", facet)
		}
		for _, v := range s.Values {
			key := v.Value
			if v.Absent {
				key = "\x00absent"
			}
			if values[key] != v.Letters {
				t.Errorf("%s %q: counted %d letters, want %d", facet, v.Value, v.Letters, values[key])
			}
		}
		distinct := int64(len(values))
		if _, ok := values["\x00absent"]; ok {
			distinct--
		}
		if facet != "json.a" && facet != "json.b" && facet != "json.c" && facet != "json.ax" && s.Distinct != distinct {
			t.Errorf("%s: %d distinct values, want %d", facet, s.Distinct, distinct)
		}
	}
	if c := f.columns["property.trace"]; c == nil || !c.hashed() {
		t.Fatal("property.trace was not switched to hashes")
	}
	if c := f.columns["property.wide"]; c == nil || !c.ids.isWide {
		t.Fatal("property.wide does not keep two bytes an id")
	}
	// The sets Causes works on: the letters with each of the most frequent values, and those
	// without any.
	for _, name := range []string{"sparse", "trace", "burst", "mostly", "wide"} {
		col := f.columns["property."+name]
		vc := col.count(f.n)
		marks := []valueCount{{}}
		marks = append(marks, vc.values[:min(len(vc.values), 5)]...)
		for k, v := range marks {
			b := newBitset(f.n, false)
			col.mark(b, f.n, v, k == 0)
			for i, props := range has {
				got, present := props[name]
				if in := b[i/64]&(1<<(i%64)) != 0; in != (k == 0 && !present || k > 0 && present && got == v.v) {
					t.Fatalf("property %s, value %q (absent: %v): letter %d (%q) in the set: %v", name, v.v, k == 0, i, got, in)
				}
			}
		}
	}
	cands, _ := f.candidates(1)
	for _, c := range cands {
		if got := c.bits.count(); got != c.n {
			t.Errorf("%s: %d letters in its set, it counts %d", c.label, got, c.n)
		}
	}
}
