package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/testwait"
)

// These tests send what official clients other than Go's send (the Java client announces
// protocol v21, consumer epochs, chunks built by hand, ack sets on seek ids), byte for byte as
// the protocol defines them, and check the broker answers as upstream does.

// javaClientVersion is the client_version the upstream Java client announces.
const javaClientVersion = "Pulsar-Java-v4.0.0"

// TestRawConsumerEpochRedelivery: an Exclusive consumer subscribed with consumer_epoch=1 gets
// messages carrying epoch 1; REDELIVER_UNACKNOWLEDGED_MESSAGES with no ids and epoch 2 (what the
// Java client sends for Exclusive/Failover) redelivers all of them, in order, carrying epoch 2.
// Exclusive subscriptions keep redelivery_count at 0, as upstream.
func TestRawConsumerEpochRedelivery(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, javaClientVersion, 21)
	topic := rawTopic(t)
	payloads := []string{"m0", "m1", "m2"}
	ids := c.produce(topic, payloads...)

	consumerID := c.id()
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("epoch"),
		SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: proto.Uint64(consumerID),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum(), ConsumerEpoch: proto.Uint64(1)})
	c.flow(consumerID, 100)
	for _, epoch := range []uint64{1, 2} {
		if epoch == 2 {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_REDELIVER_UNACKNOWLEDGED_MESSAGES.Enum(),
				RedeliverUnacknowledgedMessages: &pb.CommandRedeliverUnacknowledgedMessages{
					ConsumerId: proto.Uint64(consumerID), ConsumerEpoch: proto.Uint64(2),
				}})
		}
		for i, want := range payloads {
			m := c.expectMessage()
			if m.Cmd.GetConsumerId() != consumerID || !sameRawEntry(m.Cmd.GetMessageId(), ids[i]) || string(m.Payload) != want {
				t.Fatalf("epoch %d, message %d: got %v %q, want consumer %d, id %v, %q", epoch, i, m.Cmd, m.Payload, consumerID, ids[i], want)
			}
			if m.Cmd.ConsumerEpoch == nil || m.Cmd.GetConsumerEpoch() != epoch {
				t.Errorf("epoch %d, message %d: MESSAGE carries consumer_epoch %v, want %d", epoch, i, m.Cmd.ConsumerEpoch, epoch)
			}
			if m.Cmd.GetRedeliveryCount() != 0 {
				t.Errorf("epoch %d, message %d: redelivery_count %d on Exclusive, want 0", epoch, i, m.Cmd.GetRedeliveryCount())
			}
		}
	}
}

// TestRawChunkedMessage: a chunked message is one SEND per chunk, all with the same sequence id;
// each chunk is an entry of its own with its own receipt, delivered in chunk order with its
// metadata untouched.
func TestRawChunkedMessage(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, javaClientVersion, 21)
	topic := rawTopic(t)
	producerID := c.id()
	producerName := c.createProducer(topic, producerID)
	whole := bytes.Repeat([]byte("0123456789"), 30)
	chunks := [][]byte{whole[:100], whole[100:200], whole[200:]}
	uuid := producerName + "-0"
	for i, chunk := range chunks {
		meta := rawMetadata(producerName, 0)
		meta.Uuid = proto.String(uuid)
		meta.NumChunksFromMsg = proto.Int32(int32(len(chunks)))
		meta.TotalChunkMsgSize = proto.Int32(int32(len(whole)))
		meta.ChunkId = proto.Int32(int32(i))
		send := rawSendCommand(producerID, 0)
		send.GetSend().IsChunk = proto.Bool(true)
		c.sendPayload(send, meta, chunk)
	}
	var ids []*pb.MessageIdData
	for i := range chunks {
		r := c.expect(pb.BaseCommand_SEND_RECEIPT).GetSendReceipt()
		if r.GetProducerId() != producerID || r.GetSequenceId() != 0 {
			t.Fatalf("receipt %d: %v, want producer %d, sequence id 0", i, r, producerID)
		}
		if i > 0 && r.GetMessageId().GetLedgerId() == ids[i-1].GetLedgerId() && r.GetMessageId().GetEntryId() <= ids[i-1].GetEntryId() {
			t.Fatalf("receipt %d: entry %v does not follow chunk %d's %v", i, r.GetMessageId(), i-1, ids[i-1])
		}
		ids = append(ids, r.GetMessageId())
	}

	consumerID := c.id()
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("chunks"),
		SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: proto.Uint64(consumerID),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
	c.flow(consumerID, 10)
	var got []byte
	for i := range chunks {
		m := c.expectMessage()
		if !sameRawEntry(m.Cmd.GetMessageId(), ids[i]) {
			t.Fatalf("chunk %d delivered as %v, want %v", i, m.Cmd.GetMessageId(), ids[i])
		}
		md := m.Meta
		if md.ChunkId == nil || md.GetChunkId() != int32(i) || md.GetUuid() != uuid ||
			md.GetNumChunksFromMsg() != int32(len(chunks)) || md.GetTotalChunkMsgSize() != int32(len(whole)) {
			t.Fatalf("chunk %d metadata: %v", i, md)
		}
		got = append(got, m.Payload...)
	}
	if !bytes.Equal(got, whole) {
		t.Fatalf("chunks reassemble to %q, want %q", got, whole)
	}
}

// TestRawChunkedOfficialClient: the official Go consumer reassembles what the official Go
// producer splits into chunks.
func TestRawChunkedOfficialClient(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	client := newOfficialClient(t, b)
	topic := rawTopic(t)
	consumer, err := client.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "go", SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer consumer.Close()
	producer, err := client.CreateProducer(pulsar.ProducerOptions{
		Topic: topic, EnableChunking: true, DisableBatching: true, ChunkMaxMessageSize: 1024,
	})
	if err != nil {
		t.Fatalf("create producer: %v", err)
	}
	defer producer.Close()

	want := make([]byte, 10<<10)
	for i := range want {
		want[i] = byte(i * 7)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rawTimeout)
	defer cancel()
	if _, err := producer.Send(ctx, &pulsar.ProducerMessage{Payload: want}); err != nil {
		t.Fatalf("send: %v", err)
	}
	msg, err := consumer.Receive(ctx)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if !bytes.Equal(msg.Payload(), want) {
		t.Fatalf("received %d bytes, want the %d sent", len(msg.Payload()), len(want))
	}
	if err := consumer.Ack(msg); err != nil {
		t.Fatalf("ack: %v", err)
	}

	// The message really travelled in chunks: the first entry is chunk 0 of several.
	c, _ := connectRaw(t, b, rawClientVersion, 21)
	consumerID := c.id()
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("raw"),
		SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: proto.Uint64(consumerID),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
	c.flow(consumerID, 1)
	if md := c.expectMessage().Meta; md.GetChunkId() != 0 || md.GetNumChunksFromMsg() < 2 {
		t.Fatalf("first entry's metadata %v, want chunk 0 of at least 2", md)
	}
}

// TestRawSeekWithAckSet: a Java client seeking inside a batch puts an ack_set on the seek id (set
// bit = still to deliver). The broker closes the subscription's consumer, then answers SUCCESS
// (upstream's order), and the resubscribed consumer gets the batch again with that ack_set.
func TestRawSeekWithAckSet(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, javaClientVersion, 21)
	topic := rawTopic(t)
	producerID := c.id()
	producerName := c.createProducer(topic, producerID)
	var batch []byte
	for i := range 4 {
		var err error
		batch, err = wire.AppendBatchMessage(batch, &pb.SingleMessageMetadata{SequenceId: proto.Uint64(uint64(i))}, fmt.Appendf(nil, "b%d", i))
		if err != nil {
			t.Fatal(err)
		}
	}
	meta := rawMetadata(producerName, 0)
	meta.NumMessagesInBatch = proto.Int32(4)
	meta.UncompressedSize = proto.Uint32(uint32(len(batch)))
	send := rawSendCommand(producerID, 0)
	send.GetSend().NumMessages = proto.Int32(4)
	c.sendPayload(send, meta, batch)
	id := c.expect(pb.BaseCommand_SEND_RECEIPT).GetSendReceipt().GetMessageId()

	consumerID := c.id()
	sub := &pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("seek"),
		SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: proto.Uint64(consumerID),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum()}
	c.subscribe(sub)
	c.flow(consumerID, 100)
	if m := c.expectMessage(); !sameRawEntry(m.Cmd.GetMessageId(), id) || len(m.Cmd.GetAckSet()) != 0 || m.Meta.GetNumMessagesInBatch() != 4 {
		t.Fatalf("first delivery %v (%d in batch), want %v, 4 messages, no ack_set", m.Cmd, m.Meta.GetNumMessagesInBatch(), id)
	}

	ackSet := []int64{1<<2 | 1<<3} // indexes 2 and 3 still to deliver
	seekID := c.id()
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_SEEK.Enum(), Seek: &pb.CommandSeek{
		ConsumerId: proto.Uint64(consumerID), RequestId: proto.Uint64(seekID),
		MessageId: &pb.MessageIdData{LedgerId: id.LedgerId, EntryId: id.EntryId, AckSet: ackSet},
	}})
	if cc := c.expect(pb.BaseCommand_CLOSE_CONSUMER).GetCloseConsumer(); cc.GetConsumerId() != consumerID {
		t.Fatalf("CLOSE_CONSUMER %v, want consumer %d", cc, consumerID)
	}
	if s := c.expect(pb.BaseCommand_SUCCESS).GetSuccess(); s.GetRequestId() != seekID {
		t.Fatalf("SUCCESS %v, want request %d", s, seekID)
	}

	c.subscribe(sub) // same consumer id, as a client reconnecting after CLOSE_CONSUMER

	c.flow(consumerID, 100)
	m := c.expectMessage()
	if !sameRawEntry(m.Cmd.GetMessageId(), id) || !slices.Equal(m.Cmd.GetAckSet(), ackSet) {
		t.Fatalf("after seek: %v, want %v with ack_set %v", m.Cmd, id, ackSet)
	}
	if !bytes.Equal(m.Payload, batch) || m.Meta.GetNumMessagesInBatch() != 4 {
		t.Fatalf("after seek: the batch came back altered: %v", m.Meta)
	}
}

// TestRawPingAndConnected: CONNECTED answers min(client's protocol version, 21) and the 5 MiB
// message size limit, and a client PING gets a PONG.
func TestRawPingAndConnected(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	for _, v := range []struct{ client, want int32 }{{10, 10}, {19, 19}, {20, 20}, {21, 21}, {22, 21}, {99, 21}} {
		c, connected := connectRaw(t, b, javaClientVersion, v.client)
		if connected.GetProtocolVersion() != v.want {
			t.Errorf("client v%d: CONNECTED protocol_version %d, want %d", v.client, connected.GetProtocolVersion(), v.want)
		}
		if connected.MaxMessageSize == nil || connected.GetMaxMessageSize() != 5242880 {
			t.Errorf("client v%d: CONNECTED max_message_size %v, want 5242880", v.client, connected.MaxMessageSize)
		}
		if connected.GetServerVersion() == "" {
			t.Errorf("client v%d: CONNECTED without server_version", v.client)
		}
		c.request(&pb.BaseCommand{Type: pb.BaseCommand_PING.Enum(), Ping: &pb.CommandPing{}}, pb.BaseCommand_PONG)
	}
}

// TestRawAutoConsumeSchemaV21: a v21 client may subscribe announcing an AUTO_CONSUME schema
// (PIP-236); it must succeed and must not register a schema, so the first producer with a real
// schema still defines version 0.
func TestRawAutoConsumeSchemaV21(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, connected := connectRaw(t, b, javaClientVersion, 21)
	if connected.GetProtocolVersion() != 21 {
		t.Fatalf("CONNECTED protocol_version %d, want 21", connected.GetProtocolVersion())
	}
	topic := rawTopic(t)
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("auto"),
		SubType: pb.CommandSubscribe_Shared.Enum(), ConsumerId: proto.Uint64(c.id()),
		Schema: &pb.Schema{Name: proto.String(""), SchemaData: []byte{}, Type: pb.Schema_AutoConsume.Enum()}})

	reqID := c.id()
	ps := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
		Topic: proto.String(topic), ProducerId: proto.Uint64(c.id()), RequestId: proto.Uint64(reqID),
		Schema: &pb.Schema{Name: proto.String(""), SchemaData: []byte{}, Type: pb.Schema_String.Enum()},
	}}, pb.BaseCommand_PRODUCER_SUCCESS).GetProducerSuccess()
	if ps.GetRequestId() != reqID || !bytes.Equal(ps.GetSchemaVersion(), make([]byte, 8)) {
		t.Fatalf("PRODUCER_SUCCESS %v, want request %d and schema version 0 as 8 bytes", ps, reqID)
	}
}

// TestRawAckWithResponse: an ACK carrying request_id gets ACK_RESPONSE with that request id and
// no message (success), and the acknowledgement has taken effect when it arrives.
func TestRawAckWithResponse(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, javaClientVersion, 21)
	topic := rawTopic(t)
	id := c.produce(topic, "ack me")[0]
	consumerID := c.id()
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("ack"),
		SubType: pb.CommandSubscribe_Shared.Enum(), ConsumerId: proto.Uint64(consumerID),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
	c.flow(consumerID, 10)
	m := c.expectMessage()

	reqID := c.id()
	r := c.request(&pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum(), Ack: &pb.CommandAck{
		ConsumerId: proto.Uint64(consumerID), AckType: pb.CommandAck_Individual.Enum(),
		MessageId: []*pb.MessageIdData{{LedgerId: m.Cmd.GetMessageId().LedgerId, EntryId: m.Cmd.GetMessageId().EntryId}},
		RequestId: proto.Uint64(reqID),
	}}, pb.BaseCommand_ACK_RESPONSE).GetAckResponse()
	if r.GetRequestId() != reqID || r.GetConsumerId() != consumerID || r.Message != nil || r.Error != nil {
		t.Fatalf("ACK_RESPONSE %v, want request %d, consumer %d, no error", r, reqID, consumerID)
	}

	reqID = c.id()
	last := c.request(&pb.BaseCommand{Type: pb.BaseCommand_GET_LAST_MESSAGE_ID.Enum(), GetLastMessageId: &pb.CommandGetLastMessageId{
		ConsumerId: proto.Uint64(consumerID), RequestId: proto.Uint64(reqID),
	}}, pb.BaseCommand_GET_LAST_MESSAGE_ID_RESPONSE).GetGetLastMessageIdResponse()
	if !sameRawEntry(last.GetConsumerMarkDeletePosition(), id) {
		t.Fatalf("mark-delete position %v after the ACK_RESPONSE, want %v", last.GetConsumerMarkDeletePosition(), id)
	}
}

// CONSUMER_STATS answers with the consumer's figures: permits, unacknowledged messages, the
// subscription's backlog in entries, and rates from the broker's sampler.
func TestRawConsumerStats(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, javaClientVersion, 21)
	// Produced on a connection of its own, so that MESSAGEs and receipts do not interleave.
	prod, _ := connectRaw(t, b, javaClientVersion, 21)
	topic := rawTopic(t)
	prod.produce(topic, "a", "b", "c")
	consumerID := c.id()
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("stats"),
		SubType: pb.CommandSubscribe_Shared.Enum(), ConsumerId: proto.Uint64(consumerID),
		ConsumerName: proto.String("worker"), InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
	c.flow(consumerID, 10)
	var got []rawMessage
	for range 3 {
		got = append(got, c.expectMessage())
	}
	ack := func(m rawMessage) {
		c.send(&pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum(), Ack: &pb.CommandAck{
			ConsumerId: proto.Uint64(consumerID), AckType: pb.CommandAck_Individual.Enum(),
			MessageId: []*pb.MessageIdData{{LedgerId: m.Cmd.GetMessageId().LedgerId, EntryId: m.Cmd.GetMessageId().EntryId}},
		}})
	}
	ack(got[0])
	stats := func() *pb.CommandConsumerStatsResponse {
		t.Helper()
		reqID := c.id()
		r := c.request(&pb.BaseCommand{Type: pb.BaseCommand_CONSUMER_STATS.Enum(), ConsumerStats: &pb.CommandConsumerStats{
			ConsumerId: proto.Uint64(consumerID), RequestId: proto.Uint64(reqID),
		}}, pb.BaseCommand_CONSUMER_STATS_RESPONSE).GetConsumerStatsResponse()
		if r.GetRequestId() != reqID || r.ErrorCode != nil {
			t.Fatalf("CONSUMER_STATS_RESPONSE %v, want request %d and no error", r, reqID)
		}
		return r
	}
	// The ACK has no answer; the stats follow it on the same connection, so they see it.
	r := stats()
	if r.GetConsumerName() != "worker" || r.GetType() != "Shared" || r.GetAvailablePermits() != 7 ||
		r.GetUnackedMessages() != 2 || r.GetMsgBacklog() != 2 || r.GetConnectedSince() == "" {
		t.Fatalf("CONSUMER_STATS_RESPONSE %v, want worker, Shared, 7 permits, 2 unacked, backlog 2", r)
	}
	// Rates: the first request started the sampler; what is delivered and acknowledged after
	// its first sample shows as a rate.
	prod.produce(topic, "d", "e")
	got = append(got, c.expectMessage(), c.expectMessage())
	for _, m := range got[1:] {
		ack(m)
	}
	testwait.ForNil(t, 5*time.Second, "the consumer's stats", func() error {
		r = stats()
		if r.GetMsgRateOut() > 0 && r.GetMsgThroughputOut() > 0 && r.GetMessageAckRate() > 0 && r.GetMsgBacklog() == 0 {
			return nil
		}
		return fmt.Errorf("CONSUMER_STATS_RESPONSE %v, want positive out and ack rates and no backlog", r)
	})
	if r.GetMsgRateRedeliver() != 0 || r.GetMsgRateExpired() != 0 {
		t.Fatalf("CONSUMER_STATS_RESPONSE %v: nothing was redelivered or expired", r)
	}
}

// createProducer registers a producer on topic and returns the name the broker gave it.
func (c *rawConn) createProducer(topic string, producerID uint64) string {
	c.t.Helper()
	reqID := c.id()
	ps := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
		Topic: proto.String(topic), ProducerId: proto.Uint64(producerID), RequestId: proto.Uint64(reqID),
	}}, pb.BaseCommand_PRODUCER_SUCCESS).GetProducerSuccess()
	if ps.GetRequestId() != reqID || ps.GetProducerName() == "" {
		c.t.Fatalf("PRODUCER_SUCCESS %v, want request %d and a producer name", ps, reqID)
	}
	return ps.GetProducerName()
}

// produce publishes one non-batched message per payload with a new producer and returns their
// ids, in order.
func (c *rawConn) produce(topic string, payloads ...string) []*pb.MessageIdData {
	c.t.Helper()
	producerID := c.id()
	name := c.createProducer(topic, producerID)
	var ids []*pb.MessageIdData
	for seq, p := range payloads {
		c.sendPayload(rawSendCommand(producerID, uint64(seq)), rawMetadata(name, uint64(seq)), []byte(p))
		r := c.expect(pb.BaseCommand_SEND_RECEIPT).GetSendReceipt()
		if r.GetSequenceId() != uint64(seq) {
			c.t.Fatalf("receipt %v, want sequence id %d", r, seq)
		}
		ids = append(ids, r.GetMessageId())
	}
	return ids
}

// subscribe sends SUBSCRIBE with a new request id and expects SUCCESS for it.
func (c *rawConn) subscribe(sub *pb.CommandSubscribe) {
	c.t.Helper()
	reqID := c.id()
	sub.RequestId = proto.Uint64(reqID)
	s := c.request(&pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: sub}, pb.BaseCommand_SUCCESS).GetSuccess()
	if s.GetRequestId() != reqID {
		c.t.Fatalf("SUCCESS %v, want request %d", s, reqID)
	}
}

func (c *rawConn) flow(consumerID uint64, permits uint32) {
	c.t.Helper()
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_FLOW.Enum(), Flow: &pb.CommandFlow{
		ConsumerId: proto.Uint64(consumerID), MessagePermits: proto.Uint32(permits),
	}})
}

func rawSendCommand(producerID, seq uint64) *pb.BaseCommand {
	return &pb.BaseCommand{Type: pb.BaseCommand_SEND.Enum(), Send: &pb.CommandSend{
		ProducerId: proto.Uint64(producerID), SequenceId: proto.Uint64(seq),
	}}
}

func rawMetadata(producerName string, seq uint64) *pb.MessageMetadata {
	return &pb.MessageMetadata{ProducerName: proto.String(producerName), SequenceId: proto.Uint64(seq),
		PublishTime: proto.Uint64(uint64(time.Now().UnixMilli()))}
}

// sameRawEntry compares ledger and entry ids only.
func sameRawEntry(a, b *pb.MessageIdData) bool {
	return a != nil && b != nil && a.GetLedgerId() == b.GetLedgerId() && a.GetEntryId() == b.GetEntryId()
}
