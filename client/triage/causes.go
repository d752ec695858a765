package triage

import (
	"cmp"
	"slices"
	"strings"
)

// Causes split a selection of letters into at most MaxCauses groups that explain it, each
// described by the one or two facet values that set it apart, and "rest", what none of them
// covers. The rule (docs/dead-letters.md, "Causes"), a greedy choice:
//
//  1. Candidates are facet values (a key, a property's value or its absence, a payload kind,
//     decoding, a JSON field's presence or absence, a size bucket, a producer, a schema
//     version, an hour) held by at least MinCauseShare of the letters and by fewer than
//     CommonShare of them: a value nearly every letter has sets nothing apart; it is reported
//     as common instead. A payload that is JSON or decodes says nothing went wrong: never a
//     cause. A value of an open facet (openFacet) must also stand out from the facet's other
//     values by CauseStandOut (standsOut): letters spread evenly over partitions, shards or ids
//     are noise.
//  2. When letters carry a reason property, each reason held by enough letters is a group
//     first, most letters first.
//  3. Then, while groups are fewer than MaxCauses and enough letters are unexplained, the group
//     is the candidate P (a value; two values of one facet not used yet, either of them; or two
//     values of different facets, both) that covers the most unexplained letters while being rare
//     among the letters already explained: the score is c²/|P|, c the unexplained letters P
//     covers. A combination must score a tenth more than the best single value to be chosen.
//  4. Each group's expression excludes the groups before it (… and not (…)) but those made of
//     other values of its own facet, which no letter can share, so groups are disjoint and
//     their counts, with rest, add up to the selection; each count is what the expression
//     selects.
type CauseSplit struct {
	Letters int64   `json:"letters"`
	Groups  []Cause `json:"groups"`
	// Rest is what no group covers (Letters 0 when they cover every letter).
	Rest Cause `json:"rest"`
	// Common are the values at least CommonShare of the letters share.
	Common []FacetValue `json:"common"`
}

// Cause is one group.
type Cause struct {
	Label   string `json:"label"`
	Expr    string `json:"expr"`
	Letters int64  `json:"letters"`
}

// The parameters of the rule above.
const (
	MaxCauses     = 5
	MinCauseShare = 0.005
	CommonShare   = 0.95
	// CauseStandOut is how many times the letters of an average other value of its facet a
	// value of an open facet must have to be a candidate.
	CauseStandOut = 3
	// maxCandidates bounds the values considered (each costs a bit per letter).
	maxCandidates = 96
	// pairsOf is how many of the best singles of a step are combined in pairs.
	pairsOf = 24
)

// candidate is a facet value and the letters that have it.
type candidate struct {
	facet string
	value string
	// absent: the letters without the facet.
	absent bool
	expr   string
	label  string
	bits   bitset
	n      int64
	// standsOut: the value stands out from its facet's other values (standsOut).
	standsOut bool
	// mark sets the candidate's letters in a set, until bits is made.
	mark func(bitset)
}

// Causes splits the letters f counted.
func (f *Facets) Causes() CauseSplit {
	out := CauseSplit{Letters: f.n}
	if f.n == 0 {
		return out
	}
	minGroup := max(int64(1), int64(float64(f.n)*MinCauseShare+0.999))
	cands, common := f.candidates(minGroup)
	out.Common = common
	rest := newBitset(f.n, true)
	left := f.n
	var chosen []group // the groups so far
	used := map[string]bool{}
	add := func(g group) {
		n := g.bits.andCount(rest)
		// Exclude the groups before, but those that cannot overlap by construction: other
		// values of the same facet (a letter has one value of each facet).
		var before []string
		for _, c := range chosen {
			if !g.disjoint(c) {
				before = append(before, c.expr)
			}
		}
		cause := Cause{Label: g.label, Expr: g.expr, Letters: n}
		if len(before) > 0 {
			cause.Expr = exprAnd(g.expr, exprNot(exprOr(before...)))
		}
		out.Groups = append(out.Groups, cause)
		chosen = append(chosen, g)
		rest.clear(g.bits)
		left -= n
		for _, fc := range g.facets {
			used[fc] = true
		}
	}
	// Reasons first.
	for _, c := range cands {
		if c.facet == FacetReason && !c.absent && len(out.Groups) < MaxCauses && c.bits.andCount(rest) >= minGroup {
			add(c.group())
		}
	}
	for len(out.Groups) < MaxCauses && left >= minGroup {
		best, ok := f.bestGroup(cands, rest, used, minGroup)
		if !ok {
			break
		}
		add(best)
	}
	// Rest is the selection when no group was found: its expression is then empty.
	out.Rest = Cause{Label: "rest", Letters: left}
	if left > 0 && len(chosen) > 0 {
		all := make([]string, len(chosen))
		for i, c := range chosen {
			all[i] = c.expr
		}
		out.Rest.Expr = exprNot(exprOr(all...))
	}
	return out
}

// group is a group chosen, or a choice of step 3.
type group struct {
	label, expr string
	bits        bitset
	facets      []string
	// values are the facet's values the group is made of when it is made of one facet's
	// values (one, or two either of which), nil otherwise; "" stands for the letters without it.
	values []string
	score  float64
}

// group is the group of c's letters.
func (c *candidate) group() group {
	return group{label: c.label, expr: c.expr, bits: c.bits, facets: []string{c.facet}, values: []string{c.valueKey()}}
}

// valueKey is c's value, "" for the letters without the facet.
func (c *candidate) valueKey() string {
	if c.absent {
		return ""
	}
	return "=" + c.value
}

// disjoint reports whether g and o cannot share a letter by construction: each is values of
// one facet, the same, and they have no value in common.
func (g group) disjoint(o group) bool {
	if g.values == nil || o.values == nil || g.facets[0] != o.facets[0] {
		return false
	}
	for _, v := range g.values {
		if slices.Contains(o.values, v) {
			return false
		}
	}
	return true
}

func (f *Facets) bestGroup(cands []*candidate, rest bitset, used map[string]bool, minGroup int64) (group, bool) {
	commonAt := int64(float64(f.n) * CommonShare)
	type scored struct {
		c     *candidate
		cover int64
		score float64
	}
	score := func(cover, size int64) float64 {
		if size == 0 {
			return 0
		}
		return float64(cover) * float64(cover) / float64(size)
	}
	var singles []scored
	for _, c := range cands {
		if c.facet == FacetReason && !c.absent {
			continue // step 2 took them
		}
		cover := c.bits.andCount(rest)
		if cover >= minGroup {
			singles = append(singles, scored{c, cover, score(cover, c.n)})
		}
	}
	if len(singles) == 0 {
		return group{}, false
	}
	slices.SortStableFunc(singles, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	top := singles[0]
	best := top.c.group()
	best.score = top.score
	bar := top.score * 1.1
	// The pairs are counted without making their sets: only the one chosen is made.
	var pairA, pairB *candidate
	pool := singles[:min(len(singles), pairsOf)]
	for i, a := range pool {
		for _, b := range pool[i+1:] {
			var size, cover int64
			if a.c.facet == b.c.facet {
				if used[a.c.facet] || a.c.absent || b.c.absent {
					continue
				}
				both := a.c.bits.andCount(b.c.bits)
				size = a.c.n + b.c.n - both
				cover = a.cover + b.cover - andCount3(a.c.bits, b.c.bits, rest)
			} else {
				size = a.c.bits.andCount(b.c.bits)
				cover = andCount3(a.c.bits, b.c.bits, rest)
			}
			if cover < minGroup || size >= commonAt {
				continue // too few, or so many that it sets nothing apart
			}
			if s := score(cover, size); s > bar && s > best.score {
				best.score, pairA, pairB = s, a.c, b.c
			}
		}
	}
	if pairA != nil {
		best = pair(pairA, pairB, best.score)
	}
	return best, true
}

// pair is the group of two candidates: either of two values of one facet, or both of two
// facets' values.
func pair(a, b *candidate, score float64) group {
	if a.facet == b.facet {
		return group{label: orLabel(a, b), expr: exprOr(a.expr, b.expr), facets: []string{a.facet},
			values: []string{a.valueKey(), b.valueKey()}, bits: a.bits.or(b.bits), score: score}
	}
	return group{label: a.label + " and " + b.label, expr: exprAnd(a.expr, b.expr), facets: []string{a.facet, b.facet},
		bits: a.bits.and(b.bits), score: score}
}

// orLabel labels two values of one facet held together: "key empty or UNKNOWN", "property
// region=eu or us".
func orLabel(a, b *candidate) string {
	second := strings.TrimPrefix(b.label, facetLabel(b.facet))
	second = strings.TrimPrefix(strings.TrimSpace(second), "=")
	return a.label + " or " + second
}

// candidates lists the values of step 1, most letters first, and the common ones.
func (f *Facets) candidates(minGroup int64) ([]*candidate, []FacetValue) {
	var cands []*candidate
	var common []FacetValue
	commonAt := int64(float64(f.n) * CommonShare)
	consider := func(c *candidate, mark func(bitset)) {
		switch {
		case c.n >= commonAt && c.n > 0:
			common = append(common, FacetValue{Value: c.label, Absent: c.absent, Letters: c.n, Expr: c.expr})
		case c.n >= minGroup && !healthy(c) && c.standsOut:
			c.mark = mark
			cands = append(cands, c)
		}
	}
	for _, col := range f.order {
		vc := col.count(f.n)
		for _, v := range vc.values {
			if v.n < minGroup {
				break
			}
			c := &candidate{facet: col.name, value: v.v, n: v.n, expr: exprIs(col.name, v.v), label: valueLabel(col.name, v.v),
				standsOut: standsOut(col.name, vc, f.n, v.n)}
			if col.name == FacetSchema && v.v == SchemaFails {
				c.label = f.failLabel()
			}
			consider(c, func(b bitset) { col.mark(b, f.n, v, false) })
		}
		if vc.absent >= minGroup && col.name != FacetKey && col.name != FacetSchema {
			c := &candidate{facet: col.name, absent: true, n: vc.absent, expr: exprAbsent(col.name), label: absentLabel(col.name),
				standsOut: true}
			consider(c, func(b bitset) { col.mark(b, f.n, valueCount{}, true) })
		}
	}
	for bit, name := range f.fieldNames {
		n := f.fields.has(f.n, bit)
		facet := facetJSON + name
		consider(&candidate{facet: facet, value: "present", n: n, expr: exprHas(facet), label: "JSON field " + name + " present",
			standsOut: true}, func(b bitset) { f.fields.mark(b, f.n, bit) })
		consider(&candidate{facet: facet, absent: true, n: f.n - n, expr: exprNot(exprHas(facet)), label: "JSON field " + name + " missing",
			standsOut: true}, func(b bitset) {
			f.fields.mark(b, f.n, bit)
			b.invert(f.n)
		})
	}
	slices.SortStableFunc(cands, func(a, b *candidate) int { return cmp.Compare(b.n, a.n) })
	if len(cands) > maxCandidates {
		// Reasons are kept whatever their count: step 2 names them all.
		kept := cands[:maxCandidates:maxCandidates]
		for _, c := range cands[maxCandidates:] {
			if c.facet == FacetReason {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	// Only the candidates kept get their set of letters.
	for _, c := range cands {
		c.bits = newBitset(f.n, false)
		c.mark(c.bits)
		c.mark = nil
	}
	slices.SortStableFunc(common, func(a, b FacetValue) int { return cmp.Compare(b.Letters, a.Letters) })
	return cands, common
}

// openFacet reports whether facet's values are whatever anyone wrote (keys, properties,
// producers, schema versions, hours) rather than categories of ours: values spread over
// partitions, shards, customers, ids or hours name no cause unless one stands out.
func openFacet(facet string) bool {
	switch facet {
	case FacetPayload, FacetSchema, FacetSize, FacetReason:
		return false
	}
	return true
}

// standsOut reports whether a value of facet held by n letters stands out from the facet's
// other values: held by at least CauseStandOut times the letters of an average one (the
// letters without the facet aside). A facet's only value stands out; so does every value of
// the facets whose values are fixed categories (payload kind, decoding, size) and reasons.
func standsOut(facet string, vc *valueCounts, letters, n int64) bool {
	if !openFacet(facet) || vc.distinct <= 1 {
		return true
	}
	others := float64(letters-vc.absent-n) / float64(vc.distinct-1)
	return float64(n) >= CauseStandOut*others
}

// healthy reports whether c is a value that says nothing went wrong with a letter, so that it
// names no cause: a payload that is JSON, or that decodes with its schema.
func healthy(c *candidate) bool {
	return !c.absent && ((c.facet == FacetPayload && c.value == PayloadJSON) || (c.facet == FacetSchema && c.value == SchemaDecodes))
}

// failLabel is "does not decode: ERROR", with the most common decoder error.
func (f *Facets) failLabel() string {
	errs := sorted(f.errors, 0)
	if len(errs) == 0 || errs[0].Name == "" {
		return "does not decode"
	}
	l := "does not decode: " + errs[0].Name
	if len(errs) > 1 {
		l += " (and other errors)"
	}
	return l
}

// mark sets in b the letters, of the first n, whose value is v (absent: that have none).
func (c *facetColumn) mark(b bitset, n int64, v valueCount, absent bool) {
	switch {
	case c.hashed() && absent:
		markHashes(&c.hashes, b, n, 0)
	case c.hashed():
		markHashes(&c.hashes, b, n, v.hash)
	default:
		want := make([]bool, len(c.values)+idFirst)
		if absent {
			want[idAbsent] = true
		} else {
			want[v.id] = true
		}
		c.ids.mark(b, n, want)
	}
}
