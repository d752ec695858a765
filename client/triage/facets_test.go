package triage

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/expr"
)

// incident builds the letters of the incident issue 30 describes, at 1/10 scale: 8,900 letters
// of one region whose downstream was down, 900 with an empty or UNKNOWN key, 100 whose payload
// is not JSON, interleaved as they would arrive.
func incident(t testing.TB) []*client.Message {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	others := []string{"us-east", "us-west", "ap-south", "ap-east", "sa", "af", "me", "ca"}
	start := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	var out []*client.Message
	for i := range 9900 {
		m := &client.Message{
			Key: "order-" + strconv.Itoa(i),
			Properties: map[string]string{
				client.PropertyRealTopic:       "persistent://public/default/orders",
				client.PropertyOriginMessageID: fmt.Sprintf("5:%d:-1", i),
				"tenant":                       []string{"acme", "globex"}[rng.IntN(2)],
			},
			Payload:      []byte(`{"order":` + strconv.Itoa(i) + `,"sku":"A-1"}`),
			PublishTime:  start.Add(time.Duration(i) * 200 * time.Millisecond),
			ProducerName: "orders-billing-c1-abcde-DLQ",
		}
		region := others[rng.IntN(len(others))]
		switch {
		case i%99 == 7: // 100 poison payloads
			m.Payload = []byte("<xml>not json</xml>")
		case i%11 == 3: // 900 keys empty or UNKNOWN
			m.Key = []string{"", "UNKNOWN"}[i%2]
		default:
			region = "eu"
		}
		m.Properties["region"] = region
		out = append(out, m)
	}
	return out
}

func facetsOf(msgs []*client.Message) *Facets {
	f := NewFacets()
	for _, m := range msgs {
		l := deadletter.Read(m.Properties, m.ProducerName)
		f.Add(m, &l, Decoded{})
	}
	return f
}

func TestCausesOfTheIncident(t *testing.T) {
	msgs := incident(t)
	f := facetsOf(msgs)
	split := f.Causes()
	var got []string
	for _, g := range split.Groups {
		got = append(got, fmt.Sprintf("%d %s", g.Letters, g.Label))
	}
	want := []string{"8900 property region=eu", "900 key empty or UNKNOWN", "100 payload not JSON"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("groups %q, want %q (rest %d)", got, want, split.Rest.Letters)
	}
	if split.Rest.Letters != 0 {
		t.Errorf("rest %d letters, want 0", split.Rest.Letters)
	}
	for _, g := range split.Groups {
		t.Logf("%6d  %-28s  %s", g.Letters, g.Label, g.Expr)
	}
	for _, c := range split.Common {
		t.Logf("common: %s (%d)", c.Value, c.Letters)
	}
}

// TestCausesIgnoreNoise: values spread evenly over the letters (partitions, shards, ids,
// hours) set nothing apart, so they are never offered as causes, whether alone, beside the
// incident's causes, or in a DLQ of a few letters, where each id would pass the share a cause
// needs.
func TestCausesIgnoreNoise(t *testing.T) {
	noisy := func(msgs []*client.Message) {
		for i, m := range msgs {
			m.Properties["partition"] = strconv.Itoa(i % 4)
			m.Properties["shard"] = strconv.Itoa(i * 7 % 100)
			m.Properties["traceparent"] = fmt.Sprintf("00-%032x-01", i)
		}
	}
	groups := func(split CauseSplit) []string {
		var got []string
		for _, g := range split.Groups {
			got = append(got, fmt.Sprintf("%d %s", g.Letters, g.Label))
		}
		return got
	}
	msgs := incident(t)
	noisy(msgs)
	want := []string{"8900 property region=eu", "900 key empty or UNKNOWN", "100 payload not JSON"}
	if got := groups(facetsOf(msgs).Causes()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the incident with noise: groups %q, want %q", got, want)
	}
	for _, n := range []int{20, 150, 9900} {
		msgs := incident(t)[:n]
		for i, m := range msgs {
			m.Key = "order-" + strconv.Itoa(i)
			m.Payload = []byte(`{"order":1}`)
			m.Properties["region"] = []string{"eu", "us", "ap"}[i%3]
		}
		noisy(msgs)
		if split := facetsOf(msgs).Causes(); len(split.Groups) != 0 || split.Rest.Letters != int64(n) {
			t.Errorf("%d letters of noise: groups %q, rest %d; want none", n, groups(split), split.Rest.Letters)
		}
	}
}

func TestCausesNameReasonsFirst(t *testing.T) {
	msgs := incident(t)
	for i, m := range msgs {
		m.Properties["failureReason"] = []string{"timeout", "timeout", "bad sku"}[i%3]
	}
	split := facetsOf(msgs).Causes()
	if len(split.Groups) < 2 || split.Groups[0].Label != "reason timeout" || split.Groups[1].Label != "reason bad sku" {
		t.Fatalf("groups %+v, want the two reasons first", split.Groups)
	}
	if split.Groups[0].Letters != 6600 || split.Groups[1].Letters != 3300 {
		t.Errorf("reason groups %d / %d letters, want 6600 / 3300", split.Groups[0].Letters, split.Groups[1].Letters)
	}
}

func TestFacetSummaries(t *testing.T) {
	msgs := incident(t)
	f := facetsOf(msgs)
	byName := map[string]FacetSummary{}
	for _, s := range f.Summary() {
		byName[s.Name] = s
	}
	key := byName[FacetKey]
	if key.Distinct != 9000+2 || key.Singles != 9000 {
		t.Errorf("key: %d distinct, %d singles; want 9002 and 9000", key.Distinct, key.Singles)
	}
	if len(key.Values) != 2 || key.Values[0].Letters != 450 || key.Values[1].Letters != 450 {
		t.Errorf("key values %+v, want \"\" and UNKNOWN with 450 each", key.Values)
	}
	if _, ok := byName["property."+client.PropertyOriginMessageID]; ok {
		t.Error("ORIGIN_MESSAGE_ID is a facet; it differs on every letter by construction")
	}
	payload := byName[FacetPayload]
	if len(payload.Values) != 2 || payload.Values[0].Value != PayloadJSON || payload.Values[0].Letters != 9800 ||
		payload.Values[1].Letters != 100 {
		t.Errorf("payload values %+v, want json 9800, not json 100", payload.Values)
	}
	sku := byName["json.sku"]
	if len(sku.Values) != 2 || sku.Values[0].Letters != 9800 || sku.Values[1].Letters != 100 {
		t.Errorf("json.sku %+v, want present 9800, missing 100", sku.Values)
	}
}

// TestFacetsPastTheDictionary: a facet with more distinct values than its dictionary holds
// switches to hashes and still counts its heavy values, distinct values and singles exactly,
// whenever the heavy values first appear.
func TestFacetsPastTheDictionary(t *testing.T) {
	f := NewFacets()
	const n = 3 * FacetDictionaryCap
	for i := range n {
		key := "k" + strconv.Itoa(i)
		if i > FacetDictionaryCap+100 && i%10 == 0 {
			key = "LATE" // first seen after the switch
		}
		m := &client.Message{Key: key, Payload: []byte("x"), PublishTime: time.Unix(0, 0)}
		l := deadletter.Read(nil, "")
		f.Add(m, &l, Decoded{})
	}
	var key FacetSummary
	for _, s := range f.Summary() {
		if s.Name == FacetKey {
			key = s
		}
	}
	late := 0
	for i := FacetDictionaryCap + 101; i < n; i++ {
		if i%10 == 0 {
			late++
		}
	}
	if len(key.Values) == 0 || key.Values[0].Value != "LATE" || key.Values[0].Letters != int64(late) {
		t.Fatalf("key values %+v, want LATE with %d letters first", key.Values, late)
	}
	if key.Singles != int64(n-late) || key.Distinct != int64(n-late+1) || key.DistinctAtLeast {
		t.Errorf("key: %d distinct (at least: %v), %d singles; want %d and %d exactly", key.Distinct,
			key.DistinctAtLeast, key.Singles, n-late+1, n-late)
	}
}

// TestCauseExpressionsSelectTheirGroups: each group's expression, and rest's, parsed and
// matched against the letters, selects exactly the letters the group counts; so does every
// facet value's.
func TestCauseExpressionsSelectTheirGroups(t *testing.T) {
	msgs := incident(t)
	f := facetsOf(msgs)
	split := f.Causes()
	count := func(text string) int64 {
		e, err := expr.Parse(text, time.Now())
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		var n int64
		for _, m := range msgs {
			subject := expr.FromClient(m)
			subject.Decode = func() error { return nil } // no schema: every payload decodes
			if e.Match(&subject) {
				n++
			}
		}
		return n
	}
	var sum int64
	for _, g := range append(split.Groups, split.Rest) {
		if g.Expr == "" {
			continue
		}
		if n := count(g.Expr); n != g.Letters {
			t.Errorf("%s: %s selects %d letters, the group counts %d", g.Label, g.Expr, n, g.Letters)
		}
		sum += g.Letters
	}
	if sum != int64(len(msgs)) {
		t.Errorf("groups and rest add up to %d letters, want %d", sum, len(msgs))
	}
	for _, s := range f.Summary() {
		for _, v := range s.Values {
			if n := count(v.Expr); n != v.Letters {
				t.Errorf("%s %q: %s selects %d letters, the facet counts %d", s.Name, v.Value, v.Expr, n, v.Letters)
			}
		}
	}
}

// TestPayloadKindAgreesWithTheGrammar: the payload facet's "json" is what "payload is json"
// selects, edge cases included, and the fields it names are those "has json.NAME" finds.
func TestPayloadKindAgreesWithTheGrammar(t *testing.T) {
	isJSON, err := expr.Parse("payload is json", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{``, ` `, `{}`, ` {} `, "{}\n", `1 2`, `{}x`, `"a"`, `nul`, `null`, `[1,]`, `[1]`,
		`{"a":1,"b":{"c":[1,2,{"d":"}"}]},"e\"f":"x","g.h":true}`, `{"a":1}{"b":2}`, "\xff", `{"a":"\u00e9"}`} {
		var names []string
		got := (&jsonScanner{}).fields([]byte(p), func(q []byte) { names = append(names, unquote(q)) })
		subject := expr.Message{Payload: []byte(p)}
		if want := isJSON.Match(&subject); got != want {
			t.Errorf("%q: facet says JSON %v, the grammar %v", p, got, want)
		}
		for _, n := range names {
			e, err := expr.Parse("has json."+expr.QuotePathKey(n), time.Now())
			if err != nil {
				t.Fatalf("field %q: %v", n, err)
			}
			if !e.Match(&subject) {
				t.Errorf("%q: facet names field %q, which has json does not find", p, n)
			}
		}
	}
}

// The summary keeps every value seen more than n/k times among n, however many values seen
// once come between them, and never counts one above its true count nor below it by more than
// n/k.
func TestHeavyValuesKeepTheHeavy(t *testing.T) {
	const k = 16
	h := newHeavyValues(k)
	rng := rand.New(rand.NewPCG(3, 4))
	truth := map[uint64]int64{}
	const n = 20_000
	for i := range n {
		v := uint64(1_000 + i) // once each
		if rng.IntN(4) == 0 {
			v = uint64(rng.IntN(3)) // three heavy values, about n/12 each
		}
		truth[v]++
		h.add(v, strconv.FormatUint(v, 10))
		if len(h.entries) >= 2*k {
			t.Fatalf("%d counters, want fewer than %d", len(h.entries), 2*k)
		}
	}
	for v, c := range truth {
		name, kept := h.name(v)
		if c > n/k && !kept {
			t.Errorf("value %d seen %d times of %d: not kept", v, c, n)
		}
		var got int64
		if s, found := h.find(v); found {
			got = h.entries[h.slots[s]-1].n
		}
		if kept && (got > c || got < c-n/k) {
			t.Errorf("value %d: counted %d, seen %d", v, got, c)
		}
		if kept && name != strconv.FormatUint(v, 10) {
			t.Errorf("value %d named %q", v, name)
		}
	}
}

// BenchmarkFacetsAdd counts the facets of letters like the bench's scan part: 1 KiB JSON
// orders, a key of 100,000 customers, a unique trace id, a reason of five, REAL_TOPIC and
// RECONSUMETIMES.
func BenchmarkFacetsAdd(b *testing.B) {
	msgs := make([]*client.Message, 4096)
	for i := range msgs {
		payload := fmt.Appendf(nil, `{"order_id":"o-%d","customer":"customer-%d","amount_cents":%d,"currency":"EUR","lines":[{"sku":"SKU-%d","qty":%d}],"note":"`,
			i, i*7919%100_000, 100+i*37%90_000, i%5000, 1+i%7)
		for len(payload) < 1022 {
			payload = append(payload, "lorem ipsum "[len(payload)%12])
		}
		msgs[i] = &client.Message{Key: fmt.Sprintf("customer-%d", i*7919%100_000), Payload: append(payload, `"}`...),
			PublishTime: time.Unix(1_780_000_000+int64(i), 0), ProducerName: "orders-billing-wk3ab-x4q9m-DLQ",
			Properties: map[string]string{"content-type": "application/json", "traceparent": fmt.Sprintf("00-%032x-01", i),
				"reason":                 []string{"declined", "timeout", "not found", "schema", "npe"}[i%5],
				client.PropertyRealTopic: "persistent://public/default/orders-partition-" + strconv.Itoa(i%4), client.PropertyReconsumeTimes: "3"}}
	}
	letters := make([]deadletter.Letter, len(msgs))
	for i, m := range msgs {
		letters[i] = deadletter.Read(m.Properties, m.ProducerName)
	}
	f := NewFacets()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := i % len(msgs)
		if i > 0 && k == 0 {
			// Unique trace ids, as in a real DLQ: the next round's are new.
			for _, m := range msgs {
				m.Properties["traceparent"] = fmt.Sprintf("00-%032x-01", i+int(m.PublishTime.Unix()))
			}
		}
		f.Add(msgs[k], &letters[k], Decoded{})
	}
}
