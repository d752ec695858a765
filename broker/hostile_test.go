package broker_test

// The hostile clients of the issue that asked for the broker's limits, again: ACKs naming
// positions that never existed, and SENDs whose batch count lies. Hand-made frames, since no
// official client sends them; the official client checks that everyone else is still served.

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/compress"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// liveHeap is the Go heap in use once the garbage collector has run: what the process keeps.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC() // the first may leave finalizers' objects for the second
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// 20 ACKs of 100,000 positions each that the topic never had (past its last entry, and in
// ledgers it never had) used to grow the broker by 600 MiB for good: every position was stored.
// They are ignored now, the heap stays within 64 MiB of where it was, and the subscription still
// acknowledges what it really got. Not parallel: it measures the process's heap.
func TestHostileAcksForAbsentPositions(t *testing.T) {
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, rawClientVersion, 21)
	topic := rawTopic(t)
	ids := c.produce(topic, "a", "b", "c")
	consumerID := c.id()
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("s"),
		SubType: pb.CommandSubscribe_Shared.Enum(), ConsumerId: proto.Uint64(consumerID),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
	c.flow(consumerID, 10)
	for range ids {
		c.expectMessage()
	}

	before := liveHeap()
	ledger := ids[0].GetLedgerId()
	for round := range 20 {
		absent := make([]*pb.MessageIdData, 100_000)
		for i := range absent {
			absent[i] = &pb.MessageIdData{LedgerId: proto.Uint64(ledger + uint64(i%3)),
				EntryId: proto.Uint64(uint64(1000 + round*100_000 + i))}
		}
		ack(t, c, consumerID, pb.CommandAck_Individual, absent...)
	}
	after := liveHeap()
	t.Logf("live heap %.1f MiB before, %.1f MiB after 20 × 100,000 ACKs of absent positions",
		float64(before)/(1<<20), float64(after)/(1<<20))
	if after-before > 64<<20 {
		t.Fatalf("the heap grew by %.1f MiB", float64(after-before)/(1<<20))
	}

	if got := backlog(t, b, topic, "s"); got != 3 {
		t.Fatalf("backlog %d after acks of absent positions, want the 3 real entries", got)
	}
	ack(t, c, consumerID, pb.CommandAck_Individual, ids[2], ids[0], ids[1])
	if got := backlog(t, b, topic, "s"); got != 0 {
		t.Fatalf("backlog %d after acking the real entries, want 0", got)
	}
}

// ack sends an ACK of ids with a request id and expects a successful ACK_RESPONSE.
func ack(t *testing.T, c *rawConn, consumerID uint64, typ pb.CommandAck_AckType, ids ...*pb.MessageIdData) {
	t.Helper()
	reqID := c.id()
	r := c.request(&pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum(), Ack: &pb.CommandAck{
		ConsumerId: proto.Uint64(consumerID), AckType: typ.Enum(), MessageId: ids, RequestId: proto.Uint64(reqID),
	}}, pb.BaseCommand_ACK_RESPONSE).GetAckResponse()
	if r.GetRequestId() != reqID || r.Error != nil {
		t.Fatalf("ACK_RESPONSE %v, want success for request %d", r, reqID)
	}
}

// backlog is a subscription's backlog in entries, from the admin API.
func backlog(t *testing.T, b *broker.Broker, topic, sub string) int64 {
	t.Helper()
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := st.Subscriptions[sub]
	if !ok {
		t.Fatalf("no subscription %s on %s", sub, topic)
	}
	return s.MsgBacklog
}

// A SEND whose metadata claims more messages than its batch holds is refused with SEND_ERROR,
// and the connection goes on: later SENDs are receipted, an official consumer gets exactly the
// messages accepted (a claimed billion would have used up its permits), and stats count those.
// Compressed batches are bounded by their uncompressed size, and encrypted ones are taken at
// their word.
func TestHostileBatchCounts(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	topic := rawTopic(t)
	cons := subscribe(t, newClient(t, b), pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	c, _ := connectRaw(t, b, rawClientVersion, 21)
	producerID := c.id()
	name := c.createProducer(topic, producerID)

	batch := func(payloads ...string) []byte {
		var body []byte
		for _, p := range payloads {
			var err error
			if body, err = wire.AppendBatchMessage(body, &pb.SingleMessageMetadata{}, []byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		return body
	}
	lz4 := func(body []byte) []byte {
		out, err := compress.Compress(pb.CompressionType_LZ4, body)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	three := batch("x0", "x1", "x2")
	seq := uint64(0)
	send := func(claimed int32, body []byte, edit func(*pb.MessageMetadata)) *pb.BaseCommand {
		t.Helper()
		meta := rawMetadata(name, seq)
		meta.NumMessagesInBatch = proto.Int32(claimed)
		if edit != nil {
			edit(meta)
		}
		cmd := rawSendCommand(producerID, seq)
		cmd.Send.NumMessages = proto.Int32(claimed)
		c.sendPayload(cmd, meta, body)
		seq++
		f := c.next()
		return f.Cmd
	}
	refused := func(what string, got *pb.BaseCommand) {
		t.Helper()
		if e := got.GetSendError(); e == nil || e.GetError() != pb.ServerError_NotAllowedError {
			t.Fatalf("%s: got %v, want SEND_ERROR NotAllowedError", what, got)
		}
	}
	accepted := func(what string, got *pb.BaseCommand) {
		t.Helper()
		if got.GetSendReceipt() == nil {
			t.Fatalf("%s: got %v, want SEND_RECEIPT", what, got)
		}
	}

	refused("a billion claimed, one held", send(1_000_000_000, batch("one"), nil))
	refused("two claimed, three held", send(2, three, nil))
	refused("four claimed, three held", send(4, three, nil))
	refused("a message cut short", send(3, three[:len(three)-1], nil))
	refused("bytes after the last message", send(3, append(append([]byte(nil), three...), 0, 0, 0, 0), nil))
	accepted("three claimed, three held", send(3, three, nil))
	compressed := func(claimed int32, body []byte) *pb.BaseCommand {
		return send(claimed, lz4(body), func(m *pb.MessageMetadata) {
			m.Compression = pb.CompressionType_LZ4.Enum()
			m.UncompressedSize = proto.Uint32(uint32(len(body)))
		})
	}
	refused("compressed: more than its uncompressed size can hold", compressed(int32(len(three)/wire.MinBatchMessageSize+1), three))
	accepted("compressed: three claimed, three held", compressed(3, batch("z0", "z1", "z2")))

	var got []string
	for _, m := range receiveN(t, cons, 6, 10*time.Second) {
		got = append(got, string(m.Payload()))
	}
	if fmt.Sprint(got) != "[x0 x1 x2 z0 z1 z2]" {
		t.Fatalf("consumer got %q, want the six messages accepted", got)
	}
	expectNothing(t, cons, 200*time.Millisecond)
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.MsgInCounter != 6 {
		t.Fatalf("msgInCounter %d, want the 6 messages accepted", st.MsgInCounter)
	}

	// Encrypted: the body is not the broker's to read, so the count is not checked.
	encTopic := rawTopic(t) + "-encrypted"
	encID := c.id()
	encName := c.createProducer(encTopic, encID)
	meta := rawMetadata(encName, 0)
	meta.NumMessagesInBatch = proto.Int32(1_000_000)
	meta.EncryptionKeys = []*pb.EncryptionKeys{{Key: proto.String("k"), Value: []byte("v")}}
	meta.EncryptionAlgo = proto.String("AES/GCM/NoPadding")
	c.sendPayload(rawSendCommand(encID, 0), meta, []byte("ciphertext"))
	if r := c.next().Cmd; r.GetSendReceipt() == nil {
		t.Fatalf("encrypted batch: got %v, want SEND_RECEIPT", r)
	}
}

// The batch walk agrees with the official client's batches: every batch it sends, compressed
// or not, is accepted (the official tests send many; this one sends batches of every size up to
// a hundred, with keys and properties).
func TestOfficialBatchesAccepted(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := newClient(t, b)
	topic := topicName(t)
	for _, ct := range []pulsar.CompressionType{pulsar.NoCompression, pulsar.ZSTD} {
		p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, CompressionType: ct,
			BatchingMaxMessages: 100, BatchingMaxPublishDelay: time.Hour})
		for n := 1; n <= 100; n += 33 {
			msgs := make([]*pulsar.ProducerMessage, n)
			for i := range msgs {
				msgs[i] = &pulsar.ProducerMessage{Payload: make([]byte, i), Key: fmt.Sprint(i),
					Properties: map[string]string{"i": fmt.Sprint(i)}}
			}
			sendAll(t, p, msgs, 20*time.Second)
		}
	}
}

// A consumer that grants two billion permits, never reads, and asks for redelivery a hundred
// times used to make the broker copy the whole backlog into its write queue a hundred times.
// The queue has a bound now (backpressure.go): the dispatcher stops at it, and the broker stops
// reading the client's commands until the client reads, so the heap stays put and the
// subscription's other consumers, here a bystander, are served. Not parallel: it measures the
// heap.
func TestHostileConsumerThatDoesNotRead(t *testing.T) {
	b := startRawBroker(t, nil)
	topic := rawTopic(t)
	victim, _ := connectRaw(t, b, rawClientVersion, 21)
	victim.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("s"),
		SubType: pb.CommandSubscribe_Shared.Enum(), ConsumerId: proto.Uint64(1),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
	bystander := subscribe(t, newClient(t, b), pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "other"})
	pc, _ := connectRaw(t, b, rawClientVersion, 21)
	payloads := make([]string, 5000)
	for i := range payloads {
		payloads[i] = fmt.Sprintf("%02000d", i) // 2 KB: copied into the write queue, not referenced
	}
	pc.produce(topic, payloads...)
	before := liveHeap()

	victim.flow(1, 1<<31)
	dispatched := func() int64 {
		st, err := b.TopicStats(topic, broker.StatsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st.Subscriptions["s"].MsgOutCounter
	}
	// Ask for redelivery once the broker has dispatched more since the last time: each round
	// would queue the backlog again. Stop asking once it dispatches nothing more for a while.
	var out int64
	for range 100 {
		victim.send(&pb.BaseCommand{Type: pb.BaseCommand_REDELIVER_UNACKNOWLEDGED_MESSAGES.Enum(),
			RedeliverUnacknowledgedMessages: &pb.CommandRedeliverUnacknowledgedMessages{ConsumerId: proto.Uint64(1)}})
		more := false
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline) && !more; time.Sleep(10 * time.Millisecond) {
			more = dispatched() >= out+int64(len(payloads))
		}
		out = dispatched()
		if !more {
			break
		}
	}
	after := liveHeap()
	t.Logf("%d messages dispatched to a consumer that reads nothing (%d redelivery rounds of %d asked); live heap %.1f MiB → %.1f MiB",
		out, out/int64(len(payloads)), 100, float64(before)/(1<<20), float64(after)/(1<<20))
	if out >= 10*int64(len(payloads)) || after-before > 64<<20 {
		t.Fatalf("%d messages dispatched and the heap grew by %.1f MiB, want the write queue bounded",
			out, float64(after-before)/(1<<20))
	}

	receiveN(t, bystander, len(payloads), 30*time.Second)
}
