package broker

import (
	"slices"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// A subscription's backlog in messages, which letterbox's admin JSON adds beside upstream's
// msgBacklog (which counts entries, as upstream's getNumberOfEntriesInBacklog does): a batch of
// a hundred messages is one entry of msgBacklog and a hundred messages here. For a DLQ, whose
// dead-letter routers batch, only this count is the number of letters left to handle.

// backlogMessages counts the messages after the mark-delete position not yet acknowledged:
// the messages of the entries after it (storage keeps running totals, so nothing is read),
// less those of the entries acknowledged individually (a range at a time) and the
// acknowledged indexes of batches acknowledged in part. Delayed messages count, as msgBacklog
// counts their entries. Called with the topic's mutex held.
func (s *subscription) backlogMessages() int64 {
	log := s.topic.log
	n := log.MessagesFrom(log.Next(s.markDelete))
	s.acked.each(0, func(r entryRange) {
		n -= log.MessagesBetween(storage.Position{Ledger: r.ledger, Entry: r.first},
			storage.Position{Ledger: r.ledger, Entry: r.last + 1})
	})
	s.eachPartial(func(p storage.Position, acked []int32) { n -= int64(len(acked)) })
	return max(n, 0)
}

// eachPartial calls fn with every batch after the mark-delete position acknowledged in part
// and its acknowledged indexes, ascending, in position order. Called with the topic's mutex
// held.
func (s *subscription) eachPartial(fn func(p storage.Position, acked []int32)) {
	log := s.topic.log
	ps := make([]storage.Position, 0, len(s.partial))
	for p := range s.partial {
		if s.markDelete.Less(p) && !s.acked.contains(p) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, comparePos)
	for _, p := range ps {
		num := log.MessagesBetween(p, storage.Position{Ledger: p.Ledger, Entry: p.Entry + 1})
		if num == 0 {
			continue // no longer stored
		}
		if acked := ackedIndexes(s.partial[p], num); len(acked) > 0 {
			fn(p, acked)
		}
	}
}

// ackedIndexes lists the indexes of a batch of num messages that an ack set (bit set: not yet
// acknowledged) marks acknowledged. Indexes past a shorter set are acknowledged, as the ACK
// handler reads a set (andBits keeps the shorter one's length) and the consumers do.
func ackedIndexes(set []int64, num int64) []int32 {
	var out []int32
	for i := int64(0); i < num; i++ {
		w := i / 64
		if w >= int64(len(set)) || uint64(set[w])&(1<<uint(i%64)) == 0 {
			out = append(out, int32(i))
		}
	}
	return out
}

// scanBacklogUntil calls fn for unacknowledged entries after the mark-delete position until it
// returns false. An entry's data is fn's only for the call (what it keeps, it copies: Copy):
// the scan holds the entries it read, rather than having the log copy a whole backlog's data
// to look at. Called with the topic's mutex held.
func (s *subscription) scanBacklogUntil(fn func(storage.Entry) bool) {
	from := s.topic.log.Next(s.markDelete)
	var entries []storage.Entry
	defer func() { releaseEntries(entries) }() // also when fn panics
	for {
		var err error
		entries, err = s.topic.log.ReadHeld(entries[:0], from, 256)
		if err != nil || len(entries) == 0 {
			return
		}
		for _, e := range entries {
			if !s.isAcked(e.Pos) && !fn(e) {
				return
			}
			from = s.topic.log.Next(e.Pos)
		}
		releaseEntries(entries)
	}
}

// releaseEntries releases the holds of entries read with ReadHeld and forgets them.
func releaseEntries(entries []storage.Entry) {
	for i := range entries {
		releaseHold(entries[i].Hold)
		entries[i] = storage.Entry{}
	}
}

// scanBacklog calls fn for every unacknowledged entry after the mark-delete position. Called
// with the topic's mutex held.
func (s *subscription) scanBacklog(fn func(storage.Entry)) {
	s.scanBacklogUntil(func(e storage.Entry) bool { fn(e); return true })
}
