package triage

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// What one subscription of a DLQ has acknowledged. A subscription's letters are the messages
// after its mark-delete position that it has not acknowledged; the admin API's internal stats
// show its cursor in upstream's form (the mark-delete position and the ranges of entries
// acknowledged one by one after it) and, on letterbox's broker, the acknowledged indexes of the
// batches acknowledged in part (batchDeletedIndexes, docs/protocol.md). Reads that show a
// subscription's letters skip what it acknowledged, so that they count what the subscription
// will deliver, not everything the DLQ retains.

// Entry is an entry's position in one topic (or partition): ledger:entry.
type Entry struct{ Ledger, Entry int64 }

func (e Entry) less(o Entry) bool {
	return e.Ledger < o.Ledger || (e.Ledger == o.Ledger && e.Entry < o.Entry)
}

func (e Entry) String() string {
	return strconv.FormatInt(e.Ledger, 10) + ":" + strconv.FormatInt(e.Entry, 10)
}

// ParseEntry reads "ledger:entry".
func ParseEntry(s string) (Entry, bool) {
	l, e, ok := strings.Cut(s, ":")
	if !ok {
		return Entry{}, false
	}
	ledger, err1 := strconv.ParseInt(l, 10, 64)
	entry, err2 := strconv.ParseInt(e, 10, 64)
	return Entry{ledger, entry}, err1 == nil && err2 == nil
}

// Cursor is what one subscription of a topic (or of one partition) has acknowledged.
type Cursor struct {
	// MarkDelete: every entry up to it (inclusive) is acknowledged.
	MarkDelete Entry
	// ranges are the entries acknowledged one by one after MarkDelete: (from, to], sorted.
	ranges [][2]Entry
	// batches are the acknowledged indexes of each batch acknowledged in part, when the broker
	// says (BatchesKnown); without it, a batch counts whole until the whole of it is
	// acknowledged.
	batches      map[Entry][]int32
	BatchesKnown bool
}

// deletedRange is one range of individuallyDeletedMessages: "(3:5..3:7]".
var deletedRange = regexp.MustCompile(`\((-?\d+):(-?\d+)\.\.(-?\d+):(-?\d+)\]`)

// ErrNoSubscription: the topic has no such subscription (the admin API shows no cursor for it).
var ErrNoSubscription = errors.New("no such subscription")

// ReadCursor reads sub's cursor on topic (a non-partitioned topic or one partition).
func ReadCursor(ctx context.Context, ad *admin.Client, topic, sub string) (*Cursor, error) {
	st, err := ad.InternalStats(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("cursor of %s on %s: %w", sub, topic, gone(err))
	}
	cs, ok := st.Cursors[sub]
	if !ok {
		return nil, fmt.Errorf("%s: %w %s", topic, ErrNoSubscription, sub)
	}
	return cursorOf(cs)
}

// cursorOf reads a cursor of the admin API's internal stats.
func cursorOf(cs adminapi.CursorStats) (*Cursor, error) {
	md, ok := ParseEntry(cs.MarkDeletePosition)
	if !ok {
		return nil, fmt.Errorf("cursor: mark-delete position %q", cs.MarkDeletePosition)
	}
	c := &Cursor{MarkDelete: md}
	for _, m := range deletedRange.FindAllStringSubmatch(cs.IndividuallyDeletedMessages, -1) {
		var n [4]int64
		for i := range n {
			n[i], _ = strconv.ParseInt(m[i+1], 10, 64)
		}
		c.ranges = append(c.ranges, [2]Entry{{n[0], n[1]}, {n[2], n[3]}})
	}
	slices.SortFunc(c.ranges, func(a, b [2]Entry) int {
		switch {
		case a[0].less(b[0]):
			return -1
		case b[0].less(a[0]):
			return 1
		}
		return 0
	})
	if cs.BatchDeletedIndexes != nil {
		c.BatchesKnown = true
		c.batches = make(map[Entry][]int32, len(*cs.BatchDeletedIndexes))
		for k, idx := range *cs.BatchDeletedIndexes {
			if e, ok := ParseEntry(k); ok {
				c.batches[e] = idx
			}
		}
	}
	return c, nil
}

// EntryAcked reports whether the whole entry e is acknowledged.
func (c *Cursor) EntryAcked(e Entry) bool {
	if !c.MarkDelete.less(e) {
		return true
	}
	// The last range starting before e is the only one that can hold it.
	i, _ := slices.BinarySearchFunc(c.ranges, e, func(r [2]Entry, e Entry) int {
		if r[0].less(e) {
			return -1
		}
		return 1
	})
	return i > 0 && !c.ranges[i-1][1].less(e)
}

// Acked reports whether the letter at p (its partition's cursor) is acknowledged: its entry,
// or its index of a batch acknowledged in part.
func (c *Cursor) Acked(p Position) bool {
	e := Entry{p.Ledger, p.Entry}
	if c.EntryAcked(e) {
		return true
	}
	return p.Batch >= 0 && slices.Contains(c.batches[e], p.Batch)
}

// PartlyAcked reports whether the cursor says that e is a batch acknowledged in part.
func (c *Cursor) PartlyAcked(e Entry) bool { return len(c.batches[e]) > 0 }

// Start is where a reader of the cursor's letters starts: just after the mark-delete position.
func (c *Cursor) Start(partition int32) client.MessageID {
	return client.MessageID{Ledger: c.MarkDelete.Ledger, Entry: c.MarkDelete.Entry, Partition: partition, BatchIndex: -1}
}

// View is what of a DLQ a read shows: the letters Subscription has not acknowledged, or, with
// IncludeAcknowledged, every retained letter, those it acknowledged marked (Acked); without a
// subscription, every retained letter.
type View struct {
	Subscription        string
	IncludeAcknowledged bool
	// cursors are the subscription's, by partition (-1 on a non-partitioned topic).
	cursors map[int32]*Cursor
}

// ReadView reads the cursors of sub ("": none, every retained letter) on topic, on each
// partition of a partitioned topic.
func ReadView(ctx context.Context, ad *admin.Client, topic, sub string, includeAcked bool) (*View, error) {
	v := &View{Subscription: sub, IncludeAcknowledged: includeAcked}
	if sub == "" {
		return v, nil
	}
	if ad == nil {
		return nil, errors.New("reading a subscription's letters needs the admin API")
	}
	parts, err := ad.Partitions(ctx, topic)
	if err != nil && !admin.IsNotFound(err) {
		return nil, fmt.Errorf("%s: %w", topic, gone(err))
	}
	v.cursors = map[int32]*Cursor{}
	if parts == 0 {
		c, err := ReadCursor(ctx, ad, topic, sub)
		if err != nil {
			return nil, err
		}
		v.cursors[-1] = c
		return v, nil
	}
	for i := range parts {
		c, err := ReadCursor(ctx, ad, naming.PartitionName(topic, i), sub)
		if err != nil {
			return nil, err
		}
		v.cursors[int32(i)] = c
	}
	return v, nil
}

// Cursor is the subscription's cursor of a partition (-1: a non-partitioned topic's); nil
// without a subscription.
func (v *View) Cursor(partition int32) *Cursor {
	if v == nil {
		return nil
	}
	return v.cursors[partition]
}

// Acked reports whether the subscription acknowledged the letter at p (false without one).
func (v *View) Acked(p Position) bool {
	c := v.Cursor(p.Partition)
	return c != nil && c.Acked(p)
}

// Hides reports whether the view leaves the letter at p out.
func (v *View) Hides(p Position) bool { return v != nil && !v.IncludeAcknowledged && v.Acked(p) }

// BatchesKnown reports whether the broker said which letters of partly acknowledged batches
// the subscription acknowledged (letterbox's broker does); without it a read counts such a
// batch whole. True without a subscription: nothing is skipped then.
func (v *View) BatchesKnown() bool {
	if v == nil {
		return true
	}
	for _, c := range v.cursors {
		if !c.BatchesKnown {
			return false
		}
	}
	return true
}

// BatchAcks is what a broker does with the acknowledgement of some letters of a batch.
type BatchAcks int

const (
	// BatchAcksUnknown: the broker does not say (upstream shows its configuration to
	// superusers only).
	BatchAcksUnknown BatchAcks = iota
	// BatchAcksKept: acknowledgmentAtBatchIndexLevelEnabled is on (letterbox's default):
	// the broker keeps which letters of a batch were acknowledged.
	BatchAcksKept
	// BatchAcksLost: it is off (upstream's default): the broker acknowledges whole entries
	// only, and letters acknowledged in a batch not acknowledged whole come back at the next
	// redelivery.
	BatchAcksLost
)

// ReadBatchAcks asks the broker's configuration what it does with acknowledgements of part of
// a batch.
func ReadBatchAcks(ctx context.Context, ad *admin.Client) BatchAcks {
	conf, err := ad.RuntimeConfiguration(ctx)
	if err != nil {
		return BatchAcksUnknown
	}
	v, ok := conf["acknowledgmentAtBatchIndexLevelEnabled"]
	switch {
	case !ok:
		return BatchAcksUnknown
	case strings.EqualFold(strings.TrimSpace(v), "true"):
		return BatchAcksKept
	}
	return BatchAcksLost
}
