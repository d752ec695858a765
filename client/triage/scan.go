// Package triage reads whole dead-letter topics without consuming them, for the TUI and for
// `letterbox dlq`: Scan reads a DLQ once from its first retained message to the last message
// it held when the scan started, counting its letters (Stats), keeping the position of each
// one a filter selects and handing the matches to a visitor (export); Fetch reads letters back
// by position; Browse reads a page from any position; Finder decides which topics of a
// cluster are DLQs and retry topics, sampling the ones whose name and properties do not say.
// Nothing here acknowledges a message or creates a durable subscription: reads go through
// non-durable readers and the admin API.
package triage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Position is where one letter is, small enough that the index of a million letters costs
// 24 MB.
type Position struct {
	Ledger, Entry int64
	Partition     int32 // -1 on a non-partitioned topic
	Batch         int32 // the index in a batch, -1 when the entry is not one
}

// PositionOf is the position of a received message.
func PositionOf(id client.MessageID) Position {
	return Position{Ledger: id.Ledger, Entry: id.Entry, Partition: id.Partition, Batch: id.BatchIndex}
}

// MessageID is the position as a client message id.
func (p Position) MessageID() client.MessageID {
	return client.MessageID{Ledger: p.Ledger, Entry: p.Entry, Partition: p.Partition, BatchIndex: p.Batch}
}

// String is "ledger:entry", with ":partition" on a partitioned topic and ":partition:batch"
// for a message of a batch (partition 0 on a non-partitioned topic), as `letterbox replay
// --ids` reads it.
func (p Position) String() string {
	s := strconv.FormatInt(p.Ledger, 10) + ":" + strconv.FormatInt(p.Entry, 10)
	switch {
	case p.Batch >= 0:
		return s + ":" + strconv.Itoa(int(max(p.Partition, 0))) + ":" + strconv.Itoa(int(p.Batch))
	case p.Partition >= 0:
		return s + ":" + strconv.Itoa(int(p.Partition))
	}
	return s
}

// ScanOptions configure a Scan.
type ScanOptions struct {
	// Topic is the DLQ (or any topic) to read.
	Topic string
	// Subscription, when set, restricts the scan to the letters it has not acknowledged (read
	// from just after its mark-delete position, skipping what it acknowledged since, batch
	// indexes included where the broker says: View); it needs Admin. "" reads every retained
	// letter.
	Subscription string
	// IncludeAcknowledged reads the letters Subscription acknowledged too, while they are
	// retained; Result.View tells them apart and Result.Acknowledged counts those selected.
	IncludeAcknowledged bool
	// Filter selects the letters that Stats count, Matches lists and Visit sees (nil: all).
	Filter *expr.Expr
	// After, when set, is where to start, by partition: the letters after that message only
	// (after its whole entry when it has no batch index).
	After map[int32]client.MessageID
	// Until is the last message to read, by partition (-1 for a non-partitioned topic); nil
	// asks the broker for the last message at the start of the scan.
	Until map[int32]client.MessageID
	// NoIndex leaves Result.Matches empty (an export needs no index).
	NoIndex bool
	// Names, when set, notes the property names of every letter read, selected or not.
	Names *deadletter.PropertyNames
	// Facets counts the selected letters' facets in the same pass (Result.Facets), decoding
	// each payload with its schema when the DLQ or its origin has one.
	Facets bool
	// Visit, when set, is called with each selected letter, payload included, and whether the
	// subscription acknowledged it (IncludeAcknowledged); an error ends the scan with it.
	Visit func(m *client.Message, l *deadletter.Letter, acked bool) error
	// Progress, when set, is called every ProgressEvery (default 100 ms) and once at the end,
	// from the scanning goroutine.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// Admin, when set, is asked how many entries the topic holds, for the progress total, and
	// the subscriptions of the letters' origins; a scan of a Subscription needs it.
	Admin *admin.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Idle is how long a scan waits for the next message before it asks the broker whether
	// more is coming (default 3 s).
	Idle time.Duration
}

// Progress is how far a scan has come.
type Progress struct {
	Read    int64 // letters read
	Matched int64 // …that the filter selected
	Entries int64 // entries read
	// TotalEntries is what the topic held at the start (0: unknown); Fraction is Entries over
	// it, at most 1.
	TotalEntries int64
	Fraction     float64
	Rate         float64 // letters read per second
	Left         time.Duration
	Elapsed      time.Duration
	Done         bool
}

// Result is what a scan found.
type Result struct {
	Topic string
	// View is what the scan read: a subscription's letters, or every retained letter. With
	// IncludeAcknowledged, View.Acked tells the letters the subscription acknowledged.
	View *View
	// Stats count the selected letters; Acknowledged how many of them the subscription had
	// acknowledged (IncludeAcknowledged only).
	Stats        Stats
	Acknowledged int64
	// Approx, when set, says why the counts may be off: the broker does not say which letters
	// of batches acknowledged in part are gone, and such a batch counted whole.
	Approx string
	// Facets are the selected letters' facets (ScanOptions.Facets), from which Causes splits them.
	Facets *Facets
	// Matches are the positions of the selected letters, in the order read.
	Matches []Position
	Read    int64
	Entries int64
	// Until is the last message the scan was to read, by partition.
	Until map[int32]client.MessageID
	// Complete is false when the scan stopped before Until (cancelled, or failed).
	Complete bool
	Elapsed  time.Duration
}

// ErrTopicGone ends a scan whose topic was deleted under it.
var ErrTopicGone = errors.New("the topic was deleted")

// Scan reads o.Topic from its first retained message to o.Until with a non-durable reader.
// On cancellation or failure it returns what it read so far with the error.
func Scan(ctx context.Context, cl *client.Client, o ScanOptions) (*Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 100 * time.Millisecond
	}
	if o.Idle <= 0 {
		o.Idle = 3 * time.Second
	}
	start := o.Now()
	res := &Result{Topic: o.Topic}
	if o.Facets {
		// Made first: a scan that fails early still returns facets to summarise (empty).
		res.Facets = NewFacets()
	}
	view, err := ReadView(ctx, o.Admin, o.Topic, o.Subscription, o.IncludeAcknowledged)
	if err != nil {
		return res, fmt.Errorf("scan %s: %w", o.Topic, err)
	}
	res.View = view
	r, err := cl.CreateReader(ctx, client.ReaderOptions{Topic: o.Topic, StartMessageID: startOf(view, o.After),
		SubscriptionName: naming.OwnReader("scan"), Name: naming.OwnPrefix + "scan",
		// Large letters are prefetched only as many as 32 MiB holds.
		ReceiverQueueSize: 2000, ReceiverQueueBytes: 32 << 20})
	if err != nil {
		return res, gone(fmt.Errorf("scan %s: %w", o.Topic, err))
	}
	defer r.Close()
	res.Until = o.Until
	if res.Until == nil {
		if res.Until, err = lastIDs(ctx, r); err != nil {
			return res, gone(fmt.Errorf("scan %s: last message: %w", o.Topic, err))
		}
	}
	s := scanner{o: o, res: res, t: NewTally(), start: start, done: map[int32]bool{}, ctx: ctx, subs: map[string][]string{}}
	s.letters = deadletter.NewReader(nil)
	if o.Admin != nil {
		s.letters.Subscriptions = s.subscriptions
	}
	if o.Filter.UsesDecode() || o.Facets {
		s.decoder = cl.NewPayloadDecoder()
	}
	for p, id := range res.Until {
		s.done[p] = id.Entry < 0
	}
	if o.Admin != nil && o.Progress != nil {
		s.total = totalEntries(ctx, o.Admin, o.Topic, view)
	}
	if res.Facets != nil {
		s.facets = startFacetFeed(res.Facets)
	}
	err = s.run(ctx, r)
	if s.facets != nil {
		s.facets.close()
	}
	res.Stats = s.t.Stats()
	res.Elapsed = o.Now().Sub(start)
	res.Complete = err == nil
	if s.batchesUnknown && ReadBatchAcks(ctx, o.Admin) != BatchAcksLost {
		res.Approx = "the broker does not say which letters of a batch acknowledged in part are gone: such batches count whole"
	}
	s.report(true)
	return res, err
}

// startOf is where a scan of view starts: after the mark-delete position of a non-partitioned
// topic's subscription, or after a message asked for (the later of the two), else at the
// earliest message (a partitioned topic's reader starts every partition at one id, so its
// acknowledged letters are skipped as they come).
func startOf(view *View, after map[int32]client.MessageID) client.MessageID {
	start := client.EarliestMessageID()
	if id, ok := after[-1]; ok && len(after) == 1 {
		start = id
	}
	if c := view.Cursor(-1); c != nil && !view.IncludeAcknowledged {
		if md := c.Start(-1); start == client.EarliestMessageID() || entryCompare(md, start) > 0 {
			start = md
		}
	}
	return start
}

// lastIDs asks for the last message of each partition.
func lastIDs(ctx context.Context, r *client.Reader) (map[int32]client.MessageID, error) {
	ids, err := r.LastMessageIDs(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]client.MessageID, len(ids))
	for _, id := range ids {
		out[id.Partition] = id
	}
	return out, nil
}

// gone turns the errors a deleted topic causes into ErrTopicGone.
func gone(err error) error {
	var bc *client.BrokerClosedError
	if errors.As(err, &bc) || errors.Is(err, client.ErrTopicNotFound) || admin.IsNotFound(err) {
		return fmt.Errorf("%w: %w", ErrTopicGone, err)
	}
	return err
}

type scanner struct {
	ctx context.Context
	o   ScanOptions
	// batchesUnknown: a batch was counted whole that the subscription may have acknowledged
	// in part, and the broker does not say (View.BatchesKnown).
	batchesUnknown bool
	subs           map[string][]string    // the subscriptions of each origin, when o.Admin tells
	letters        *deadletter.Reader     // reads each letter, with subs when o.Admin is set
	decoder        *client.PayloadDecoder // for "payload decodes" in o.Filter and the facets; nil when neither asks
	facets         *facetFeed             // counts res.Facets, while the scan runs
	res            *Result
	t              *Tally
	start          time.Time
	total          int64
	done           map[int32]bool
	lastPos        Position
	reported       time.Time
}

func (s *scanner) pending() bool {
	for _, d := range s.done {
		if !d {
			return true
		}
	}
	return false
}

func (s *scanner) run(ctx context.Context, r *client.Reader) error {
	// A reader that starts at the end (a subscription that acknowledged everything, a count of
	// what arrived after a message when nothing did) has nothing to wait for.
	if s.pending() {
		more, err := r.HasNext(ctx)
		if err != nil {
			return gone(fmt.Errorf("scan %s: %w", s.o.Topic, err))
		}
		if !more {
			return nil
		}
	}
	for s.pending() {
		// A queued message is taken as it is, without a deadline: a context with a timer for
		// every letter was a fifteenth of a scan's CPU. The context is heeded between letters.
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := r.NextQueued()
		if m == nil && err == nil {
			nctx, cancel := context.WithTimeout(ctx, s.o.Idle)
			m, err = r.Next(nctx)
			cancel()
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return gone(fmt.Errorf("scan %s: %w", s.o.Topic, err))
			}
			// Nothing for a while: more to come, or was the rest deleted (retention) before
			// the scan got to it?
			more, herr := r.HasNext(ctx)
			if herr != nil {
				return gone(fmt.Errorf("scan %s: %w", s.o.Topic, herr))
			}
			if !more {
				return nil
			}
			continue
		}
		if err := s.take(m); err != nil {
			return err
		}
	}
	return nil
}

// take counts one message, unless it is past the end of its partition.
func (s *scanner) take(m *client.Message) error {
	p := m.ID.Partition
	until, ok := s.res.Until[p]
	if !ok || s.done[p] {
		return nil
	}
	if c := entryCompare(m.ID, until); c > 0 {
		s.done[p] = true
		return nil
	} else if c == 0 && (m.ID.BatchIndex < 0 || m.ID.BatchIndex >= m.ID.BatchSize-1) {
		s.done[p] = true // the last message of the last entry
	}
	if after, ok := s.o.After[p]; ok && atOrBefore(m.ID, after) {
		return nil
	}
	pos := PositionOf(m.ID)
	view := s.res.View
	if view.Hides(pos) {
		return nil
	}
	if m.ID.BatchSize > 1 && !view.BatchesKnown() && view.Cursor(p) != nil {
		s.batchesUnknown = true
	}
	if pos.Ledger != s.lastPos.Ledger || pos.Entry != s.lastPos.Entry || pos.Partition != s.lastPos.Partition || s.res.Entries == 0 {
		s.res.Entries++
	}
	s.lastPos = pos
	s.res.Read++
	s.o.Names.Add(m.Properties)
	l := s.letters.Read(m.Properties, m.ProducerName)
	if s.o.Filter != nil {
		subject := expr.FromClient(m)
		if s.decoder != nil {
			subject.Decode = func() error { return s.decoder.DecodeLetter(s.ctx, m) }
		}
		ok, err := s.o.Filter.Eval(&subject, &l)
		if err != nil {
			// A count that left out what could not be judged would be wrong: none is better.
			return fmt.Errorf("scan %s: letter %s: %w", s.o.Topic, pos, err)
		}
		if !ok {
			s.maybeReport()
			return nil
		}
	}
	s.t.Add(m.Key, m.PublishTime, &l)
	if s.facets != nil {
		var d Decoded
		schema, err := s.decoder.CheckLetter(s.ctx, m)
		switch {
		case err == nil:
			d.Checked = schema
		case errors.Is(err, client.ErrSchema):
			d = Decoded{Checked: true, Err: err.Error()}
		default:
			// As for a filter: a facet that left the letter out would count wrong.
			return fmt.Errorf("scan %s: letter %s: %w", s.o.Topic, pos, err)
		}
		s.facets.add(m, &l, d)
	}
	acked := view.IncludeAcknowledged && view.Acked(pos)
	if acked {
		s.res.Acknowledged++
	}
	if !s.o.NoIndex {
		s.res.Matches = append(s.res.Matches, pos)
	}
	if s.o.Visit != nil {
		if err := s.o.Visit(m, &l, acked); err != nil {
			return err
		}
	}
	s.maybeReport()
	return nil
}

// subscriptions are origin's subscriptions, asked once per scan (none when the admin API
// cannot tell: the producer's name is then split at its last dash).
func (s *scanner) subscriptions(origin string) []string {
	subs, ok := s.subs[origin]
	if !ok {
		subs, _ = s.o.Admin.Subscriptions(s.ctx, origin)
		s.subs[origin] = subs
	}
	return subs
}

// atOrBefore reports whether id is after's message or comes before it; an after without a
// batch index stands for its whole entry.
func atOrBefore(id, after client.MessageID) bool {
	if after.BatchIndex < 0 {
		return entryCompare(id, after) <= 0
	}
	return id.Compare(after) <= 0
}

// entryCompare orders two ids of one partition by entry, ignoring batch indexes.
func entryCompare(a, b client.MessageID) int {
	a.BatchIndex, b.BatchIndex = -1, -1
	return a.Compare(b)
}

func (s *scanner) maybeReport() {
	if s.res.Read%256 != 0 {
		return
	}
	s.report(false)
}

func (s *scanner) report(final bool) {
	if s.o.Progress == nil {
		return
	}
	now := s.o.Now()
	if !final && now.Sub(s.reported) < s.o.ProgressEvery {
		return
	}
	s.reported = now
	p := Progress{Read: s.res.Read, Matched: s.t.n, Entries: s.res.Entries, TotalEntries: s.total,
		Elapsed: now.Sub(s.start), Done: final}
	if secs := p.Elapsed.Seconds(); secs > 0 {
		p.Rate = float64(p.Read) / secs
	}
	switch {
	case final:
		p.Fraction = 1
	case s.total > 0:
		p.Fraction = min(float64(p.Entries)/float64(s.total), 0.999)
		if p.Entries > 0 && p.Elapsed > 0 {
			perEntry := p.Elapsed / time.Duration(p.Entries)
			p.Left = perEntry * time.Duration(max(s.total-p.Entries, 0))
		}
	}
	s.o.Progress(p)
}

// totalEntries is how many entries a scan of view reads, or 0 when the admin API does not
// tell: a subscription's backlog in entries, or what the topic's ledgers hold (summed over
// partitions).
func totalEntries(ctx context.Context, ad *admin.Client, topic string, view *View) int64 {
	if view.Subscription != "" && !view.IncludeAcknowledged {
		if b, err := ReadBacklog(ctx, ad, topic, view.Subscription); err == nil {
			return b.Entries
		}
		return 0
	}
	parts, err := ad.Partitions(ctx, topic)
	if err != nil {
		return 0
	}
	names := []string{topic}
	if parts > 0 {
		names = names[:0]
		for i := range parts {
			names = append(names, naming.PartitionName(topic, i))
		}
	}
	var total int64
	for _, n := range names {
		st, err := ad.InternalStats(ctx, n)
		if err != nil {
			return 0
		}
		total += ledgerEntries(st)
	}
	return total
}

// ledgerEntries sums the entries of a topic's ledgers; upstream lists the open ledger with
// 0 entries and counts them in currentLedgerEntries.
func ledgerEntries(st adminapi.InternalStats) int64 {
	var n int64
	for i, l := range st.Ledgers {
		if i == len(st.Ledgers)-1 && l.Entries == 0 {
			n += st.CurrentLedgerEntries
			continue
		}
		n += l.Entries
	}
	if n == 0 {
		n = st.NumberOfEntries
	}
	return n
}
