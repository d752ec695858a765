package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// durableEnv is newEnv over a durable store in a fresh directory, with small segments so that
// a few messages span several ledgers.
func durableEnv(t *testing.T, segmentSize int64) *env {
	t.Helper()
	store, err := storage.OpenFileStore(t.TempDir(), storage.FileStoreOptions{SegmentSize: segmentSize})
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, broker.WithStore(store))
}

// internalStats lists our segments as upstream lists its ledgers (the open one with 0 entries,
// closed ones with entries, size and a timestamp) and our subscriptions as cursors, with
// upstream's meaning of messagesConsumedCounter (entriesAddedCounter minus the backlog) and
// individuallyDeletedMessages.
func TestPulsarAdminInternalStatsLedgersAndCursors(t *testing.T) {
	t.Parallel()
	e := durableEnv(t, 8<<10)
	topic := "persistent://public/default/internal-stats"
	tn := *topicName(t, topic)
	c := e.client(t)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	must(t, err)
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p.Close()
	const n = 40
	payload := []byte(strings.Repeat("x", 1000))
	for range n {
		_, err := p.Send(context.Background(), &pulsar.ProducerMessage{Payload: payload})
		must(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ids []pulsar.MessageID
	for range n {
		msg, err := cons.Receive(ctx)
		must(t, err)
		ids = append(ids, msg.ID())
	}
	// 0, 1, 2 then 4, 5: the mark-delete position is message 2, and 3 holds the rest back.
	for _, i := range []int{0, 1, 2, 4, 5} {
		must(t, cons.AckID(ids[i]))
	}
	pos := func(id pulsar.MessageID) string { return fmt.Sprintf("%d:%d", id.LedgerID(), id.EntryID()) }
	if ids[5].LedgerID() != ids[0].LedgerID() {
		t.Fatalf("messages 0 and 5 in ledgers %d and %d: the test wants them in one", ids[0].LedgerID(), ids[5].LedgerID())
	}
	var st utils.PersistentTopicInternalStats
	brokertest.WaitForNil(t, 10*time.Second, "the cursor after the acks", func() error {
		st, err = e.adm.Topics().GetInternalStats(tn)
		if err != nil {
			return err
		}
		cs := st.Cursors["s"]
		if cs.MarkDeletePosition != pos(ids[2]) {
			return fmt.Errorf("markDeletePosition %s, want %s", cs.MarkDeletePosition, pos(ids[2]))
		}
		if want := fmt.Sprintf("[(%s..%s]]", pos(ids[3]), pos(ids[5])); cs.IndividuallyDeletedMessages != want {
			return fmt.Errorf("individuallyDeletedMessages %s, want %s", cs.IndividuallyDeletedMessages, want)
		}
		return nil
	})
	if len(st.Ledgers) < 4 {
		t.Fatalf("ledgers %+v: want one per 8 KiB segment", st.Ledgers)
	}
	open := st.Ledgers[len(st.Ledgers)-1]
	sum := st.CurrentLedgerEntries
	for _, l := range st.Ledgers[:len(st.Ledgers)-1] {
		if l.Entries == 0 || l.Size == 0 || l.Timestamp == 0 || l.Offloaded {
			t.Errorf("closed ledger %+v: want entries, size, a timestamp, not offloaded", l)
		}
		sum += l.Entries
	}
	if open.Entries != 0 || open.Size != 0 || st.CurrentLedgerEntries == 0 || st.CurrentLedgerSize == 0 {
		t.Errorf("open ledger %+v, current entries %d size %d: want it listed empty and counted in currentLedger*", open, st.CurrentLedgerEntries, st.CurrentLedgerSize)
	}
	if sum != n || st.NumberOfEntries != n || st.EntriesAddedCounter != n || st.TotalSize < n*1000 {
		t.Errorf("entries %d, numberOfEntries %d, added %d, totalSize %d: want %d entries", sum, st.NumberOfEntries, st.EntriesAddedCounter, st.TotalSize, n)
	}
	if st.LastConfirmedEntry != pos(ids[n-1]) || st.State != "LedgerOpened" {
		t.Errorf("lastConfirmedEntry %s, state %s: want %s, LedgerOpened", st.LastConfirmedEntry, st.State, pos(ids[n-1]))
	}
	cs := st.Cursors["s"]
	// Five acknowledged of forty: entriesAddedCounter − messagesConsumedCounter is the backlog.
	if cs.MessagesConsumedCounter != 5 || cs.CursorLedger != -1 || cs.State != "Open" || cs.TotalNonContiguousDeletedMessagesRange != 1 {
		t.Errorf("cursor %+v: want messagesConsumedCounter 5, cursorLedger -1, state Open, one range", cs)
	}
	if cs.ReadPosition != fmt.Sprintf("%d:%d", ids[n-1].LedgerID(), ids[n-1].EntryID()+1) {
		t.Errorf("readPosition %s, want the one after %s", cs.ReadPosition, pos(ids[n-1]))
	}
}
