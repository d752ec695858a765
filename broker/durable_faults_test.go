package broker_test

// Durable storage under damage and failure: a corrupted segment tail found on start, and a
// disk that fills up (or fails to sync) while the broker runs.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// startStore starts a broker on a FileStore in dir opened with opts. The broker owns the store
// and closes it with itself.
func startStore(t *testing.T, dir string, opts storage.FileStoreOptions, mods ...func(*broker.Config)) *broker.Broker {
	t.Helper()
	store, err := storage.OpenFileStore(dir, opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return startBroker(t, append([]func(*broker.Config){func(c *broker.Config) { c.Store = store }}, mods...)...)
}

// segmentFiles returns the paths of topic's segment files in data directory dir, oldest first.
func segmentFiles(t *testing.T, dir, topic string) []string {
	return topicFiles(t, dir, topic, "*.seg")
}

// topicFiles returns the paths of the files matching pattern in topic's directory in data
// directory dir, sorted.
func topicFiles(t *testing.T, dir, topic, pattern string) []string {
	t.Helper()
	var escaped strings.Builder
	for _, c := range []byte(topic) {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' {
			escaped.WriteByte(c)
		} else {
			fmt.Fprintf(&escaped, "%%%02X", c)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "topics", escaped.String(), pattern))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files) // ledger ids are zero-padded
	return files
}

// syncBuffer is a bytes.Buffer safe for the broker's goroutines to log to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A segment whose tail was damaged while the broker was down (a flipped byte in one record, the
// last record cut in half) is cut at the first bad record on start, with a log line saying so;
// what precedes it is served, and the topic takes new messages.
func TestDurableCorruptedTail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	topic := topicName(t)
	const n, bad = 20, 15

	b := startStore(t, dir, storage.FileStoreOptions{})
	c := newClient(t, b)
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest}).Close()
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", n)
	p.Close()
	c.Close()
	b.Close()

	files := segmentFiles(t, dir, topic)
	if len(files) == 0 {
		t.Fatal("no segment file")
	}
	seg := files[len(files)-1]
	raw, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// Walk the records (segment.go: a 16-byte header, then length, CRC, body).
	var offs []int
	for off := 16; off+8 <= len(raw); off += 8 + int(binary.LittleEndian.Uint32(raw[off:])) {
		offs = append(offs, off)
	}
	if len(offs) != n {
		t.Fatalf("the last segment holds %d records, want %d", len(offs), n)
	}
	raw[offs[bad]+8+20] ^= 0xff // a byte inside record 15's body
	raw = raw[:offs[n-1]+8+5]   // the last record cut in half
	if err := os.WriteFile(seg, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	logs := &syncBuffer{}
	b2 := startStore(t, dir, storage.FileStoreOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	c2 := newClient(t, b2)
	want := make([]string, bad)
	for i := range want {
		want[i] = fmt.Sprintf("m%d", i)
	}
	if got := readAll(t, c2, topic); !slices.Equal(got, want) {
		t.Fatalf("after recovery the topic holds %v, want %v", got, want)
	}
	// The topic is recovered when it is first used (topics open on first use).
	if !strings.Contains(logs.String(), "cut a torn or corrupt tail") || !strings.Contains(logs.String(), fmt.Sprintf("offset=%d", offs[bad])) {
		t.Errorf("recovery did not log the cut at offset %d:\n%s", offs[bad], logs)
	}
	cons := subscribe(t, c2, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
	if got := payloads(receiveN(t, cons, bad, 10*time.Second)); !slices.Equal(got, want) {
		t.Fatalf("the subscription got %v, want %v", got, want)
	}
	p2 := createProducer(t, c2, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	if _, err := p2.Send(testCtx(t, 10*time.Second), &pulsar.ProducerMessage{Payload: []byte("after")}); err != nil {
		t.Fatal(err)
	}
	if m := receiveOne(t, cons, 10*time.Second); string(m.Payload()) != "after" {
		t.Fatalf("got %q after m%d, want after", m.Payload(), bad-1)
	}
	expectNothing(t, cons, 200*time.Millisecond)
}

// readAll reads topic from its first stored message to its last.
func readAll(t *testing.T, c pulsar.Client, topic string) []string {
	t.Helper()
	r, err := c.CreateReader(pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()})
	if err != nil {
		t.Fatalf("create reader: %v", err)
	}
	defer r.Close()
	ctx := testCtx(t, 10*time.Second)
	var out []string
	for r.HasNext() {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("read (%d so far): %v", len(out), err)
		}
		out = append(out, string(m.Payload()))
	}
	return out
}

// A full disk (writes fail with ENOSPC) or a failing one (syncs fail with EIO) fails SENDs with
// PersistenceError; the broker keeps serving what it has, and once the disk is healthy again
// writes resume, the official client's retried send among them, with nothing lost or
// duplicated — also after a restart.
func TestDurableDiskFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fail func(*storage.FaultFS)
	}{
		{"full", func(f *storage.FaultFS) { f.FailWrites(syscall.ENOSPC) }},
		{"sync-fails", func(f *storage.FaultFS) { f.FailSyncs(syscall.EIO) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			topic := topicName(t)
			fault := &storage.FaultFS{}
			b := startStore(t, dir, storage.FileStoreOptions{FS: fault})

			// Separate clients: the official client drops its connection on a PersistenceError,
			// which must not disturb the consumer.
			cc := newClient(t, b)
			subscribe(t, cc, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep",
				SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest}).Close()
			pc := newClient(t, b)
			p := createProducer(t, pc, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
			sendN(t, p, "m", 5)

			tc.fail(fault)
			raw, _ := connectRaw(t, b, "raw", 21)
			pid := raw.id()
			name := raw.createProducer(topic, pid)
			raw.sendPayload(rawSendCommand(pid, 0), rawMetadata(name, 0), []byte("raw-during"))
			se := raw.expect(pb.BaseCommand_SEND_ERROR).GetSendError()
			if se.GetError() != pb.ServerError_PersistenceError || se.GetSequenceId() != 0 {
				t.Fatalf("SEND_ERROR %v, want PersistenceError for sequence 0", se)
			}
			t.Logf("SEND_ERROR: %s", se.GetMessage())
			// The official client retries a send that failed with PersistenceError (it reconnects
			// and resends); this one completes once the disk is back.
			during := make(chan error, 1)
			p.SendAsync(testCtx(t, 30*time.Second), &pulsar.ProducerMessage{Payload: []byte("during")},
				func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { during <- err })

			// Reads go on: a new subscription gets what was stored before the failure.
			cons := subscribe(t, cc, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "late",
				SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
			want := []string{"m0", "m1", "m2", "m3", "m4"}
			if got := payloads(receiveN(t, cons, 5, 10*time.Second)); !slices.Equal(got, want) {
				t.Fatalf("during the failure the consumer got %v, want %v", got, want)
			}
			select {
			case err := <-during:
				t.Fatalf("a send completed while the disk was failing: %v", err)
			default:
			}
			// Still failing: the failed SEND did not leave the producer or topic wedged.
			raw.sendPayload(rawSendCommand(pid, 1), rawMetadata(name, 1), []byte("raw-during-2"))
			if se := raw.expect(pb.BaseCommand_SEND_ERROR).GetSendError(); se.GetError() != pb.ServerError_PersistenceError {
				t.Fatalf("second SEND_ERROR %v, want PersistenceError", se)
			}

			fault.Heal()
			select {
			case err := <-during:
				if err != nil {
					t.Fatalf("the send made during the failure failed after healing: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the send made during the failure did not complete after healing")
			}
			raw.sendPayload(rawSendCommand(pid, 2), rawMetadata(name, 2), []byte("raw-after"))
			if r := raw.expect(pb.BaseCommand_SEND_RECEIPT).GetSendReceipt(); r.GetSequenceId() != 2 {
				t.Fatalf("receipt %v, want sequence 2", r)
			}
			want = append(want, "during", "raw-after")
			if got := payloads(receiveN(t, cons, 2, 10*time.Second)); !slices.Equal(got, want[5:]) {
				t.Fatalf("after healing the consumer got %v, want %v", got, want[5:])
			}
			expectNothing(t, cons, 200*time.Millisecond)
			if got := readAll(t, cc, topic); !slices.Equal(got, want) {
				t.Fatalf("after healing the topic holds %v, want %v", got, want)
			}

			// A restart finds the same messages: nothing half-written was left in a segment.
			// (Clients go first, so that none is left retrying against a stopped broker.)
			cons.Close()
			p.Close()
			pc.Close()
			cc.Close()
			b.Close()
			logs := &syncBuffer{}
			b2 := startStore(t, dir, storage.FileStoreOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if got := readAll(t, newClient(t, b2), topic); !slices.Equal(got, want) {
				t.Fatalf("after a restart the topic holds %v, want %v", got, want)
			}
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("recovery found damage:\n%s", logs)
			}
		})
	}
}
