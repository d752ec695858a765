package triage

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// From is where a browse starts.
type From struct {
	Earliest bool
	// Latest is the newest page: the n entries up to the last message.
	Latest bool
	// Time starts at the first message published at or after it.
	Time time.Time
	// ID starts at that message (or, with After, just after it); HasID says it is set.
	ID    client.MessageID
	HasID bool
	After bool
}

// String is f as ParseFrom reads it.
func (f From) String() string {
	switch {
	case f.Latest:
		return "latest"
	case f.HasID && f.After:
		return "after " + PositionOf(f.ID).String()
	case f.HasID:
		return PositionOf(f.ID).String()
	case !f.Time.IsZero():
		return f.Time.Format("2006-01-02 15:04:05")
	}
	return "earliest"
}

// ParseFrom reads a start: "earliest", "latest", a message id (ledger:entry[:partition[:batch]])
// or a time as expressions take them (2026-11-30 08:00, 2026-11-30T08:00:00Z, -2h).
func ParseFrom(s string, now time.Time) (From, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "earliest", "first", "start":
		return From{Earliest: true}, nil
	case "latest", "last", "end":
		return From{Latest: true}, nil
	}
	if id, err := client.ParseMessageID(s); err == nil && !strings.Contains(s, " ") && strings.Count(s, "-") == 0 {
		return From{ID: id, HasID: true}, nil
	}
	t, err := expr.ParseTime(s, now)
	if err != nil {
		return From{}, fmt.Errorf("from %q: want earliest, latest, a message id (ledger:entry) or a time (2026-11-30 08:00, -2h)", s)
	}
	return From{Time: t}, nil
}

// BrowsePage is one page of messages.
type BrowsePage struct {
	Messages []*client.Message
	// Next starts the following page; More is false when the page reached the last message the
	// topic held when it was read.
	Next From
	More bool
}

// Browse reads up to n messages of topic (a non-partitioned topic or one partition) from
// from, with a non-durable reader, without waiting for messages published after it started,
// leaving out what view hides (a subscription's acknowledged letters; nil: nothing). ad, when
// set, places From.Latest (the newest n entries); without it Latest reads from the earliest.
// From.Earliest of a subscription's letters is just after its mark-delete position.
func Browse(ctx context.Context, cl *client.Client, ad *admin.Client, topic string, view *View, from From, n int) (*BrowsePage, error) {
	if from.Latest && ad != nil {
		return browseLatest(ctx, cl, ad, topic, view, n)
	}
	return browse(ctx, cl, topic, view, from, n)
}

// browseLatest reads the newest n messages view shows. Entries are counted back from the last
// one (the admin API's ledgers) and read forward, a window twice as long each time, until it
// holds n messages or starts at the earliest: an entry may be a batch of many messages, or hold
// only messages the view hides.
func browseLatest(ctx context.Context, cl *client.Client, ad *admin.Client, topic string, view *View, n int) (*BrowsePage, error) {
	last, err := ad.LastMessageID(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("browse %s: %w", topic, err)
	}
	if last.EntryID < 0 {
		return &BrowsePage{}, nil
	}
	id := client.MessageID{Ledger: last.LedgerID, Entry: last.EntryID, Partition: -1, BatchIndex: -1}
	for back := 0; ; back = max(2*back, 1) {
		from, _, err := Back(ctx, ad, topic, id, back)
		if err != nil {
			return nil, err
		}
		if !from.HasID {
			from = From{Earliest: true}
		}
		page, err := browse(ctx, cl, topic, view, from, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		if len(page.Messages) >= n || from.Earliest || back >= n {
			page.Messages = page.Messages[max(len(page.Messages)-n, 0):]
			page.More, page.Next = false, From{}
			if k := len(page.Messages); k > 0 {
				page.Next = From{ID: page.Messages[k-1].ID, HasID: true, After: true}
			}
			return page, nil
		}
	}
}

// browse reads up to n messages view shows from from.
func browse(ctx context.Context, cl *client.Client, topic string, view *View, from From, n int) (*BrowsePage, error) {
	part := int32(naming.PartitionIndex(topic))
	opts := client.ReaderOptions{Topic: topic, StartMessageID: client.EarliestMessageID(),
		SubscriptionName: naming.OwnReader("browse"), Name: naming.OwnPrefix + "browse", ReceiverQueueSize: min(max(n, 10), 2000)}
	if c := view.Cursor(part); c != nil && !view.IncludeAcknowledged && !from.HasID && from.Time.IsZero() {
		opts.StartMessageID = c.Start(part)
	}
	if from.HasID {
		opts.StartMessageID, opts.StartMessageIDInclusive = from.ID, !from.After
	}
	r, err := cl.CreateReader(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("browse %s: %w", topic, err)
	}
	defer r.Close()
	if !from.Time.IsZero() && !from.HasID {
		if err := r.SeekByTime(ctx, from.Time); err != nil {
			return nil, fmt.Errorf("browse %s: %w", topic, err)
		}
	}
	ends, err := lastIDs(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("browse %s: %w", topic, err)
	}
	page := &BrowsePage{}
	done := map[int32]bool{}
	for p, id := range ends {
		done[p] = id.Entry < 0
	}
	pending := func() bool {
		for _, d := range done {
			if !d {
				return true
			}
		}
		return false
	}
	for pending() && len(page.Messages) < n {
		more, err := r.HasNext(ctx)
		if err != nil {
			return nil, fmt.Errorf("browse %s: %w", topic, err)
		}
		if !more {
			break
		}
		m, err := r.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("browse %s: %w", topic, err)
		}
		end := ends[m.ID.Partition]
		c := entryCompare(m.ID, end)
		if c > 0 {
			done[m.ID.Partition] = true
			continue
		}
		if c == 0 && (m.ID.BatchIndex < 0 || m.ID.BatchIndex >= m.ID.BatchSize-1) {
			done[m.ID.Partition] = true
		}
		pos := PositionOf(m.ID)
		pos.Partition = part
		if view.Hides(pos) {
			continue
		}
		page.Messages = append(page.Messages, m)
	}
	if k := len(page.Messages); k > 0 {
		page.Next = From{ID: page.Messages[k-1].ID, HasID: true, After: true}
		page.More = pending()
	}
	return page, nil
}

// Back is where the page of n entries before id starts, counted through the topic's ledgers
// (admin internal stats); earliest when fewer entries come before it. ok is false when nothing
// comes before id: it is the first message the topic retains.
func Back(ctx context.Context, ad *admin.Client, topic string, id client.MessageID, n int) (from From, ok bool, err error) {
	first, err := ad.ExamineMessage(ctx, topic, false, 1)
	if err != nil {
		return From{}, false, fmt.Errorf("browse %s: %w", topic, err)
	}
	if len(first) > 0 && first[0].ID.LedgerID == id.Ledger && first[0].ID.EntryID >= id.Entry {
		return From{}, false, nil
	}
	from, err = back(ctx, ad, topic, id, n)
	return from, err == nil, err
}

func back(ctx context.Context, ad *admin.Client, topic string, id client.MessageID, n int) (From, error) {
	st, err := ad.InternalStats(ctx, topic)
	if err != nil {
		return From{}, fmt.Errorf("browse %s: %w", topic, err)
	}
	ledgers := st.Ledgers
	i := len(ledgers) - 1
	for i >= 0 && ledgers[i].LedgerID != id.Ledger {
		i--
	}
	if i < 0 {
		return From{Earliest: true}, nil
	}
	entry, left := id.Entry, int64(n)
	for left > 0 {
		if entry >= left {
			entry -= left
			break
		}
		left -= entry + 1
		i--
		if i < 0 {
			return From{Earliest: true}, nil
		}
		entry = entriesOf(st, i) - 1
	}
	return From{ID: client.MessageID{Ledger: ledgers[i].LedgerID, Entry: entry, Partition: id.Partition, BatchIndex: -1}, HasID: true}, nil
}

// entriesOf is how many entries ledger i holds; upstream lists the open ledger with 0 and
// counts them in currentLedgerEntries.
func entriesOf(st adminapi.InternalStats, i int) int64 {
	if i == len(st.Ledgers)-1 && st.Ledgers[i].Entries == 0 {
		return st.CurrentLedgerEntries
	}
	return st.Ledgers[i].Entries
}

// Fetch reads the messages at ps back through the admin API (one request per entry, four at
// a time), in the order of ps. topic is the scanned topic; positions with a partition are
// read from that partition. A position that no longer exists (acknowledged and deleted since),
// or that view hides (acknowledged since, and still retained), is left out.
func Fetch(ctx context.Context, ad *admin.Client, topic string, view *View, ps []Position) ([]admin.Message, error) {
	ps = slices.DeleteFunc(slices.Clone(ps), view.Hides)
	type entryKey struct {
		p    int32
		l, e int64
	}
	entries := map[entryKey][]admin.Message{}
	var order []entryKey
	for _, p := range ps {
		k := entryKey{p.Partition, p.Ledger, p.Entry}
		if _, ok := entries[k]; !ok {
			entries[k] = nil
			order = append(order, k)
		}
	}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, k := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			name := topic
			if k.p >= 0 {
				name = naming.PartitionName(naming.BaseName(topic), int(k.p))
			}
			msgs, err := ad.MessagesByID(ctx, name, k.l, k.e)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				entries[k] = msgs
			case admin.IsNotFound(err):
			case firstErr == nil:
				firstErr = err
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("read %s back: %w", topic, gone(firstErr))
	}
	out := make([]admin.Message, 0, len(ps))
	for _, p := range ps {
		for _, m := range entries[entryKey{p.Partition, p.Ledger, p.Entry}] {
			if p.Batch < 0 || m.ID.BatchIndex == int(p.Batch) {
				out = append(out, m)
				break
			}
		}
	}
	return out, nil
}
