package broker

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// What the broker keeps in the store's metadata, and how it comes back on start. Cursors are
// written in batches (one metadata transaction per CursorFlushInterval for every subscription
// that changed), so a crash redelivers at most what was acknowledged since the last flush:
// at-least-once, as upstream.

// cursorRecord is a durable subscription as stored.
type cursorRecord struct {
	Type       string             `json:"type"`
	MarkDelete [2]int64           `json:"markDelete"`
	Acked      [][3]int64         `json:"acked,omitempty"`   // ledger, first entry, last entry
	Partial    map[string][]int64 `json:"partial,omitempty"` // "ledger:entry" → ack set
	Properties map[string]string  `json:"properties,omitempty"`
	Created    int64              `json:"created"`
}

// topicRecord is a topic's own metadata.
type topicRecord struct {
	Properties map[string]string `json:"properties,omitempty"`
	Created    int64             `json:"created"`
	Terminated bool              `json:"terminated,omitempty"` // by the admin API (admin_topic_messages.go)
}

func (b *Broker) loadTopicRecord(full string) (topicRecord, bool, error) {
	var rec topicRecord
	v, ok, err := b.store.Metadata().Get(storage.BucketTopics, full)
	if err != nil || !ok {
		return rec, false, err
	}
	return rec, true, json.Unmarshal(v, &rec)
}

func (b *Broker) storeTopicRecord(full string, rec topicRecord) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return b.store.Metadata().Update(func(tx storage.MetadataTx) error {
		return tx.Put(storage.BucketTopics, full, v)
	})
}

type partitionedRecord struct {
	Partitions int `json:"partitions"`
}

func cursorKey(topic, sub string) string { return topic + "\x00" + sub }

// snapshot encodes s's cursor. Called with the topic's mutex held.
func (s *subscription) snapshot() cursorRecord {
	rec := cursorRecord{
		Type:       s.subType.String(),
		MarkDelete: [2]int64{s.markDelete.Ledger, s.markDelete.Entry},
		Properties: s.props,
		Created:    s.created.UnixMilli(),
	}
	// Only the first ranges are stored, as upstream's managedLedgerMaxUnackedRangesToPersist:
	// past them the acknowledgements live in memory only, and a crash redelivers them.
	s.acked.each(s.topic.b.cfg.ManagedLedgerMaxUnackedRangesToPersist, func(r entryRange) {
		rec.Acked = append(rec.Acked, [3]int64{r.ledger, r.first, r.last})
	})
	if len(s.partial) > 0 {
		rec.Partial = make(map[string][]int64, len(s.partial))
		for p, set := range s.partial {
			rec.Partial[p.String()] = set
		}
	}
	return rec
}

// restore applies a stored cursor to a fresh subscription.
func (s *subscription) restore(rec cursorRecord) {
	s.resetTo(storage.Position{Ledger: rec.MarkDelete[0], Entry: rec.MarkDelete[1] + 1})
	for _, r := range rec.Acked {
		if r[2] >= r[1] && s.markDelete.Less(storage.Position{Ledger: r[0], Entry: r[2]}) {
			s.acked.addRange(r[0], r[1], r[2])
		}
	}
	s.acked.dropThrough(s.markDelete)
	for k, set := range rec.Partial {
		var p storage.Position
		if _, err := fmt.Sscanf(k, "%d:%d", &p.Ledger, &p.Entry); err == nil {
			s.partial[p] = set
		}
	}
	s.props = rec.Properties
	if rec.Created > 0 {
		s.created = time.UnixMilli(rec.Created)
	}
	// A stored mark-delete may sit before the first entry still stored (trimmed segments).
	if first := s.topic.log.First(); s.readPos.Less(first) {
		s.readPos = first
	}
	s.advanceMarkDelete()
	s.dirty = false
}

// persistSubscription writes a new durable subscription's cursor at once: a subscription the
// client was told exists must survive a crash (later cursor moves are batched). Called with
// t.mu held.
func (t *topic) persistSubscription(s *subscription) error {
	if !s.durable {
		return nil
	}
	v, err := json.Marshal(s.snapshot())
	if err != nil {
		return err
	}
	if err := t.b.store.Metadata().Update(func(tx storage.MetadataTx) error {
		return tx.Put(storage.BucketCursors, cursorKey(t.full, s.name), v)
	}); err != nil {
		return err
	}
	s.dirty = false
	return nil
}

// recover loads tenants, namespaces, partitioned metadata and schemas from the store, and the
// names of the stored topics, which open on first use with their durable subscriptions.
func (b *Broker) recover() error {
	if err := b.recoverAdmin(); err != nil { // tenants, namespaces (admin_tenants.go)
		return err
	}
	meta := b.store.Metadata()
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	err := meta.Scan(storage.BucketPartitioned, "", func(key string, v []byte) bool {
		var rec partitionedRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			keep(fmt.Errorf("partitioned metadata of %s: %w", key, err))
			return true
		}
		b.topics.partitioned[key] = rec.Partitions
		return true
	})
	if err != nil {
		return err
	}
	if err := b.schemas.load(); err != nil {
		return err
	}
	// Topics themselves open on first use (topics_lazy.go): only their names are read here.
	if err := b.topics.loadStoredNames(); err != nil {
		return err
	}
	if firstErr != nil {
		// Damaged metadata must not stop the broker: serve what can be served, say what cannot.
		b.log.Error("some stored metadata could not be recovered", "err", firstErr)
	}
	return nil
}

// flushLoop writes changed cursors every CursorFlushInterval until the broker stops.
func (b *Broker) flushLoop() {
	defer b.wg.Done()
	t := time.NewTicker(b.cfg.CursorFlushInterval)
	defer t.Stop()
	// The frame buffer pool gives its idle buffers back once the broker has been quiet for a
	// minute: not between the bursts of a load test, whose next burst would otherwise take
	// every ledger's slabs fresh from the runtime again, and collect them.
	trim := time.NewTicker(time.Minute)
	defer trim.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.guard("flushing cursors", func() { b.flushCursors(false) })
		case <-trim.C:
			b.bufs.Trim()
		}
	}
}

// flushCursors writes every changed durable cursor, and removes deleted ones, in one
// metadata transaction; final (the broker stops) takes the deduplication snapshots that are
// not due yet too.
func (b *Broker) flushCursors(final bool) {
	w := newStateWrites()
	w.final = final
	for _, t := range b.dirty.take() { // only the topics that changed (dirty.go)
		t.locked(func() { w.gather(b, t, false) })
	}
	if w.empty() {
		return
	}
	if err := w.write(b.store.Metadata()); err != nil {
		// Mark them dirty again so the next flush retries.
		b.log.Error("persist cursors", "err", err)
		for _, t := range b.topics.all() {
			t.mu.Lock()
			for _, s := range t.subs {
				if _, ok := w.cursors[cursorKey(t.full, s.name)]; ok {
					s.markDirty()
				}
			}
			t.mu.Unlock()
		}
	}
}

// stateWrites are the metadata writes of topics' durable state, gathered under each topic's
// mutex and written in one transaction: cursors to store, cursors deleted, deduplication
// snapshots. The cursor flusher and an unload both use it.
type stateWrites struct {
	cursors map[string][]byte // cursorKey → encoded cursor
	deleted []string          // cursorKeys of deleted subscriptions
	dedup   map[string][]byte // topic → deduplication snapshot
	final   bool              // the broker stops: take deduplication snapshots not yet due
}

func newStateWrites() *stateWrites {
	return &stateWrites{cursors: map[string][]byte{}, dedup: map[string][]byte{}}
}

// gather adds t's state: with all every durable cursor, else the changed ones (marked clean
// once gathered), the subscriptions deleted since the last gathering, and the deduplication
// state when it changed. Called with t's mutex held.
func (w *stateWrites) gather(b *Broker, t *topic, all bool) {
	for _, s := range t.subs {
		if !s.durable || !(s.dirty || all) {
			continue
		}
		v, err := json.Marshal(s.snapshot())
		if err != nil {
			b.log.Error("encode cursor", "topic", t.full, "subscription", s.name, "err", err)
			continue
		}
		w.cursors[cursorKey(t.full, s.name)] = v
		s.dirty = false
	}
	for _, name := range t.deletedSubs {
		w.deleted = append(w.deleted, cursorKey(t.full, name))
	}
	t.deletedSubs = nil
	if t.dedup != nil {
		v, ok, pending := t.dedup.snapshot(b.now(), t.limits().dedupSnapshotInterval, b.cfg.BrokerDeduplicationEntriesInterval, all || w.final)
		if ok {
			w.dedup[t.full] = v
		} else if pending {
			t.markDirty() // not due yet: the next flush looks again (dedup.go)
		}
	}
}

func (w *stateWrites) empty() bool {
	return len(w.cursors) == 0 && len(w.deleted) == 0 && len(w.dedup) == 0
}

// write stores what was gathered in one transaction. A subscription deleted and created again
// since is stored, not deleted.
func (w *stateWrites) write(meta storage.Metadata) error {
	return meta.Update(func(tx storage.MetadataTx) error {
		for _, k := range w.deleted {
			if _, ok := w.cursors[k]; ok {
				continue
			}
			if err := tx.Delete(storage.BucketCursors, k); err != nil {
				return err
			}
		}
		for k, v := range w.cursors {
			if err := tx.Put(storage.BucketCursors, k, v); err != nil {
				return err
			}
		}
		for k, v := range w.dedup {
			if err := tx.Put(storage.BucketDedup, k, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// persistPartitioned records a partitioned topic's partition count (0 removes it).
func (b *Broker) persistPartitioned(base string, n int) error {
	return b.store.Metadata().Update(func(tx storage.MetadataTx) error {
		if n == 0 {
			return tx.Delete(storage.BucketPartitioned, base)
		}
		v, err := json.Marshal(partitionedRecord{Partitions: n})
		if err != nil {
			return err
		}
		return tx.Put(storage.BucketPartitioned, base, v)
	})
}
