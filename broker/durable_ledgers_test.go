package broker_test

// A durable topic's segments are its ledgers, as upstream lists them in internal stats, and
// examine-message counts positions across them.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
)

func TestDurableLedgersAndExamine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startStore(t, dir, storage.FileStoreOptions{SegmentSize: 8 << 10})
	topic := topicName(t)
	c := newClient(t, b)
	// A subscription that reads nothing keeps every entry.
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"}).Close()
	const n = 40
	publishKiB(t, c, topic, n)

	st, err := b.InternalStats(topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Ledgers) < 4 {
		t.Fatalf("ledgers = %+v, want one per 8 KiB segment", st.Ledgers)
	}
	// As upstream, the open ledger is listed with 0 entries (its count is currentLedgerEntries)
	// and each closed one with its entries and a timestamp.
	last := st.Ledgers[len(st.Ledgers)-1]
	sum := st.CurrentLedgerEntries
	for _, l := range st.Ledgers[:len(st.Ledgers)-1] {
		sum += l.Entries
		if l.Entries == 0 || l.Size == 0 || l.Timestamp == 0 {
			t.Errorf("closed ledger %+v: want entries, size and timestamp", l)
		}
	}
	if sum != n || st.NumberOfEntries != n || st.EntriesAddedCounter != n || last.Entries != 0 || last.Size != 0 {
		t.Errorf("entries: ledgers sum %d, numberOfEntries %d, added %d, open ledger %+v; want %d and an open ledger listed empty",
			sum, st.NumberOfEntries, st.EntriesAddedCounter, last, n)
	}
	if want := fmt.Sprintf("%d:%d", last.LedgerID, st.CurrentLedgerEntries-1); st.LastConfirmedEntry != want {
		t.Errorf("lastConfirmedEntry = %s, want %s", st.LastConfirmedEntry, want)
	}

	// The k-th entry from either end, across segment boundaries, holds payload k-1 (or n-k).
	for _, k := range []int64{1, 2, 7, 8, 9, 25, n} {
		for _, latest := range []bool{false, true} {
			e, err := b.ExamineEntry(topic, latest, k)
			if err != nil {
				t.Fatalf("examine %d (latest %v): %v", k, latest, err)
			}
			want := k - 1
			if latest {
				want = n - k
			}
			if got := payloadIndex(t, e.Data); got != want {
				t.Errorf("examine %d (latest %v) = message %d, want %d", k, latest, got, want)
			}
		}
	}
	if _, err := b.ExamineEntry(topic, false, n+1); err == nil {
		t.Error("examine past the end: no error")
	}
}

// payloadIndex reads the number publishKiB wrote into a stored entry.
func payloadIndex(t *testing.T, data []byte) int64 {
	t.Helper()
	_, payload, err := wire.ParsePayload(data)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(payload)), 10, 64)
	if err != nil {
		t.Fatalf("payload %.20q: %v", payload, err)
	}
	return n
}
