package cli

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// A preview scans everything the DLQ retains (triage.Scan), but an action reads through one
// subscription, which may have acknowledged some of those letters already: one by one (an
// earlier discard or resend leaves holes), or everything up to a point while retention or
// another subscription keeps them. cursor tells them apart, from the subscription's cursor in
// the admin API's internal stats (upstream's format), so a preview counts what the action will
// find. It works by entry: a batch some of whose letters were acknowledged counts whole.

// cursor is what a subscription has acknowledged.
type cursor struct {
	known      bool
	markDelete entryPos      // everything up to here (inclusive) is acknowledged
	ranges     [][2]entryPos // and every (from, to] range
}

type entryPos struct{ ledger, entry int64 }

func (p entryPos) less(o entryPos) bool {
	return p.ledger < o.ledger || (p.ledger == o.ledger && p.entry < o.entry)
}

// deletedRange is one range of individuallyDeletedMessages: "(3:5..3:7]".
var deletedRange = regexp.MustCompile(`\((-?\d+):(-?\d+)\.\.(-?\d+):(-?\d+)\]`)

// readCursor reads sub's cursor on topic. known is false when the admin API does not say
// (the preview then counts every retained letter, and says so).
func readCursor(ctx context.Context, ad *admin.Client, topic, sub string) cursor {
	st, err := ad.InternalStats(ctx, topic)
	if err != nil {
		return cursor{}
	}
	cs, ok := st.Cursors[sub]
	if !ok {
		return cursor{}
	}
	md, ok := parseEntryPos(cs.MarkDeletePosition)
	if !ok {
		return cursor{}
	}
	c := cursor{known: true, markDelete: md}
	for _, m := range deletedRange.FindAllStringSubmatch(cs.IndividuallyDeletedMessages, -1) {
		n := make([]int64, 4)
		for i := range n {
			n[i], _ = strconv.ParseInt(m[i+1], 10, 64)
		}
		c.ranges = append(c.ranges, [2]entryPos{{n[0], n[1]}, {n[2], n[3]}})
	}
	return c
}

func parseEntryPos(s string) (entryPos, bool) {
	l, e, ok := strings.Cut(s, ":")
	if !ok {
		return entryPos{}, false
	}
	ledger, err1 := strconv.ParseInt(l, 10, 64)
	entry, err2 := strconv.ParseInt(e, 10, 64)
	return entryPos{ledger, entry}, err1 == nil && err2 == nil
}

// acked reports whether the subscription acknowledged p's entry.
func (c cursor) acked(p triage.Position) bool {
	if !c.known {
		return false
	}
	e := entryPos{p.Ledger, p.Entry}
	if !c.markDelete.less(e) {
		return true
	}
	for _, r := range c.ranges {
		if r[0].less(e) && !r[1].less(e) {
			return true
		}
	}
	return false
}
