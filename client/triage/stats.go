package triage

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// Bucket names for letters without the field.
const (
	NoReason  = "(none)"
	NoOrigin  = "(unknown)"
	NoKey     = "(no key)"
	TopKeys   = 20 // how many keys Stats lists
	hourMilli = int64(time.Hour / time.Millisecond)
)

// Count is one bucket of a breakdown.
type Count struct {
	Name string `json:"name"`
	N    int64  `json:"count"`
}

// HourCount is one bar of the per-hour histogram: letters published in the hour starting at
// Hour (UTC, on the hour).
type HourCount struct {
	Hour time.Time `json:"hour"`
	N    int64     `json:"count"`
}

// ReconsumeCount is how many letters carry RECONSUMETIMES = Times (-1: absent).
type ReconsumeCount struct {
	Times int   `json:"reconsume_times"`
	N     int64 `json:"count"`
}

// Stats are the breakdowns of a scan's letters, each sorted by count (largest first, then
// by name), except ByHour (by hour) and Reconsumes (by times).
type Stats struct {
	Letters        int64            `json:"letters"`
	First          time.Time        `json:"first_published"` // zero without letters
	Last           time.Time        `json:"last_published"`
	ByReason       []Count          `json:"by_reason"`
	ByOrigin       []Count          `json:"by_origin"`
	BySubscription []Count          `json:"by_subscription"`
	TopKeys        []Count          `json:"top_keys"` // at most TopKeys
	DistinctKeys   int              `json:"distinct_keys"`
	ByHour         []HourCount      `json:"by_hour"` // every hour from First to Last, zeros included
	Reconsumes     []ReconsumeCount `json:"reconsume_times"`
}

// Tally counts letters as a scan reads them (exported for sources that count letters they
// hold themselves, such as the TUI's test fake). Keys are counted exactly: a DLQ's keys are often
// all distinct (order ids), which costs a map entry per letter but stays well inside the
// memory a million letters may take (docs/performance.md).
type Tally struct {
	n           int64
	first, last int64 // publish time, ms
	reasons     map[string]int64
	origins     map[string]int64
	subs        map[string]int64
	keys        map[string]int64
	hours       map[int64]int64
	reconsumes  map[int]int64
}

// NewTally returns an empty Tally.
func NewTally() *Tally {
	return &Tally{reasons: map[string]int64{}, origins: map[string]int64{}, subs: map[string]int64{},
		keys: map[string]int64{}, hours: map[int64]int64{}, reconsumes: map[int]int64{}}
}

// Add counts one letter.
func (t *Tally) Add(key string, published time.Time, l *deadletter.Letter) {
	t.n++
	ms := published.UnixMilli()
	if t.n == 1 || ms < t.first {
		t.first = ms
	}
	if t.n == 1 || ms > t.last {
		t.last = ms
	}
	t.reasons[or(l.Reason, NoReason)]++
	t.origins[or(l.Origin, NoOrigin)]++
	t.subs[or(l.Subscription, NoOrigin)]++
	t.keys[or(key, NoKey)]++
	t.hours[floorDiv(ms, hourMilli)]++
	t.reconsumes[l.Reconsumes]++
}

func or(v, none string) string {
	if v == "" {
		return none
	}
	return v
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Stats are the breakdowns of the letters counted.
func (t *Tally) Stats() Stats {
	s := Stats{Letters: t.n, DistinctKeys: len(t.keys)}
	if t.n == 0 {
		return s
	}
	s.First, s.Last = time.UnixMilli(t.first).UTC(), time.UnixMilli(t.last).UTC()
	s.ByReason = sorted(t.reasons, 0)
	s.ByOrigin = sorted(t.origins, 0)
	s.BySubscription = sorted(t.subs, 0)
	s.TopKeys = sorted(t.keys, TopKeys)
	for h := floorDiv(t.first, hourMilli); h <= floorDiv(t.last, hourMilli); h++ {
		s.ByHour = append(s.ByHour, HourCount{Hour: time.UnixMilli(h * hourMilli).UTC(), N: t.hours[h]})
	}
	for _, times := range slices.Sorted(maps.Keys(t.reconsumes)) {
		s.Reconsumes = append(s.Reconsumes, ReconsumeCount{Times: times, N: t.reconsumes[times]})
	}
	return s
}

// sorted lists m by count, largest first, then by name; limit > 0 keeps that many, chosen
// without sorting everything (a million distinct keys).
func sorted(m map[string]int64, limit int) []Count {
	byCount := func(a, b Count) int {
		if c := cmp.Compare(b.N, a.N); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	}
	if limit <= 0 || len(m) <= limit {
		out := make([]Count, 0, len(m))
		for k, v := range m {
			out = append(out, Count{k, v})
		}
		slices.SortFunc(out, byCount)
		return out
	}
	// Keep the best limit seen so far, sorted; most keys fall below the last and cost one
	// comparison.
	top := make([]Count, 0, limit+1)
	for k, v := range m {
		c := Count{k, v}
		if len(top) == limit && byCount(c, top[limit-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, c, byCount)
		top = slices.Insert(top, i, c)
		if len(top) > limit {
			top = top[:limit]
		}
	}
	return top
}
