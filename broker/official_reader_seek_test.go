package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

// createReader creates a reader and closes it when the test ends.
func createReader(t testing.TB, c pulsar.Client, opts pulsar.ReaderOptions) pulsar.Reader {
	t.Helper()
	r, err := c.CreateReader(opts)
	if err != nil {
		t.Fatalf("create reader on %s: %v", opts.Topic, err)
	}
	t.Cleanup(r.Close)
	return r
}

// readN reads n messages from r within timeout and returns their payloads.
func readN(t testing.TB, r pulsar.Reader, n int, timeout time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := make([]string, 0, n)
	for len(out) < n {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("reader: got %d of %d messages (%q): %v", len(out), n, out, err)
		}
		out = append(out, string(m.Payload()))
	}
	return out
}

// expectNoRead proves that r yields nothing for d.
func expectNoRead(t testing.TB, r pulsar.Reader, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if m, err := r.Next(ctx); err == nil {
		t.Fatalf("expected nothing for %v, read %q", d, m.Payload())
	}
}

// seq returns ["<prefix><from>", …, "<prefix><to-1>"].
func seq(prefix string, from, to int) []string {
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func eq(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// A reader from Earliest sees the whole topic in order; one from Latest sees only new messages.
func TestOfficialReaderEarliestLatest(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "m", 10)

	early := createReader(t, c, pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()})
	late := createReader(t, c, pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.LatestMessageID()})
	if got := readN(t, early, 10, 10*time.Second); !eq(got, seq("m", 0, 10)) {
		t.Fatalf("earliest reader read %q", got)
	}
	expectNoRead(t, late, 300*time.Millisecond)
	sendN(t, p, "n", 2)
	if got := readN(t, late, 2, 10*time.Second); !eq(got, seq("n", 0, 2)) {
		t.Fatalf("latest reader read %q, want [n0 n1]", got)
	}
	if got := readN(t, early, 2, 10*time.Second); !eq(got, seq("n", 0, 2)) {
		t.Fatalf("earliest reader then read %q, want [n0 n1]", got)
	}
}

// A reader from a message id starts just after it, or at it with StartMessageIDInclusive;
// for single messages and for a position inside a batch.
func TestOfficialReaderFromMessageID(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)

	for _, batched := range []bool{false, true} {
		topic := topicName(t, fmt.Sprintf("batched-%v", batched))
		p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: !batched,
			BatchingMaxMessages: 10, BatchingMaxPublishDelay: 10 * time.Second})
		msgs := make([]*pulsar.ProducerMessage, 10)
		for i := range msgs {
			msgs[i] = &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)}
		}
		ids := sendAll(t, p, msgs, 20*time.Second)
		if batched && !sameEntry(ids[0], ids[9]) {
			t.Fatalf("batched=true: messages were not sent as one batch (%v .. %v)", ids[0], ids[9])
		}
		for _, inclusive := range []bool{false, true} {
			r := createReader(t, c, pulsar.ReaderOptions{Topic: topic, StartMessageID: ids[4],
				StartMessageIDInclusive: inclusive})
			from := 5
			if inclusive {
				from = 4
			}
			if got := readN(t, r, 10-from, 10*time.Second); !eq(got, seq("m", from, 10)) {
				t.Errorf("batched=%v inclusive=%v: read %q, want %q", batched, inclusive, got, seq("m", from, 10))
			}
			expectNoRead(t, r, 200*time.Millisecond)
		}
	}
}

// Consumer.Seek(id) rewinds a durable subscription: with StartMessageIDInclusive the next
// message is the one sought, by default the one after it (the Go client drops the sought one).
func TestOfficialSeekMessageID(t *testing.T) {
	t.Parallel()
	const n = 10
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	incl := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "incl", StartMessageIDInclusive: true})
	excl := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "excl"})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	ids := sendN(t, p, "m", n)

	for _, tc := range []struct {
		cons pulsar.Consumer
		from int
	}{{incl, 3}, {excl, 4}} {
		for _, m := range receiveN(t, tc.cons, n, 10*time.Second) {
			if err := tc.cons.Ack(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := tc.cons.Seek(ids[3]); err != nil {
			t.Fatalf("%s: seek: %v", tc.cons.Subscription(), err)
		}
		got := payloads(receiveN(t, tc.cons, n-tc.from, 10*time.Second))
		if !eq(got, seq("m", tc.from, n)) {
			t.Fatalf("%s: after seek to m3 received %q, want %q", tc.cons.Subscription(), got, seq("m", tc.from, n))
		}
		expectNothing(t, tc.cons, 200*time.Millisecond)
	}
}

// Consumer.SeekByTime rewinds to the first message published at or after the time.
func TestOfficialSeekByTime(t *testing.T) {
	t.Parallel()
	const n = 10
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, p, "a", 5)
	// Publish times have millisecond resolution: make sure the second half is published in a
	// later millisecond than the first.
	split := time.Now().UnixMilli() + 1
	waitFor(t, time.Second, func() bool { return time.Now().UnixMilli() >= split })
	sendN(t, p, "b", 5)

	msgs := receiveN(t, cons, n, 10*time.Second)
	for i, m := range msgs {
		if i < 5 && m.PublishTime().UnixMilli() >= split || i >= 5 && m.PublishTime().UnixMilli() < split {
			t.Fatalf("message %q published at %d, split at %d", m.Payload(), m.PublishTime().UnixMilli(), split)
		}
		cons.Ack(m)
	}
	if err := cons.SeekByTime(time.UnixMilli(split)); err != nil {
		t.Fatalf("seek by time: %v", err)
	}
	if got := payloads(receiveN(t, cons, 5, 10*time.Second)); !eq(got, seq("b", 0, 5)) {
		t.Fatalf("after seek by time received %q, want %q", got, seq("b", 0, 5))
	}
	expectNothing(t, cons, 200*time.Millisecond)

	// Seeking to a time before everything replays the whole topic.
	if err := cons.SeekByTime(time.UnixMilli(split).Add(-time.Hour)); err != nil {
		t.Fatalf("seek by time: %v", err)
	}
	if got := payloads(receiveN(t, cons, n, 10*time.Second)); !eq(got, append(seq("a", 0, 5), seq("b", 0, 5)...)) {
		t.Fatalf("after seek to an hour ago received %q", got)
	}
}

// GET_LAST_MESSAGE_ID: an empty topic reports no valid entry (readers' HasNext is false); a
// non-empty one reports the last message, batch index included, and HasNext tracks it.
func TestOfficialLastMessageID(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})

	ids, err := cons.GetLastMessageIDs()
	if err != nil {
		t.Fatalf("GetLastMessageIDs on an empty topic: %v", err)
	}
	if len(ids) != 1 {
		t.Fatalf("GetLastMessageIDs returned %d ids, want 1", len(ids))
	}
	if ids[0].EntryID() >= 0 {
		t.Fatalf("empty topic: last message id %v has a valid entry id", ids[0])
	}
	if ids[0].Topic() != topic {
		t.Errorf("last message id for topic %q, want %q", ids[0].Topic(), topic)
	}
	empty := createReader(t, c, pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()})
	if empty.HasNext() {
		t.Fatal("reader on an empty topic: HasNext() = true")
	}

	single := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	sendN(t, single, "s", 3)
	batcher := createProducer(t, c, pulsar.ProducerOptions{Topic: topic,
		BatchingMaxMessages: 5, BatchingMaxPublishDelay: 10 * time.Second})
	msgs := make([]*pulsar.ProducerMessage, 5)
	for i := range msgs {
		msgs[i] = &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "b%d", i)}
	}
	sent := sendAll(t, batcher, msgs, 20*time.Second)

	ids, err = cons.GetLastMessageIDs()
	if err != nil {
		t.Fatal(err)
	}
	last := ids[0]
	if !sameEntry(last, sent[4]) {
		t.Fatalf("last message id %v, want the batch's entry %v", last, sent[4])
	}
	if last.BatchIdx() != 4 {
		t.Errorf("last message id batch index %d, want 4 (last message of a 5-message batch)", last.BatchIdx())
	}

	r := createReader(t, c, pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()})
	ctx := testCtx(t, 10*time.Second)
	want := append(seq("s", 0, 3), seq("b", 0, 5)...)
	for i, w := range want {
		if !r.HasNext() {
			t.Fatalf("HasNext() = false before message #%d (%s)", i, w)
		}
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Payload()) != w {
			t.Fatalf("read %q as #%d, want %q", m.Payload(), i, w)
		}
	}
	if r.HasNext() {
		t.Fatal("HasNext() = true after the last message")
	}
	if !empty.HasNext() {
		t.Fatal("the first reader: HasNext() = false after messages were published")
	}
}
