package broker_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	pulsarlog "github.com/apache/pulsar-client-go/pulsar/log"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// rawClientVersion is what the raw tests announce when they do not imitate a particular client.
const rawClientVersion = "letterbox-raw-test"

// TestRawBadInput sends, on one connection, something no client may send. The broker must close
// that connection (as upstream's ServerCnx does on an undecodable frame or a command out of
// state), promptly and without waiting for bytes that will never come, while a bystander
// connection and the official Go client keep being served. Commands the broker does not
// implement close the connection too: letterbox has no transactions or topic watchers, and
// never advertises them.
func TestRawBadInput(t *testing.T) {
	maxFrame := wire.MaxFrameSize(wire.DefaultMaxMessageSize) // 5 MiB + 10 KiB
	header := func(total uint32, rest ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, total), rest...)
	}
	// A complete, valid PRODUCER frame, for cutting in half.
	producerFrame, err := wire.AppendCommand(nil, &pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
		Topic: proto.String("persistent://public/default/truncated"), ProducerId: proto.Uint64(1), RequestId: proto.Uint64(1),
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		// connect completes CONNECT before the bad input.
		connect bool
		// keepAlive, when set, shortens the broker's keepalive: for a peer that stalls, the
		// keepalive is the only thing that can end the connection. A bystander would be closed
		// by it too, so those cases check other clients with the official client only.
		keepAlive time.Duration
		bad       func(c *rawConn)
	}{
		{name: "garbage/http-request", bad: func(c *rawConn) {
			c.write([]byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"))
		}},
		{name: "garbage/command-size-beyond-frame", connect: true, bad: func(c *rawConn) {
			c.write(header(8, 0, 0, 0, 100, 1, 2, 3, 4))
		}},
		{name: "garbage/undecodable-command", connect: true, bad: func(c *rawConn) {
			// Field 1 announced as a 100-byte string inside a 4-byte command.
			c.write(header(8, 0, 0, 0, 4, 0x0a, 100, 0xff, 0xff))
		}},
		{name: "garbage/empty-command", connect: true, bad: func(c *rawConn) {
			c.write(header(4, 0, 0, 0, 0)) // BaseCommand without its required type
		}},
		{name: "oversized-frame/max-plus-one", connect: true, bad: func(c *rawConn) {
			// Only the size prefix and a little: the broker must refuse on the prefix alone.
			c.write(header(uint32(maxFrame+1), 0, 0, 0, 4, 8, 18))
		}},
		{name: "oversized-frame/max-uint32", connect: true, bad: func(c *rawConn) {
			c.write(header(0xffffffff, 0, 0, 0, 4))
		}},
		{name: "undersized-frame", connect: true, bad: func(c *rawConn) {
			c.write(header(2, 0, 0))
		}},
		{name: "truncated-frame/then-close", connect: true, bad: func(c *rawConn) {
			c.write(producerFrame[:len(producerFrame)/2])
			if err := c.nc.(*net.TCPConn).CloseWrite(); err != nil {
				c.t.Fatalf("close write side: %v", err)
			}
		}},
		{name: "truncated-frame/then-stall", connect: true, keepAlive: 200 * time.Millisecond, bad: func(c *rawConn) {
			c.write(producerFrame[:len(producerFrame)/2])
		}},
		{name: "silent-before-connect", keepAlive: 200 * time.Millisecond, bad: func(c *rawConn) {}},
		{name: "unknown-command/NEW_TXN", connect: true, bad: func(c *rawConn) {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_NEW_TXN.Enum()})
		}},
		{name: "unknown-command/WATCH_TOPIC_LIST", connect: true, bad: func(c *rawConn) {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_WATCH_TOPIC_LIST.Enum()})
		}},
		{name: "unknown-command/type-99", connect: true, bad: func(c *rawConn) {
			// type = 99, a number the enum does not have: 0x08 is field 1 as a varint.
			c.write(header(6, 0, 0, 0, 2, 0x08, 99))
		}},
		{name: "unknown-command/CONNECTED-from-client", connect: true, bad: func(c *rawConn) {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_CONNECTED.Enum(), Connected: &pb.CommandConnected{ServerVersion: proto.String("x")}})
		}},
		{name: "before-connect/PRODUCER", bad: func(c *rawConn) {
			c.write(producerFrame)
		}},
		{name: "before-connect/LOOKUP", bad: func(c *rawConn) {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_LOOKUP.Enum(), LookupTopic: &pb.CommandLookupTopic{
				Topic: proto.String("persistent://public/default/x"), RequestId: proto.Uint64(1),
			}})
		}},
		// A command whose body is missing (what FuzzBrokerCommands found first): upstream's
		// decoder drops the connection, and so do we, rather than let a handler meet nil.
		{name: "no-body/ACK", connect: true, bad: func(c *rawConn) {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum()})
		}},
		{name: "no-body/FLOW", connect: true, bad: func(c *rawConn) {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_FLOW.Enum()})
		}},
		{name: "no-body/SEND-with-bad-checksum", connect: true, bad: func(c *rawConn) {
			hp, err := wire.AppendPayload(nil, &pb.MessageMetadata{ProducerName: proto.String("p"),
				SequenceId: proto.Uint64(0), PublishTime: proto.Uint64(1)}, []byte("payload"))
			if err != nil {
				c.t.Fatal(err)
			}
			hp[len(hp)-1] ^= 0xff
			frame, err := wire.AppendCommand(nil, &pb.BaseCommand{Type: pb.BaseCommand_SEND.Enum()}, hp)
			if err != nil {
				c.t.Fatal(err)
			}
			c.write(frame)
		}},
		{name: "no-body/CONNECT", bad: func(c *rawConn) {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum()})
		}},
		{name: "second-connect", connect: true, bad: func(c *rawConn) {
			c.send(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
				ClientVersion: proto.String(rawClientVersion), ProtocolVersion: proto.Int32(21),
			}})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := startRawBroker(t, func(cfg *broker.Config) {
				if tc.keepAlive > 0 {
					cfg.KeepAliveInterval = tc.keepAlive
				}
			})
			var bystander *rawConn
			if tc.keepAlive == 0 {
				bystander, _ = connectRaw(t, b, rawClientVersion, 21)
			}
			var victim *rawConn
			if tc.connect {
				victim, _ = connectRaw(t, b, rawClientVersion, 21)
			} else {
				victim = dialRaw(t, b)
			}
			tc.bad(victim)
			victim.expectClosed(rawTimeout)
			if bystander != nil {
				bystander.request(&pb.BaseCommand{Type: pb.BaseCommand_PING.Enum(), Ping: &pb.CommandPing{}}, pb.BaseCommand_PONG)
			}
			officialRoundTrip(t, b)
		})
	}
}

// TestRawPartitionSuffixNotAnIndex checks upstream's reading of a -partition- suffix: a name
// whose suffix is not a partition index as upstream writes one (no sign, no leading zero) is a
// topic of its own, not a partition and not an invalid name.
func TestRawPartitionSuffixNotAnIndex(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, rawClientVersion, 21)
	for _, name := range []string{"persistent://public/default/x-partition-01", "persistent://public/default/x-partition-a"} {
		reqID := c.id()
		ps := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
			Topic: proto.String(name), ProducerId: proto.Uint64(c.id()), RequestId: proto.Uint64(reqID),
		}}, pb.BaseCommand_PRODUCER_SUCCESS).GetProducerSuccess()
		if ps.GetRequestId() != reqID {
			t.Errorf("PRODUCER %q: %v, want PRODUCER_SUCCESS for request %d", name, ps, reqID)
		}
		reqID = c.id()
		md := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PARTITIONED_METADATA.Enum(), PartitionMetadata: &pb.CommandPartitionedTopicMetadata{
			Topic: proto.String(name), RequestId: proto.Uint64(reqID),
		}}, pb.BaseCommand_PARTITIONED_METADATA_RESPONSE).GetPartitionMetadataResponse()
		if md.GetResponse() != pb.CommandPartitionedTopicMetadataResponse_Success || md.GetPartitions() != 0 {
			t.Errorf("PARTITIONED_METADATA %q: %v, want a non-partitioned topic", name, md)
		}
	}
}

// TestRawInvalidTopicName checks that every command naming a topic answers an invalid name with
// InvalidTopicName in the shape its sender waits for, and keeps the connection.
func TestRawInvalidTopicName(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, rawClientVersion, 21)
	names := []string{
		"persistent://a/b/c/d",              // four segments: letterbox refuses V1 (cluster) names
		"bad domain://public/default/x",     // unknown domain
		"persistent://public/default/",      // empty local name
		"persistent://bad tenant/default/x", // tenant outside [-=:.\w]
		"public/default",                    // two segments
	}
	for _, name := range names {
		reqID := c.id()
		got := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
			Topic: proto.String(name), ProducerId: proto.Uint64(c.id()), RequestId: proto.Uint64(reqID),
		}}, pb.BaseCommand_ERROR).GetError()
		if got.GetRequestId() != reqID || got.GetError() != pb.ServerError_InvalidTopicName {
			t.Errorf("PRODUCER %q: got %v, want ERROR InvalidTopicName for request %d", name, got, reqID)
		}

		reqID = c.id()
		got = c.request(&pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: &pb.CommandSubscribe{
			Topic: proto.String(name), Subscription: proto.String("s"), SubType: pb.CommandSubscribe_Exclusive.Enum(),
			ConsumerId: proto.Uint64(c.id()), RequestId: proto.Uint64(reqID),
		}}, pb.BaseCommand_ERROR).GetError()
		if got.GetRequestId() != reqID || got.GetError() != pb.ServerError_InvalidTopicName {
			t.Errorf("SUBSCRIBE %q: got %v, want ERROR InvalidTopicName for request %d", name, got, reqID)
		}

		reqID = c.id()
		lookup := c.request(&pb.BaseCommand{Type: pb.BaseCommand_LOOKUP.Enum(), LookupTopic: &pb.CommandLookupTopic{
			Topic: proto.String(name), RequestId: proto.Uint64(reqID),
		}}, pb.BaseCommand_LOOKUP_RESPONSE).GetLookupTopicResponse()
		if lookup.GetRequestId() != reqID || lookup.GetResponse() != pb.CommandLookupTopicResponse_Failed ||
			lookup.GetError() != pb.ServerError_InvalidTopicName {
			t.Errorf("LOOKUP %q: got %v, want Failed InvalidTopicName for request %d", name, lookup, reqID)
		}

		reqID = c.id()
		meta := c.request(&pb.BaseCommand{Type: pb.BaseCommand_PARTITIONED_METADATA.Enum(), PartitionMetadata: &pb.CommandPartitionedTopicMetadata{
			Topic: proto.String(name), RequestId: proto.Uint64(reqID),
		}}, pb.BaseCommand_PARTITIONED_METADATA_RESPONSE).GetPartitionMetadataResponse()
		if meta.GetRequestId() != reqID || meta.GetResponse() != pb.CommandPartitionedTopicMetadataResponse_Failed ||
			meta.GetError() != pb.ServerError_InvalidTopicName {
			t.Errorf("PARTITIONED_METADATA %q: got %v, want Failed InvalidTopicName for request %d", name, meta, reqID)
		}
	}
	c.request(&pb.BaseCommand{Type: pb.BaseCommand_PING.Enum(), Ping: &pb.CommandPing{}}, pb.BaseCommand_PONG)
}

// TestRawSendBadChecksum checks that a SEND whose payload fails its CRC32C is refused with
// SEND_ERROR ChecksumError, is not stored, and leaves the connection and producer usable.
func TestRawSendBadChecksum(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, nil)
	c, _ := connectRaw(t, b, rawClientVersion, 21)
	topic := rawTopic(t)
	producerID := c.id()
	producerName := c.createProducer(topic, producerID)

	corruptions := []struct {
		what    string
		corrupt func(hp []byte)
	}{
		{"checksum field", func(hp []byte) { hp[2] ^= 0xff }}, // right after the 2-byte magic
		{"payload byte", func(hp []byte) { hp[len(hp)-1] ^= 0x01 }},
	}
	seq := uint64(0)
	for _, tc := range corruptions {
		hp, err := wire.AppendPayload(nil, rawMetadata(producerName, seq), []byte("corrupt"))
		if err != nil {
			t.Fatal(err)
		}
		tc.corrupt(hp)
		frame, err := wire.AppendCommand(nil, rawSendCommand(producerID, seq), hp)
		if err != nil {
			t.Fatal(err)
		}
		c.write(frame)
		got := c.expect(pb.BaseCommand_SEND_ERROR).GetSendError()
		if got.GetProducerId() != producerID || got.GetSequenceId() != seq || got.GetError() != pb.ServerError_ChecksumError {
			t.Errorf("corrupt %s: got %v, want SEND_ERROR ChecksumError for producer %d seq %d", tc.what, got, producerID, seq)
		}
		seq++
	}

	c.sendPayload(rawSendCommand(producerID, seq), rawMetadata(producerName, seq), []byte("good"))
	receipt := c.expect(pb.BaseCommand_SEND_RECEIPT).GetSendReceipt()
	if receipt.GetProducerId() != producerID || receipt.GetSequenceId() != seq {
		t.Fatalf("receipt %v, want producer %d seq %d", receipt, producerID, seq)
	}
	// Were a corrupt SEND stored, it would come first.
	consumerID := c.id()
	c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String("s"),
		SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: proto.Uint64(consumerID),
		InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
	c.flow(consumerID, 10)
	if m := c.expectMessage(); string(m.Payload) != "good" {
		t.Fatalf("first stored message is %q, want %q", m.Payload, "good")
	}
}

var rawTopicUnsafe = regexp.MustCompile(`[^\w-]+`)

// rawTopic is a topic name unique to the test.
func rawTopic(t testing.TB) string {
	return "persistent://public/default/" + rawTopicUnsafe.ReplaceAllString(t.Name(), "-")
}

// officialRoundTrip proves b serves the official Go client: a message produced on a new topic is
// consumed back.
func officialRoundTrip(t testing.TB, b *broker.Broker) {
	t.Helper()
	client := newOfficialClient(t, b)
	topic := rawTopic(t) + "-roundtrip"
	consumer, err := client.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "roundtrip", SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	if err != nil {
		t.Fatalf("official client: subscribe: %v", err)
	}
	defer consumer.Close()
	producer, err := client.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatalf("official client: create producer: %v", err)
	}
	defer producer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), rawTimeout)
	defer cancel()
	want := []byte("still served")
	if _, err := producer.Send(ctx, &pulsar.ProducerMessage{Payload: want}); err != nil {
		t.Fatalf("official client: send: %v", err)
	}
	msg, err := consumer.Receive(ctx)
	if err != nil {
		t.Fatalf("official client: receive: %v", err)
	}
	if !bytes.Equal(msg.Payload(), want) {
		t.Fatalf("official client: received %q, want %q", msg.Payload(), want)
	}
	if err := consumer.Ack(msg); err != nil {
		t.Fatalf("official client: ack: %v", err)
	}
}

// newOfficialClient is a pulsar-client-go client of b whose every operation is bounded by
// rawTimeout, closed when the test ends.
func newOfficialClient(t testing.TB, b *broker.Broker) pulsar.Client {
	t.Helper()
	client, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:               b.ServiceURL(),
		OperationTimeout:  rawTimeout,
		ConnectionTimeout: rawTimeout,
		Logger:            pulsarlog.DefaultNopLogger(),
	})
	if err != nil {
		t.Fatalf("official client: %v", err)
	}
	t.Cleanup(client.Close)
	return client
}

// TestRawSendErrorWaitingForReceiptKeepsItsSequenceID checks that a SEND_ERROR waiting in the
// receipt queue behind an earlier SEND's receipt (on a durable log, until its sync) answers
// its own SEND: the reader decodes every SEND into the same memory, so an answer that pointed
// into it would carry the next SEND's sequence id.
func TestRawSendErrorWaitingForReceiptKeepsItsSequenceID(t *testing.T) {
	t.Parallel()
	b := startRawBroker(t, func(cfg *broker.Config) {
		store, err := storage.OpenFileStore(t.TempDir(), storage.FileStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Store = store
	})
	c, _ := connectRaw(t, b, rawClientVersion, 21)
	topic := rawTopic(t)
	producerID := c.id()
	producerName := c.createProducer(topic, producerID)
	for round := range 20 {
		// A good SEND, a corrupt one and a good one again, in one write: the reader handles
		// the last before the first is synced.
		var frames []byte
		for i := range 3 {
			seq := uint64(round*3 + i)
			hp, err := wire.AppendPayload(nil, rawMetadata(producerName, seq), []byte("data"))
			if err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				hp[len(hp)-1] ^= 0x01
			}
			if frames, err = wire.AppendCommand(frames, rawSendCommand(producerID, seq), hp); err != nil {
				t.Fatal(err)
			}
		}
		c.write(frames)
		for i := range 3 {
			seq := uint64(round*3 + i)
			if i == 1 {
				got := c.expect(pb.BaseCommand_SEND_ERROR).GetSendError()
				if got.GetProducerId() != producerID || got.GetSequenceId() != seq || got.GetError() != pb.ServerError_ChecksumError {
					t.Fatalf("got %v, want SEND_ERROR ChecksumError for producer %d seq %d", got, producerID, seq)
				}
				continue
			}
			got := c.expect(pb.BaseCommand_SEND_RECEIPT).GetSendReceipt()
			if got.GetProducerId() != producerID || got.GetSequenceId() != seq {
				t.Fatalf("got receipt %v, want producer %d seq %d", got, producerID, seq)
			}
		}
	}
}
