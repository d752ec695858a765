package broker

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Message deduplication, as upstream: when enabled (the topic's deduplicationEnabled policy,
// else its namespace's, else brokerDeduplicationEnabled) a topic keeps, per producer name, the highest
// sequence id accepted for writing (pushed) and the highest stored durably (persisted). A SEND
// whose sequence id is not above pushed is not stored again; it is answered with a receipt
// whose message id is −1:−1. PRODUCER_SUCCESS tells a producer the pushed high-water mark, as
// upstream's getLastPublishedSequenceId does, so it continues after it: a producer that comes
// back while its predecessor's last writes are still being stored would otherwise number its
// first messages as those, and they would be dropped as duplicates. Only the last chunk of a
// chunked message counts.
//
// persisted survives restarts: it is snapshotted with the cursors (BucketDedup, with the
// position it covers) and, on open, the entries stored after that position are replayed. As
// upstream's MessageDeduplication, a snapshot is taken every brokerDeduplicationEntriesInterval
// entries and, when entries came since the last one, every deduplication snapshot interval
// (the topic's deduplicationSnapshotInterval policy, else its namespace's, else
// brokerDeduplicationSnapshotIntervalSeconds; 0: by entries only), and when the topic is
// unloaded or the broker stops: the longer the interval, the more a restart after a crash
// replays.

type dedupState struct {
	mu        sync.Mutex // a leaf lock: receipts run without the topic lock
	pushed    map[string]int64
	persisted map[string]int64
	covered   storage.Position // every entry up to here is reflected in persisted
	dirty     bool
	// sinceSnapshot counts the entries stored since the last snapshot, taken at lastSnapshot.
	sinceSnapshot int
	lastSnapshot  time.Time
}

type dedupRecord struct {
	Covered [2]int64         `json:"covered"`
	Seqs    map[string]int64 `json:"seqs"`
}

// dedupFor returns t's deduplication state, loading it on first use; nil when t does not
// deduplicate. Called with t.mu held.
func (t *topic) dedupFor() *dedupState {
	if !t.name.Persistent || !t.b.layers(t.name).Deduplication() {
		return nil
	}
	if t.dedup != nil {
		return t.dedup
	}
	d := &dedupState{pushed: map[string]int64{}, persisted: map[string]int64{}, lastSnapshot: t.b.now()}
	from := t.log.First()
	if v, ok, err := t.b.store.Metadata().Get(storage.BucketDedup, t.full); err == nil && ok {
		var rec dedupRecord
		if json.Unmarshal(v, &rec) == nil {
			d.persisted = rec.Seqs
			d.covered = storage.Position{Ledger: rec.Covered[0], Entry: rec.Covered[1]}
			if n := t.log.Next(d.covered); from.Less(n) {
				from = n
			}
		}
	}
	if d.persisted == nil {
		d.persisted = map[string]int64{}
	}
	// Replay what was stored after the snapshot.
	for {
		entries, err := t.log.Read(from, 1000)
		if err != nil || len(entries) == 0 {
			break
		}
		for _, e := range entries {
			if name := e.Meta.ProducerName; name != "" {
				d.persisted[name] = max(d.persisted[name], int64(e.Meta.SequenceID))
			}
			d.covered = e.Pos
		}
		from = t.log.Next(entries[len(entries)-1].Pos)
	}
	for k, v := range d.persisted {
		d.pushed[k] = v
	}
	t.dedup = d
	return d
}

// lastSequenceID is what PRODUCER_SUCCESS reports for a producer name: the highest sequence id
// accepted for writing (pushed; a write that fails rolls it back), -1 without deduplication or
// history.
func (t *topic) lastSequenceID(name string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastSequenceIDLocked(name)
}

func (t *topic) lastSequenceIDLocked(name string) int64 {
	d := t.dedupFor()
	if d == nil {
		return -1
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if v, ok := d.pushed[name]; ok {
		return v
	}
	return -1
}

// accept decides whether a SEND with this sequence id is new; if so it becomes pushed.
func (d *dedupState) accept(name string, seq int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if last, ok := d.pushed[name]; ok && seq <= last {
		return false
	}
	d.pushed[name] = seq
	return true
}

// stored records a durable entry; failed rolls pushed back so the client's resend is taken.
func (d *dedupState) stored(name string, seq int64, pos storage.Position) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if name != "" {
		d.persisted[name] = max(d.persisted[name], seq)
	}
	if d.covered.Less(pos) {
		d.covered = pos
	}
	d.dirty = true
	d.sinceSnapshot++
}

func (d *dedupState) failed(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if v, ok := d.persisted[name]; ok {
		d.pushed[name] = v
	} else {
		delete(d.pushed, name)
	}
}

// snapshot returns the record to persist when anything changed and a snapshot is due: after
// entries stored entries, interval after the last snapshot (0: never by time), or forced.
// pending reports a change whose snapshot is not due yet.
func (d *dedupState) snapshot(now time.Time, interval time.Duration, entries int, force bool) (v []byte, ok, pending bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dirty {
		return nil, false, false
	}
	if !force && d.sinceSnapshot < entries && (interval <= 0 || now.Sub(d.lastSnapshot) < interval) {
		return nil, false, true
	}
	d.dirty, d.sinceSnapshot, d.lastSnapshot = false, 0, now
	v, err := json.Marshal(dedupRecord{Covered: [2]int64{d.covered.Ledger, d.covered.Entry}, Seqs: d.persisted})
	return v, err == nil, false
}

// duplicateReceipt is the receipt for a SEND that was already stored, of its own memory
// (sendError says why).
func duplicateReceipt(p *producer, send *pb.CommandSend) *pb.BaseCommand {
	r := &pb.CommandSendReceipt{
		ProducerId: &p.id,
		SequenceId: ptr(send.GetSequenceId()),
		MessageId:  &pb.MessageIdData{LedgerId: ptr(^uint64(0)), EntryId: ptr(^uint64(0))},
	}
	if send.HighestSequenceId != nil {
		r.HighestSequenceId = ptr(send.GetHighestSequenceId())
	}
	return &pb.BaseCommand{Type: pb.BaseCommand_SEND_RECEIPT.Enum(), SendReceipt: r}
}
