package broker

import (
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Upstream's …/internalStats: a topic's ledgers (our segments) and cursors (our durable
// subscriptions), in upstream's PersistentTopicInternalStats JSON.

// InternalStats returns a topic's (or partition's) storage-level stats: its ledgers (segments)
// and one cursor per durable subscription.
func (b *Broker) InternalStats(tname string) (*adminapi.InternalStats, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return nil, err
	}
	t, err := b.topicFor(name, "Internal stats")
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.internalStats(), nil
}

// internalStats is t's PersistentTopicInternalStats. Called with t.mu held.
//
// Ledgers are our segments (the in-memory log's one ledger). As upstream, the open ledger is
// listed with 0 entries and size 0 (its figures are currentLedgerEntries and
// currentLedgerSize); a closed ledger's entries count every id it handed out, trimmed ones
// included, and its timestamp is its last entry's publish time (upstream's is when it closed,
// which a segment does not record). Cursors are the subscriptions; they live in the metadata
// store, not in a cursor ledger, so cursorLedger is −1.
func (t *topic) internalStats() *adminapi.InternalStats {
	last := t.log.Last()
	ledgers := []adminapi.LedgerInfo{}
	var added int64
	infos := t.log.Ledgers()
	for i, l := range infos {
		n := l.First + l.Entries
		added += n
		li := adminapi.LedgerInfo{LedgerID: l.ID, Entries: n, Size: l.Size}
		if i == len(infos)-1 {
			li.Entries, li.Size = 0, 0
		} else if e, ok := t.log.GetHeld(storage.Position{Ledger: l.ID, Entry: n - 1}); ok {
			li.Timestamp = e.Meta.PublishTime
			releaseHold(e.Hold)
		}
		ledgers = append(ledgers, li)
	}
	var current storage.LedgerInfo
	if len(infos) > 0 {
		current = infos[len(infos)-1]
	}
	state := "LedgerOpened"
	if t.b.isTerminated(t.full) {
		state = "Terminated"
	}
	st := &adminapi.InternalStats{
		EntriesAddedCounter:        added,
		NumberOfEntries:            t.log.Entries(),
		TotalSize:                  t.log.Size(),
		CurrentLedgerEntries:       current.First + current.Entries,
		CurrentLedgerSize:          current.Size,
		LastLedgerCreatedTimestamp: t.opened.UTC().Format(time.RFC3339Nano),
		LastConfirmedEntry:         last.String(),
		State:                      state,
		Ledgers:                    ledgers,
		Cursors:                    map[string]adminapi.CursorStats{},
		SchemaLedgers:              []adminapi.LedgerInfo{},
		CompactedLedger:            t.compactedLedgerInfo(),
	}
	for name, s := range t.subs {
		st.Cursors[name] = s.cursorStats(added, last)
	}
	return st
}

// cursorStats is s's CursorStats; added is the topic's entriesAddedCounter. Called with the
// topic's mutex held.
func (s *subscription) cursorStats(added int64, last storage.Position) adminapi.CursorStats {
	log := s.topic.log
	ranges := ackedRanges(s)
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		// Upstream shows open-closed ranges: (before-first..last].
		parts[i] = "(" + storage.Position{Ledger: r[0].Ledger, Entry: r[0].Entry - 1}.String() + ".." + r[1].String() + "]"
	}
	// Upstream counts (mark-delete, read position], the read position included even when it
	// is not written yet: a cursor that has caught up shows 1.
	var sinceFirst int64
	if s.markDelete.Less(s.readPos) {
		sinceFirst = log.EntriesFrom(log.Next(s.markDelete)) - log.EntriesFrom(s.readPos) + 1
	}
	state := "Open"
	if len(s.consumers) == 0 && !s.durable {
		state = "Closed"
	}
	cs := adminapi.CursorStats{
		MarkDeletePosition: s.markDelete.String(),
		ReadPosition:       s.readPos.String(),
		WaitingReadOp:      len(s.consumers) > 0 && last.Less(s.readPos),
		// Upstream's counter is what makes entriesAddedCounter − messagesConsumedCounter the
		// cursor's backlog.
		MessagesConsumedCounter:                  added - s.backlogEntries(),
		CursorLedger:                             -1,
		CursorLedgerLastEntry:                    -1,
		IndividuallyDeletedMessages:              "[" + strings.Join(parts, ", ") + "]",
		LastLedgerSwitchTimestamp:                s.created.UTC().Format(time.RFC3339Nano),
		State:                                    state,
		Active:                                   len(s.consumers) > 0,
		NumberOfEntriesSinceFirstNotAckedMessage: sinceFirst,
		TotalNonContiguousDeletedMessagesRange:   len(ranges),
		Properties:                               map[string]int64{},
	}
	if !s.topic.b.cfg.CompatUpstream {
		batches := map[string][]int32{}
		s.eachPartial(func(p storage.Position, acked []int32) { batches[p.String()] = acked })
		cs.BatchDeletedIndexes = &batches
	}
	return cs
}

// compactedLedgerInfo is internalStats' compactedLedger: −1 everywhere until a compaction
// succeeded, as upstream. Called with t.mu held.
func (t *topic) compactedLedgerInfo() adminapi.LedgerInfo {
	view := t.compactedView()
	if view == nil {
		return adminapi.LedgerInfo{LedgerID: -1, Entries: -1, Size: -1}
	}
	return adminapi.LedgerInfo{LedgerID: view.Ledger, Entries: int64(len(view.Entries)), Size: view.Size}
}
