package broker

import (
	"encoding/json"
	"testing"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// The cursor flusher visits only the topics whose cursors changed, and writes what changed
// there: here a backlog cleared through the admin API on one of two quiet topics.
func TestCursorFlushVisitsChangedTopicsOnly(t *testing.T) {
	b, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	topics := []string{"persistent://public/default/quiet", "persistent://public/default/moved"}
	for _, topic := range topics {
		if err := b.CreateTopic(topic, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.CreateSubscription(topic, "s", adminapi.MessageID{LedgerID: -1, EntryID: -1, PartitionIndex: -1}); err != nil {
			t.Fatal(err)
		}
	}
	moved, serr := b.topics.get(mustTopicName(t, topics[1]), false, "")
	if serr != nil {
		t.Fatal(serr)
	}
	done := make(chan storage.Position, 3)
	for range 3 {
		moved.log.Append(storage.Meta{NumMessages: 1}, []byte("m"), nil, func(p storage.Position, err error) {
			if err != nil {
				t.Error(err)
			}
			done <- p
		})
	}
	var last storage.Position
	for range 3 {
		last = <-done
	}
	b.flushCursors(false)
	if left := b.dirty.take(); len(left) != 0 {
		t.Fatalf("after a flush %d topics are still to visit", len(left))
	}
	if err := b.ClearBacklog(topics[1], "s"); err != nil {
		t.Fatal(err)
	}
	b.dirty.mu.Lock()
	_, quiet := b.dirty.topics[b.topics.topics[topics[0]]]
	_, changed := b.dirty.topics[moved]
	b.dirty.mu.Unlock()
	if quiet || !changed {
		t.Fatalf("to visit: the quiet topic %v, the changed one %v", quiet, changed)
	}
	b.flushCursors(false)
	v, ok, err := b.store.Metadata().Get(storage.BucketCursors, cursorKey(topics[1], "s"))
	var rec cursorRecord
	if err == nil && ok {
		err = json.Unmarshal(v, &rec)
	}
	if err != nil || !ok || rec.MarkDelete != [2]int64{last.Ledger, last.Entry} {
		t.Fatalf("stored cursor %+v (%v, %v), want the mark-delete at %v", rec, ok, err, last)
	}
}

func mustTopicName(t *testing.T, s string) naming.Topic {
	t.Helper()
	n, err := parseTopicName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
