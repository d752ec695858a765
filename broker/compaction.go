package broker

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Topic compaction, as upstream's TwoPhaseCompactor and CompactedTopicImpl.
//
// A compaction reads the topic from the __compaction subscription's mark-delete position to the
// last entry stored when it started (the new horizon) and folds what it reads into the previous
// compacted view: the latest message of each key wins, a message with an empty payload (a
// tombstone) removes its key, messages without a key are left out. The result is the compacted
// view: the entries holding a winning message, at their original positions, each with the ack
// set that hides the messages of a batch that did not win. It is stored in the metadata store
// (in memory with --in-memory) before the __compaction subscription acknowledges up to the
// horizon, so entries up to there may then be trimmed while the view keeps what readers of the
// compacted topic need. readCompacted consumers read the view up to the horizon, then the log
// (compaction_read.go); the admin API starts one (admin_compaction.go) and the
// compactionThreshold policy triggers one by itself (compaction_trigger.go).

// compactionSubscription is upstream's Compactor.COMPACTION_SUBSCRIPTION.
const compactionSubscription = "__compaction"

// bucketCompacted holds each topic's compacted view: topic → compactedRecord JSON.
const bucketCompacted = "compacted"

// Compaction states, as upstream's LongRunningProcessStatus.
const (
	compactionNotRun  = "NOT_RUN"
	compactionRunning = "RUNNING"
	compactionSuccess = "SUCCESS"
	compactionError   = "ERROR"
)

// compactedEntry is one entry of the compacted view. AckSet (bit set = message kept) is nil when
// every message of the entry is kept.
type compactedEntry struct {
	Pos    storage.Position `json:"pos"`
	Meta   storage.Meta     `json:"meta"`
	Data   []byte           `json:"data"`
	AckSet []int64          `json:"ackSet,omitempty"`
	// Keys are the kept messages' keys with their batch index (−1 for an entry that is not a
	// batch): what the next compaction folds new messages into.
	Keys map[string]int32 `json:"keys"`
}

// compactedRecord is a topic's compacted view as stored, and as kept in memory.
type compactedRecord struct {
	// Ledger numbers the compactions of the topic (upstream's compacted ledger id).
	Ledger  int64            `json:"ledger"`
	Horizon storage.Position `json:"horizon"`
	Entries []compactedEntry `json:"entries"` // by position
	Size    int64            `json:"size"`    // bytes of data
}

// compactionState is a topic's compaction: the view readers see and the run in progress.
// Guarded by the topic's mutex.
type compactionState struct {
	view    *compactedRecord // nil: never compacted
	status  string
	lastErr string
}

// compactionOf returns t's compaction state, loading the stored view on first use. Called with
// t.mu held.
func (t *topic) compactionOf() *compactionState {
	if t.compaction != nil {
		return t.compaction
	}
	t.compaction = &compactionState{status: compactionNotRun}
	v, ok, err := t.b.store.Metadata().Get(bucketCompacted, t.full)
	if err != nil {
		t.b.log.Error("reading the compacted view", "topic", t.full, "err", err)
		return t.compaction
	}
	if ok {
		var rec compactedRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			t.b.log.Error("decoding the compacted view; readers of the compacted topic get the whole log", "topic", t.full, "err", err)
			return t.compaction
		}
		t.compaction.view = &rec
	}
	return t.compaction
}

// compactedView is t's compacted view, nil if there is none. Called with t.mu held.
func (t *topic) compactedView() *compactedRecord {
	if !t.name.Persistent {
		return nil
	}
	return t.compactionOf().view
}

// startCompaction starts a compaction of t unless one is running.
func (t *topic) startCompaction() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return adminErr(ErrPreconditionFailed, "Topic %s is closing", t.full)
	}
	c := t.compactionOf()
	if c.status == compactionRunning {
		return adminErr(ErrConflict, "Compaction already in progress")
	}
	sub := t.subs[compactionSubscription]
	if sub == nil {
		// Upstream's compactor subscribes durably from the earliest entry.
		sub = newSubscription(t, compactionSubscription, pb.CommandSubscribe_Exclusive, true, t.log.First())
		if err := t.persistSubscription(sub); err != nil {
			return fmt.Errorf("cannot store the %s subscription of %s: %w", compactionSubscription, t.full, err)
		}
		t.subs[compactionSubscription] = sub
	}
	run := compactionRun{
		t:       t,
		from:    t.log.Next(sub.markDelete),
		horizon: t.log.Last(),
		prev:    c.view,
	}
	if first := t.log.First(); run.from.Less(first) {
		run.from = first
	}
	c.status, c.lastErr = compactionRunning, ""
	t.wg.Add(1)
	go run.run()
	return nil
}

// compactionRun is one compaction: it reads [from, horizon] without holding the topic's lock.
type compactionRun struct {
	t       *topic
	from    storage.Position
	horizon storage.Position
	prev    *compactedRecord
}

func (r compactionRun) run() {
	t := r.t
	defer t.wg.Done()
	defer t.b.recoverPanic("compacting "+t.full, nil)
	view, err := r.compact()
	if err == nil {
		err = t.storeCompacted(view)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.compactionOf()
	if err != nil {
		c.status, c.lastErr = compactionError, err.Error()
		t.b.log.Warn("compaction failed", "topic", t.full, "err", err)
		return
	}
	c.view = view
	c.status = compactionSuccess
	// The view holds what readers of the compacted topic need up to the horizon: the
	// __compaction subscription lets go of it.
	if sub := t.subs[compactionSubscription]; sub != nil && sub.markDelete.Less(view.Horizon) {
		sub.ackCumulative(view.Horizon, nil)
	}
	t.signal()
}

// errStopped: the topic closed while a compaction was running.
var errStopped = fmt.Errorf("the topic was closed during compaction")

// compact is upstream's two phases: the first finds each key's latest message up to the
// horizon, the second collects the entries holding them.
func (r compactionRun) compact() (*compactedRecord, error) {
	// latest maps each key to where its latest message is: entry and batch index.
	type at struct {
		pos   storage.Position
		index int32
	}
	latest := map[string]at{}
	if r.prev != nil {
		for _, e := range r.prev.Entries {
			for k, i := range e.Keys {
				latest[k] = at{e.Pos, i}
			}
		}
	}
	empty := r.horizon.Entry < 0 || r.horizon.Less(r.from)
	if !empty {
		err := r.scan(func(e storage.Entry) {
			for _, m := range entryKeys(e) {
				if m.tombstone {
					delete(latest, m.key)
				} else {
					latest[m.key] = at{e.Pos, m.index}
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	// Which messages of which entries are kept.
	kept := map[storage.Position]map[string]int32{}
	for k, a := range latest {
		if kept[a.pos] == nil {
			kept[a.pos] = map[string]int32{}
		}
		kept[a.pos][k] = a.index
	}
	view := &compactedRecord{Ledger: 1, Horizon: r.horizon}
	if r.prev != nil {
		view.Ledger = r.prev.Ledger + 1
		if empty {
			view.Horizon = r.prev.Horizon
		}
		for _, e := range r.prev.Entries {
			if keys := kept[e.Pos]; keys != nil {
				view.Entries = append(view.Entries, keptEntry(e.Pos, e.Meta, e.Data, keys))
			}
		}
	}
	if !empty {
		err := r.scan(func(e storage.Entry) {
			if keys := kept[e.Pos]; keys != nil {
				view.Entries = append(view.Entries, keptEntry(e.Pos, e.Meta, e.Data, keys))
			}
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(view.Entries, func(a, b compactedEntry) int { return comparePos(a.Pos, b.Pos) })
	for _, e := range view.Entries {
		view.Size += int64(len(e.Data))
	}
	return view, nil
}

// scan calls fn for every stored entry in [from, horizon], stopping early if the topic closes.
func (r compactionRun) scan(fn func(storage.Entry)) error {
	t := r.t
	from := r.from
	for !r.horizon.Less(from) {
		select {
		case <-t.done:
			return errStopped
		default:
		}
		entries, err := t.log.Read(from, 256)
		if err != nil {
			return fmt.Errorf("reading %s at %s: %w", t.full, from, err)
		}
		if len(entries) == 0 {
			return nil
		}
		for _, e := range entries {
			if r.horizon.Less(e.Pos) {
				return nil
			}
			fn(e)
			from = t.log.Next(e.Pos)
		}
	}
	return nil
}

// keptEntry is the view's entry for the messages keys (key → batch index) of the entry at pos.
func keptEntry(pos storage.Position, meta storage.Meta, data []byte, keys map[string]int32) compactedEntry {
	e := compactedEntry{Pos: pos, Meta: meta, Data: data, Keys: keys}
	if !meta.Batched {
		return e
	}
	n := int(meta.NumMessages)
	if len(keys) == n {
		return e // every message kept
	}
	e.AckSet = make([]int64, (n+63)/64)
	for _, i := range keys {
		if i >= 0 && int(i) < n {
			e.AckSet[i/64] |= 1 << (i % 64)
		}
	}
	return e
}

// storeCompacted writes view to the metadata store, durably with a durable store.
func (t *topic) storeCompacted(view *compactedRecord) error {
	v, err := json.Marshal(view)
	if err != nil {
		return fmt.Errorf("encoding the compacted view: %w", err)
	}
	if err := t.b.store.Metadata().Update(func(tx storage.MetadataTx) error {
		return tx.Put(bucketCompacted, t.full, v)
	}); err != nil {
		return fmt.Errorf("storing the compacted view: %w", err)
	}
	return nil
}
