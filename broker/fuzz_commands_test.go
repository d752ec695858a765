package broker_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// FuzzBrokerCommands feeds sequences of decoded commands to an in-process broker, on one
// connection, and checks that the broker neither panics (a contained panic is logged, and any
// such log fails the input) nor stops answering: the fuzzed connection itself, while the
// broker has not closed it, and a bystander client on a connection of its own that creates a
// producer, sends and subscribes on every topic the input names. FuzzDecodeFrame (client/wire)
// fuzzes the bytes of frames; this one starts where decoding succeeded, in the handlers.
//
// An input is a list of commands, each a uvarint length and an encoded BaseCommand, then a
// uvarint length and its payload from the metadata size on; the harness adds the magic and the
// checksum, so that mutations reach the metadata and batches rather than failing the checksum.
// A session that does not open with CONNECT gets one. The seeds are what the official Go client
// sends (recorded through a proxy: connect, lookup, producer, send, subscribe, flow, ack, nack's
// redeliver, seek, close) and a few hostile sessions.
//
// One broker serves a fuzzing process's inputs (a new one every fuzzBrokerInputs), with small
// limits and a small memory budget so that those paths are fuzzed too.
func FuzzBrokerCommands(f *testing.F) {
	for _, seed := range officialSeeds(f) {
		f.Add(seed)
	}
	for _, seed := range hostileSeeds() {
		f.Add(seed)
	}
	h := &fuzzHarness{}
	f.Cleanup(h.close)
	f.Fuzz(func(t *testing.T, data []byte) {
		h.run(t, decodeFuzzInput(data))
	})
}

// fuzzCmd is one command of an input and its payload (metadata size on), nil if none.
type fuzzCmd struct {
	cmd     *pb.BaseCommand
	payload []byte
}

// maxFuzzCmds bounds the commands of one input.
const maxFuzzCmds = 64

func decodeFuzzInput(data []byte) []fuzzCmd {
	var out []fuzzCmd
	for len(data) > 0 && len(out) < maxFuzzCmds {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			break
		}
		raw := data[k : k+int(n)]
		data = data[k+int(n):]
		var payload []byte
		if m, k := binary.Uvarint(data); k > 0 && m <= uint64(len(data)-k) {
			if m > 0 {
				payload = data[k : k+int(m)]
			}
			data = data[k+int(m):]
		} else {
			data = nil
		}
		cmd := &pb.BaseCommand{}
		if proto.Unmarshal(raw, cmd) != nil {
			continue // undecodable commands are FuzzDecodeFrame's
		}
		out = append(out, fuzzCmd{cmd: cmd, payload: payload})
	}
	if len(out) == 0 || out[0].cmd.GetType() != pb.BaseCommand_CONNECT {
		out = append([]fuzzCmd{{cmd: &pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
			ClientVersion: proto.String(rawClientVersion), ProtocolVersion: proto.Int32(21)}}}}, out...)
	}
	return out
}

// fuzzFrame encodes c as a frame, with the magic and checksum its payload needs.
func fuzzFrame(c fuzzCmd) ([]byte, error) {
	var hp []byte
	if c.payload != nil {
		hp = binary.BigEndian.AppendUint16(nil, 0x0e01)
		hp = binary.BigEndian.AppendUint32(hp, crc32.Checksum(c.payload, crc32.MakeTable(crc32.Castagnoli)))
		hp = append(hp, c.payload...)
	}
	return wire.AppendCommand(nil, c.cmd, hp)
}

// fuzzBrokerInputs is how many inputs one broker serves before the harness starts a new one,
// so that what inputs leave behind (topics, subscriptions, data) stays small.
const fuzzBrokerInputs = 2000

// fuzzAnswer bounds every wait for the broker.
const fuzzAnswer = 10 * time.Second

// fuzzHarness is the broker of a fuzzing process and what its log says about panics.
type fuzzHarness struct {
	b      *broker.Broker
	inputs int
	panics *panicLog
}

func (h *fuzzHarness) close() {
	if h.b != nil {
		h.b.Close()
		h.b = nil
	}
}

func (h *fuzzHarness) broker(t *testing.T) *broker.Broker {
	if h.b != nil && h.inputs < fuzzBrokerInputs {
		h.inputs++
		return h.b
	}
	h.close()
	h.panics = &panicLog{}
	cfg := broker.DefaultConfig()
	cfg.Logger = slog.New(h.panics)
	cfg.PoisonFrameBuffers = true
	cfg.MemoryLimit = 64 << 20
	cfg.MaxProducersPerTopic = 16
	cfg.MaxConsumersPerTopic = 16
	cfg.MaxSubscriptionsPerTopic = 16
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	h.b, h.inputs = b, 1
	return b
}

// run plays cmds on a connection of their own, then checks the broker.
func (h *fuzzHarness) run(t *testing.T, cmds []fuzzCmd) {
	b := h.broker(t)
	h.panics.reset()
	nc, err := net.DialTimeout("tcp", b.Addr(), fuzzAnswer)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer nc.Close()
	// A final request with an id no input uses: its answer means every command before it was
	// handled (a connection's commands are handled in order).
	const lastID = 1<<62 + 7
	cmds = append(cmds, fuzzCmd{cmd: &pb.BaseCommand{Type: pb.BaseCommand_CONSUMER_STATS.Enum(),
		ConsumerStats: &pb.CommandConsumerStats{RequestId: proto.Uint64(lastID), ConsumerId: proto.Uint64(lastID)}}})
	answered := make(chan error, 1)
	go func() { answered <- readUntilStats(nc, lastID) }()
	var topics []string
	for _, c := range cmds {
		frame, err := fuzzFrame(c)
		if err != nil {
			continue
		}
		topics = append(topics, commandTopic(c.cmd)...)
		nc.SetWriteDeadline(time.Now().Add(fuzzAnswer))
		if _, err := nc.Write(frame); err != nil {
			break // the broker closed the connection: a command no client may send
		}
	}
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("fuzzed connection: %v", err)
		}
	case <-time.After(fuzzAnswer):
		t.Fatalf("the broker stopped answering the fuzzed connection for %v", fuzzAnswer)
	}
	nc.Close()
	h.panics.check(t)
	bystander(t, b, topics)
	h.panics.check(t)
}

// readUntilStats reads frames until the CONSUMER_STATS_RESPONSE to id (nil) or the broker
// closing the connection (nil too: a command it refused); anything else is an error.
func readUntilStats(nc net.Conn, id uint64) error {
	r := wire.NewReader(nc, wire.MaxFrameSize(wire.DefaultMaxMessageSize))
	nc.SetReadDeadline(time.Now().Add(fuzzAnswer))
	for {
		f, err := r.Next()
		var ne net.Error
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
			strings.Contains(err.Error(), "connection reset"):
			return nil
		case errors.As(err, &ne) && ne.Timeout():
			return fmt.Errorf("no answer within %v", fuzzAnswer)
		default:
			return fmt.Errorf("read: %w", err)
		}
		if s := f.Cmd.GetConsumerStatsResponse(); s != nil && s.GetRequestId() == id {
			return nil
		}
	}
}

// commandTopic is the topic a command names, if any.
func commandTopic(cmd *pb.BaseCommand) []string {
	var t string
	switch {
	case cmd.Producer != nil:
		t = cmd.Producer.GetTopic()
	case cmd.Subscribe != nil:
		t = cmd.Subscribe.GetTopic()
	case cmd.LookupTopic != nil:
		t = cmd.LookupTopic.GetTopic()
	case cmd.PartitionMetadata != nil:
		t = cmd.PartitionMetadata.GetTopic()
	}
	if t == "" {
		return nil
	}
	return []string{t}
}

// bystander checks that another client is still served on every topic the input named (three
// at most) and on fuzzTopic: a producer is created (or refused), a message sent (and receipted,
// refused, or its producer closed by a backlog quota), a reader subscribed (or refused).
func bystander(t *testing.T, b *broker.Broker, topics []string) {
	seen := map[string]bool{fuzzTopic: true}
	check := []string{fuzzTopic}
	for _, tn := range topics {
		if !seen[tn] && len(check) < 4 {
			seen[tn] = true
			check = append(check, tn)
		}
	}
	c := fuzzDial(t, b)
	defer c.nc.Close()
	c.roundTrip(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
		ClientVersion: proto.String("bystander"), ProtocolVersion: proto.Int32(21)}}, nil, 0)
	for i, tn := range check {
		id := uint64(i + 1)
		ok := c.roundTrip(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: &pb.CommandProducer{
			Topic: proto.String(tn), ProducerId: &id, RequestId: &id}}, nil, id)
		if ok {
			payload := fuzzPayload(&pb.MessageMetadata{ProducerName: proto.String("bystander"),
				SequenceId: proto.Uint64(0), PublishTime: proto.Uint64(uint64(time.Now().UnixMilli()))}, []byte("alive"))
			c.roundTrip(&pb.BaseCommand{Type: pb.BaseCommand_SEND.Enum(), Send: &pb.CommandSend{
				ProducerId: &id, SequenceId: proto.Uint64(0)}}, payload, id)
			c.roundTrip(&pb.BaseCommand{Type: pb.BaseCommand_CLOSE_PRODUCER.Enum(), CloseProducer: &pb.CommandCloseProducer{
				ProducerId: &id, RequestId: proto.Uint64(id + 100)}}, nil, id+100)
		}
		sub := &pb.CommandSubscribe{Topic: proto.String(tn), Subscription: proto.String("bystander"),
			SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: &id, RequestId: proto.Uint64(id + 200),
			Durable: proto.Bool(false), StartMessageId: wire.LatestID()}
		if c.roundTrip(&pb.BaseCommand{Type: pb.BaseCommand_SUBSCRIBE.Enum(), Subscribe: sub}, nil, id+200) {
			c.roundTrip(&pb.BaseCommand{Type: pb.BaseCommand_CLOSE_CONSUMER.Enum(), CloseConsumer: &pb.CommandCloseConsumer{
				ConsumerId: &id, RequestId: proto.Uint64(id + 300)}}, nil, id+300)
		}
	}
}

// fuzzConn is the bystander's connection.
type fuzzConn struct {
	t  *testing.T
	nc net.Conn
	r  *wire.Reader
}

func fuzzDial(t *testing.T, b *broker.Broker) *fuzzConn {
	nc, err := net.DialTimeout("tcp", b.Addr(), fuzzAnswer)
	if err != nil {
		t.Fatalf("bystander: dial: %v", err)
	}
	return &fuzzConn{t: t, nc: nc, r: wire.NewReader(nc, wire.MaxFrameSize(wire.DefaultMaxMessageSize))}
}

// roundTrip sends cmd and waits for its answer: the command answering request id (or, for
// CONNECT, CONNECTED; for SEND, anything about producer id). It reports whether the answer was
// a success, and fails the input if none comes.
func (c *fuzzConn) roundTrip(cmd *pb.BaseCommand, payload []byte, id uint64) bool {
	frame, err := wire.AppendCommand(nil, cmd, payload)
	if err != nil {
		c.t.Fatalf("bystander: encode %v: %v", cmd.GetType(), err)
	}
	c.nc.SetDeadline(time.Now().Add(fuzzAnswer))
	if _, err := c.nc.Write(frame); err != nil {
		c.t.Fatalf("bystander: %v: %v", cmd.GetType(), err)
	}
	for {
		f, err := c.r.Next()
		if err != nil {
			c.t.Fatalf("bystander: no answer to %v: %v", cmd.GetType(), err)
		}
		a := f.Cmd
		switch a.GetType() {
		case pb.BaseCommand_PING:
			pong, _ := wire.AppendCommand(nil, &pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}}, nil)
			c.nc.Write(pong)
		case pb.BaseCommand_CONNECTED:
			if cmd.GetType() == pb.BaseCommand_CONNECT {
				return true
			}
		case pb.BaseCommand_ERROR:
			if cmd.GetType() == pb.BaseCommand_CONNECT {
				c.t.Fatalf("bystander: CONNECT refused: %v", a)
			}
			if a.GetError().GetRequestId() == id {
				return false
			}
		case pb.BaseCommand_SUCCESS:
			if a.GetSuccess().GetRequestId() == id {
				return true
			}
		case pb.BaseCommand_PRODUCER_SUCCESS:
			if a.GetProducerSuccess().GetRequestId() == id {
				return true
			}
		case pb.BaseCommand_SEND_RECEIPT:
			if cmd.GetType() == pb.BaseCommand_SEND && a.GetSendReceipt().GetProducerId() == id {
				return true
			}
		case pb.BaseCommand_SEND_ERROR:
			if cmd.GetType() == pb.BaseCommand_SEND && a.GetSendError().GetProducerId() == id {
				return false
			}
		case pb.BaseCommand_CLOSE_PRODUCER:
			// A backlog quota closed the producer instead of storing the message.
			if cmd.GetType() == pb.BaseCommand_SEND && a.GetCloseProducer().GetProducerId() == id {
				return false
			}
		}
	}
}

// panicLog is the fuzz broker's log: it keeps what says a panic was contained.
type panicLog struct {
	mu     sync.Mutex
	panics []string
}

func (l *panicLog) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelError }

func (l *panicLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, "panic") {
		return nil
	}
	var sb strings.Builder
	sb.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&sb, "\n%s: %v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.panics = append(l.panics, sb.String())
	l.mu.Unlock()
	return nil
}

func (l *panicLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *panicLog) WithGroup(string) slog.Handler      { return l }

func (l *panicLog) reset() {
	l.mu.Lock()
	l.panics = nil
	l.mu.Unlock()
}

// check fails the input if the broker contained a panic.
func (l *panicLog) check(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.panics) > 0 {
		t.Fatalf("the broker panicked:\n%s", strings.Join(l.panics, "\n\n"))
	}
}
