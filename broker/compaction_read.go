package broker

import (
	"math"
	"sort"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Reading the compacted topic, as upstream's CompactedTopicImpl: a consumer that subscribed
// with read_compacted (Exclusive or Failover, persistent topics only) is served the compacted
// view while its read position is at or before the compaction horizon, then the log after the
// horizon. A batch of the view carries the ack set that hides its superseded messages.

// checkReadCompacted refuses read_compacted where upstream does.
func checkReadCompacted(t *topic, cmd *pb.CommandSubscribe) *serverError {
	if !cmd.GetReadCompacted() || !t.name.Persistent {
		return nil
	}
	switch cmd.GetSubType() {
	case pb.CommandSubscribe_Exclusive, pb.CommandSubscribe_Failover:
		return nil
	}
	return errorf(pb.ServerError_NotAllowedError, "readCompacted only allowed on failover or exclusive subscriptions")
}

// attachCompacted notes where a read_compacted consumer starts: as upstream, one that starts
// from the earliest message (a reader at MessageId.earliest, or a durable subscription that has
// acknowledged nothing in its ledger) reads the whole view, even entries the log no longer
// has. Called with the topic's mutex held.
func (s *subscription) attachCompacted(cmd *pb.CommandSubscribe) {
	if s.durable {
		s.compactedEarliest = s.markDelete.Entry == -1
	} else {
		s.compactedEarliest = wire.IsEarliest(cmd.GetStartMessageId())
	}
	s.compactedNext = storage.Position{Ledger: math.MinInt64}
}

// readsCompacted reports whether s's active consumer reads the compacted view. Called with the
// topic's mutex held.
func (s *subscription) readsCompacted() bool {
	return s.active != nil && s.active.readCompacted && s.topic.name.Persistent
}

// compactedViewFor is the view s reads now, nil when it reads the log. Called with the topic's
// mutex held.
func (s *subscription) compactedViewFor() *compactedRecord {
	if !s.readsCompacted() {
		return nil
	}
	view := s.topic.compactedView()
	if view == nil || (view.Horizon.Less(s.readPos) && !s.compactedEarliest) {
		return nil
	}
	return view
}

// dispatchCompacted delivers entries of the compacted view from the read position; false
// means the active consumer can take nothing now. Once the view is exhausted the read position
// moves past the horizon, and dispatch goes on with the log. Called with the topic's mutex
// held.
func (s *subscription) dispatchCompacted(view *compactedRecord, budget *int, now time.Time) bool {
	from := s.readPos
	if s.compactedEarliest {
		// The whole view, whatever the cursor says: entries before the mark-delete position
		// (the log freed them) are delivered too, as upstream's readFromEarliest.
		from = s.compactedNext
	}
	i := sort.Search(len(view.Entries), func(i int) bool { return !view.Entries[i].Pos.Less(from) })
	for ; i < len(view.Entries) && *budget > 0; i++ {
		ce := view.Entries[i]
		e := storage.Entry{Pos: ce.Pos, Meta: ce.Meta, Data: ce.Data}
		if !s.compactedEarliest && s.isAcked(ce.Pos) {
			s.readPos = after(ce.Pos)
			continue
		}
		cs, stop := s.pick(e)
		if stop || s.rateSpent(now) {
			return false
		}
		// The successor in the view's numbering: the log may no longer have this ledger, and
		// the view may hold more of it.
		if s.compactedEarliest {
			s.compactedNext = after(ce.Pos)
		}
		if s.readPos.Less(after(ce.Pos)) {
			s.readPos = after(ce.Pos)
		}
		s.deliver(cs, e, now)
		*budget--
	}
	if i == len(view.Entries) {
		s.compactedEarliest = false
		next := s.topic.log.Next(view.Horizon)
		if first := s.topic.log.First(); next.Less(first) {
			next = first
		}
		if s.readPos.Less(next) {
			s.readPos = next
		}
	}
	return true
}

func after(p storage.Position) storage.Position {
	return storage.Position{Ledger: p.Ledger, Entry: p.Entry + 1}
}

// entryAt returns the view's entry at p. Called with the topic's mutex held.
func (view *compactedRecord) entryAt(p storage.Position) (compactedEntry, bool) {
	i := sort.Search(len(view.Entries), func(i int) bool { return !view.Entries[i].Pos.Less(p) })
	if i < len(view.Entries) && view.Entries[i].Pos == p {
		return view.Entries[i], true
	}
	return compactedEntry{}, false
}

// replayEntry returns the entry at p for redelivery: from the compacted view when s reads it
// and p is there (the log may have trimmed it), else from the log, held. Called with the
// topic's mutex held.
func (s *subscription) replayEntry(p storage.Position) (storage.Entry, bool) {
	if s.readsCompacted() {
		if view := s.topic.compactedView(); view != nil && !view.Horizon.Less(p) {
			if ce, ok := view.entryAt(p); ok {
				return storage.Entry{Pos: ce.Pos, Meta: ce.Meta, Data: ce.Data}, true
			}
		}
	}
	return s.topic.log.GetHeld(p)
}

// messageAckSet is the ack set MESSAGE carries for the entry at p: the batch's messages
// acknowledged in part, and for a reader of the compacted view the messages compaction
// dropped. nil: deliver every message. Called with the topic's mutex held.
func (s *subscription) messageAckSet(p storage.Position) []int64 {
	set := s.partial[p]
	if !s.readsCompacted() {
		return set
	}
	view := s.topic.compactedView()
	if view == nil || view.Horizon.Less(p) {
		return set
	}
	ce, ok := view.entryAt(p)
	if !ok || ce.AckSet == nil {
		return set
	}
	if set == nil {
		return ce.AckSet
	}
	return andBits(set, ce.AckSet)
}

// compactedLastMessageID is GET_LAST_MESSAGE_ID's answer for a reader of the compacted view
// when nothing was stored after the horizon: the view's last message, or entry −1 ("no
// messages") when compaction left nothing, as upstream answers from the compacted ledger.
// ok is false when the log's answer stands. Called with the topic's mutex held.
func (s *subscription) compactedLastMessageID() (*pb.MessageIdData, bool) {
	t := s.topic
	if !s.readsCompacted() {
		return nil, false
	}
	view := t.compactedView()
	if view == nil || t.log.EntriesFrom(t.log.Next(view.Horizon)) > 0 {
		return nil, false // the log has entries after the horizon: its last one answers
	}
	id := &pb.MessageIdData{LedgerId: ptr(uint64(view.Horizon.Ledger)), EntryId: ptr(uint64(math.MaxUint64))}
	if n := len(view.Entries); n > 0 {
		ce := view.Entries[n-1]
		id = &pb.MessageIdData{LedgerId: ptr(uint64(ce.Pos.Ledger)), EntryId: ptr(uint64(ce.Pos.Entry))}
		if ce.Meta.Batched {
			var last int32 = -1
			for _, i := range ce.Keys {
				last = max(last, i)
			}
			id.BatchIndex = ptr(last)
		}
	}
	if t.name.Partition >= 0 {
		id.Partition = ptr(int32(t.name.Partition))
	}
	return id, true
}
