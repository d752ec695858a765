package broker_test

// The seeds of FuzzBrokerCommands: what the official Go client really sends, recorded by a
// proxy between it and a broker, and a few hostile sessions written by hand.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// fuzzTopic is the topic the seeds use, and which the bystander always checks.
const fuzzTopic = "persistent://public/default/fuzz"

// recordProxy forwards connections to a broker, keeping what clients send.
type recordProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	streams []*bytes.Buffer
	wg      sync.WaitGroup
}

func newRecordProxy(tb testing.TB) *recordProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy listen: %v", err)
	}
	return &recordProxy{ln: ln}
}

// lockedWriter appends to a buffer under the proxy's lock.
type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (p *recordProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		buf := &bytes.Buffer{}
		p.mu.Lock()
		p.streams = append(p.streams, buf)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			io.Copy(io.MultiWriter(server, lockedWriter{&p.mu, buf}), client)
			server.Close()
		}()
		go func() {
			defer p.wg.Done()
			io.Copy(client, server)
			client.Close()
		}()
	}
}

// frames splits what was recorded into frames, each connection's in order.
func (p *recordProxy) frames(tb testing.TB) [][]wire.Frame {
	p.ln.Close()
	p.wg.Wait()
	var out [][]wire.Frame
	for _, s := range p.streams {
		r := wire.NewReader(bytes.NewReader(s.Bytes()), wire.MaxFrameSize(wire.DefaultMaxMessageSize))
		var fs []wire.Frame
		for {
			f, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					tb.Logf("recorded stream: %v", err)
				}
				break
			}
			f.Payload = bytes.Clone(f.Payload)
			fs = append(fs, f)
		}
		if len(fs) > 0 {
			out = append(out, fs)
		}
	}
	return out
}

// officialSeeds runs the official Go client through a session of every command the fuzzer is
// seeded with (connect, lookup, producer, send of single messages and batches, subscribe,
// flow, ack individual and cumulative, negative ack and its redelivery, seek, close) and
// returns what it sent, as fuzz inputs: the whole session, and the first half of it.
func officialSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	proxy := newRecordProxy(tb)
	cfg := broker.DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.AdvertisedAddr = proxy.ln.Addr().String() // LOOKUP sends the client back through the proxy
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		tb.Fatalf("seed broker: %v", err)
	}
	defer b.Close()
	proxy.target = b.Addr()
	go proxy.serve()

	func() {
		c, err := pulsar.NewClient(pulsar.ClientOptions{
			URL:               "pulsar://" + proxy.ln.Addr().String(),
			OperationTimeout:  10 * time.Second,
			ConnectionTimeout: 5 * time.Second,
			Logger:            plog.NewLoggerWithSlog(slog.New(slog.DiscardHandler)),
		})
		if err != nil {
			tb.Fatalf("seed client: %v", err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := officialSession(ctx, c); err != nil {
			tb.Fatalf("recording the official client's session: %v", err)
		}
	}()

	var seeds [][]byte
	for _, fs := range proxy.frames(tb) {
		seeds = append(seeds, encodeFuzzInput(fs), encodeFuzzInput(fs[:len(fs)/2]))
	}
	return seeds
}

// officialSession is what the recorded client does.
func officialSession(ctx context.Context, c pulsar.Client) error {
	single, err := c.CreateProducer(pulsar.ProducerOptions{Topic: fuzzTopic, DisableBatching: true})
	if err != nil {
		return err
	}
	for i, key := range []string{"", "k"} {
		msg := &pulsar.ProducerMessage{Payload: []byte{byte('a' + i)}, Key: key, Properties: map[string]string{"n": "1"}}
		if _, err := single.Send(ctx, msg); err != nil {
			return err
		}
	}
	batched, err := c.CreateProducer(pulsar.ProducerOptions{Topic: fuzzTopic, BatchingMaxMessages: 3,
		BatchingMaxPublishDelay: time.Hour, CompressionType: pulsar.LZ4})
	if err != nil {
		return err
	}
	sent := make(chan error, 3)
	for i := range 3 {
		batched.SendAsync(ctx, &pulsar.ProducerMessage{Payload: []byte{byte('x' + i)}},
			func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { sent <- err })
	}
	if err := batched.FlushWithCtx(ctx); err != nil {
		return err
	}
	for range 3 {
		if err := <-sent; err != nil {
			return err
		}
	}

	shared, err := c.Subscribe(pulsar.ConsumerOptions{Topic: fuzzTopic, SubscriptionName: "fuzz-shared",
		Type: pulsar.Shared, SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
		NackRedeliveryDelay: 10 * time.Millisecond, EnableBatchIndexAcknowledgment: true})
	if err != nil {
		return err
	}
	var first pulsar.MessageID
	for i := range 5 {
		m, err := shared.Receive(ctx)
		if err != nil {
			return err
		}
		switch {
		case i == 0:
			first = m.ID()
			shared.Nack(m) // REDELIVER_UNACKNOWLEDGED_MESSAGES
		default:
			if err := shared.Ack(m); err != nil {
				return err
			}
		}
	}
	if m, err := shared.Receive(ctx); err == nil { // the redelivery
		shared.Ack(m)
	}
	if err := shared.Seek(first); err != nil {
		return err
	}
	shared.Close()

	exclusive, err := c.Subscribe(pulsar.ConsumerOptions{Topic: fuzzTopic, SubscriptionName: "fuzz-exclusive",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	if err != nil {
		return err
	}
	var last pulsar.Message
	for range 5 {
		if last, err = exclusive.Receive(ctx); err != nil {
			return err
		}
	}
	if err := exclusive.AckCumulative(last); err != nil {
		return err
	}
	exclusive.Close()
	single.Close()
	batched.Close()
	return nil
}

// hostileSeeds are sessions no official client sends: the hostile clients of the issue that
// asked for the broker's limits (acks of positions that never were, a batch claiming a billion
// messages, huge permits and ack sets).
func hostileSeeds() [][]byte {
	connect := &pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
		ClientVersion: proto.String(rawClientVersion), ProtocolVersion: proto.Int32(21)}}
	producer := &pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
		Topic: proto.String(fuzzTopic), ProducerId: proto.Uint64(1), RequestId: proto.Uint64(1)}}
	subscribe := &pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: &pb.CommandSubscribe{
		Topic: proto.String(fuzzTopic), Subscription: proto.String("fuzz-hostile"), SubType: pb.CommandSubscribe_Shared.Enum(),
		ConsumerId: proto.Uint64(1), RequestId: proto.Uint64(2), InitialPosition: pb.CommandSubscribe_Earliest.Enum()}}
	flow := &pb.BaseCommand{Type: pb.BaseCommand_FLOW.Enum(), Flow: &pb.CommandFlow{
		ConsumerId: proto.Uint64(1), MessagePermits: proto.Uint32(1 << 31)}}
	var ids []*pb.MessageIdData
	for i := range 50 {
		ids = append(ids, &pb.MessageIdData{LedgerId: proto.Uint64(uint64(i * 7919)), EntryId: proto.Uint64(uint64(i) << 40),
			AckSet: []int64{-1, -1, -1, -1}})
	}
	ack := &pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum(), Ack: &pb.CommandAck{
		ConsumerId: proto.Uint64(1), AckType: pb.CommandAck_Individual.Enum(), MessageId: ids}}
	send := &pb.BaseCommand{Type: pb.BaseCommand_SEND.Enum(), Send: &pb.CommandSend{
		ProducerId: proto.Uint64(1), SequenceId: proto.Uint64(0), NumMessages: proto.Int32(1_000_000_000)}}
	var body []byte
	body, _ = wire.AppendBatchMessage(body, &pb.SingleMessageMetadata{}, []byte("one"))
	lying := fuzzPayload(&pb.MessageMetadata{ProducerName: proto.String("p"), SequenceId: proto.Uint64(0),
		PublishTime: proto.Uint64(1), NumMessagesInBatch: proto.Int32(1_000_000_000)}, body)
	frames := []wire.Frame{{Cmd: connect}, {Cmd: producer}, {Cmd: send, Payload: lying}, {Cmd: subscribe}, {Cmd: flow}, {Cmd: ack}}
	return [][]byte{encodeFuzzInput(frames)}
}

// fuzzPayload is a SEND's headers and payload as a frame carries them (magic and checksum
// first) for meta and body.
func fuzzPayload(meta *pb.MessageMetadata, body []byte) []byte {
	p, err := wire.AppendPayload(nil, meta, body)
	if err != nil {
		panic(err)
	}
	return p
}

// encodeFuzzInput writes frames in FuzzBrokerCommands' input format: per command, a uvarint
// length and the encoded BaseCommand, then a uvarint length and its payload from the metadata
// size on (without magic and checksum, which the harness adds, so that mutations reach the
// metadata and the batch instead of failing the checksum).
func encodeFuzzInput(frames []wire.Frame) []byte {
	var out []byte
	for _, f := range frames {
		cmd, err := proto.Marshal(f.Cmd)
		if err != nil {
			continue
		}
		out = binary.AppendUvarint(out, uint64(len(cmd)))
		out = append(out, cmd...)
		var payload []byte
		if len(f.Payload) >= 6 {
			payload = f.Payload[6:]
		}
		out = binary.AppendUvarint(out, uint64(len(payload)))
		out = append(out, payload...)
	}
	return out
}
