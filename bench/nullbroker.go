package main

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// nullBroker speaks just enough of the protocol for one official producer and consumer: it
// answers the handshake, lookups and registrations, receipts every SEND at once without storing
// it, and answers FLOW by replaying one pre-built batch entry for as long as the permits allow.
// It does no work a broker could avoid, so what the clients reach against it is the ceiling
// they allow on this machine. Acks, redelivery requests and anything else are ignored.
type nullBroker struct {
	ln  net.Listener
	url string
	// entry is the headersAndPayload of the replayed batch, entryMsgs its message count.
	entry     []byte
	entryMsgs int64

	// sends and sentMsgs count SEND frames and the messages they carried, so the report can say
	// how large the producer's batches were.
	sends, sentMsgs atomic.Int64

	// echo, when set, forwards each SEND to a consumer of its topic instead of replaying entry
	// (nullecho.go).
	echo *echoTopics

	mu     sync.Mutex
	conns  map[*nullConn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// startNullBroker listens on a free loopback port. Each replayed entry holds batchMsgs messages
// of payloadSize bytes.
func startNullBroker(batchMsgs, payloadSize int) (*nullBroker, error) {
	entry, err := buildBatchEntry(batchMsgs, payloadSize)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("null broker: %w", err)
	}
	nb := &nullBroker{
		ln: ln, url: "pulsar://" + ln.Addr().String(),
		entry: entry, entryMsgs: int64(batchMsgs),
		conns: make(map[*nullConn]struct{}),
	}
	nb.wg.Go(nb.accept)
	return nb, nil
}

// buildBatchEntry builds, once, a batch entry as the official producer would send it.
func buildBatchEntry(n, payloadSize int) ([]byte, error) {
	payload := make([]byte, payloadSize)
	var body []byte
	for i := range n {
		var err error
		body, err = wire.AppendBatchMessage(body, &pb.SingleMessageMetadata{SequenceId: proto.Uint64(uint64(i))}, payload)
		if err != nil {
			return nil, err
		}
	}
	meta := &pb.MessageMetadata{
		ProducerName:       proto.String("null-broker"),
		SequenceId:         proto.Uint64(0),
		PublishTime:        proto.Uint64(uint64(time.Now().UnixMilli())),
		NumMessagesInBatch: proto.Int32(int32(n)),
		UncompressedSize:   proto.Uint32(uint32(len(body))),
	}
	return wire.AppendPayload(nil, meta, body)
}

func (nb *nullBroker) accept() {
	for {
		nc, err := nb.ln.Accept()
		if err != nil {
			return
		}
		c := &nullConn{nb: nb, nc: nc, permits: make(map[uint64]int64)}
		c.cond = sync.NewCond(&c.mu)
		nb.mu.Lock()
		if nb.closed {
			nb.mu.Unlock()
			nc.Close()
			return
		}
		nb.conns[c] = struct{}{}
		nb.mu.Unlock()
		nb.wg.Go(c.read)
		nb.wg.Go(c.write)
	}
}

// Close stops the listener and every connection and waits for their goroutines. Safe twice.
func (nb *nullBroker) Close() {
	nb.mu.Lock()
	nb.closed = true
	conns := nb.conns
	nb.conns = map[*nullConn]struct{}{}
	nb.mu.Unlock()
	nb.ln.Close()
	for c := range conns {
		c.close()
	}
	nb.wg.Wait()
}

// nullConn is one client connection: read runs the commands, write sends the replies queued in
// out and, while a consumer has permits, MESSAGE frames.
type nullConn struct {
	nb *nullBroker
	nc net.Conn

	mu      sync.Mutex
	cond    *sync.Cond
	out     []byte           // frames queued by read
	permits map[uint64]int64 // consumer id → permits left; negative after an overshoot, as upstream
	entryID uint64           // last entry id handed out, for receipts and messages alike
	closed  bool
}

func (c *nullConn) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cond.Broadcast()
	c.nc.Close()
}

func (c *nullConn) read() {
	defer c.close()
	if e := c.nb.echo; e != nil {
		defer e.forget(c)
	}
	r := wire.NewReader(c.nc, wire.MaxFrameSize(wire.DefaultMaxMessageSize))
	for {
		f, err := r.Next()
		if err != nil {
			return
		}
		c.mu.Lock()
		reply := c.handle(f.Cmd)
		if reply != nil {
			c.out, err = wire.AppendCommand(c.out, reply, nil)
		}
		c.mu.Unlock()
		if err != nil {
			return
		}
		c.cond.Signal()
		if e := c.nb.echo; e != nil {
			e.handle(c, f)
		}
	}
}

// handle runs one command under c.mu and returns the reply, if any.
func (c *nullConn) handle(cmd *pb.BaseCommand) *pb.BaseCommand {
	success := func(reqID uint64) *pb.BaseCommand {
		return &pb.BaseCommand{Type: pb.BaseCommand_SUCCESS.Enum(), Success: &pb.CommandSuccess{RequestId: proto.Uint64(reqID)}}
	}
	switch cmd.GetType() {
	case pb.BaseCommand_CONNECT:
		return &pb.BaseCommand{Type: pb.BaseCommand_CONNECTED.Enum(), Connected: &pb.CommandConnected{
			ServerVersion:   proto.String("letterbox-null-broker"),
			ProtocolVersion: proto.Int32(min(cmd.GetConnect().GetProtocolVersion(), int32(pb.ProtocolVersion_v21))),
			MaxMessageSize:  proto.Int32(wire.DefaultMaxMessageSize),
		}}
	case pb.BaseCommand_PING:
		return &pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}}
	case pb.BaseCommand_LOOKUP:
		return &pb.BaseCommand{Type: pb.BaseCommand_LOOKUP_RESPONSE.Enum(), LookupTopicResponse: &pb.CommandLookupTopicResponse{
			RequestId:        proto.Uint64(cmd.GetLookupTopic().GetRequestId()),
			BrokerServiceUrl: proto.String(c.nb.url),
			Response:         pb.CommandLookupTopicResponse_Connect.Enum(),
			Authoritative:    proto.Bool(true),
		}}
	case pb.BaseCommand_PARTITIONED_METADATA:
		return &pb.BaseCommand{Type: pb.BaseCommand_PARTITIONED_METADATA_RESPONSE.Enum(), PartitionMetadataResponse: &pb.CommandPartitionedTopicMetadataResponse{
			RequestId:  proto.Uint64(cmd.GetPartitionMetadata().GetRequestId()),
			Partitions: proto.Uint32(0),
			Response:   pb.CommandPartitionedTopicMetadataResponse_Success.Enum(),
		}}
	case pb.BaseCommand_PRODUCER:
		p := cmd.GetProducer()
		return &pb.BaseCommand{Type: pb.BaseCommand_PRODUCER_SUCCESS.Enum(), ProducerSuccess: &pb.CommandProducerSuccess{
			RequestId:      proto.Uint64(p.GetRequestId()),
			ProducerName:   proto.String(fmt.Sprintf("null-%d", p.GetProducerId())),
			LastSequenceId: proto.Int64(-1),
		}}
	case pb.BaseCommand_SEND:
		s := cmd.GetSend()
		c.nb.sends.Add(1)
		c.nb.sentMsgs.Add(int64(s.GetNumMessages()))
		c.entryID++
		return &pb.BaseCommand{Type: pb.BaseCommand_SEND_RECEIPT.Enum(), SendReceipt: &pb.CommandSendReceipt{
			ProducerId: proto.Uint64(s.GetProducerId()),
			SequenceId: proto.Uint64(s.GetSequenceId()),
			MessageId:  &pb.MessageIdData{LedgerId: proto.Uint64(1), EntryId: proto.Uint64(c.entryID)},
		}}
	case pb.BaseCommand_SUBSCRIBE:
		s := cmd.GetSubscribe()
		if c.nb.echo == nil { // forwarding keeps its consumers' permits itself
			c.permits[s.GetConsumerId()] = 0
		}
		return success(s.GetRequestId())
	case pb.BaseCommand_FLOW:
		f := cmd.GetFlow()
		if p, ok := c.permits[f.GetConsumerId()]; ok {
			c.permits[f.GetConsumerId()] = p + int64(f.GetMessagePermits())
		}
	case pb.BaseCommand_ACK:
		if a := cmd.GetAck(); a.RequestId != nil {
			return &pb.BaseCommand{Type: pb.BaseCommand_ACK_RESPONSE.Enum(), AckResponse: &pb.CommandAckResponse{
				ConsumerId: proto.Uint64(a.GetConsumerId()), RequestId: proto.Uint64(a.GetRequestId()),
			}}
		}
	case pb.BaseCommand_CLOSE_PRODUCER:
		return success(cmd.GetCloseProducer().GetRequestId())
	case pb.BaseCommand_CLOSE_CONSUMER:
		delete(c.permits, cmd.GetCloseConsumer().GetConsumerId())
		return success(cmd.GetCloseConsumer().GetRequestId())
	case pb.BaseCommand_UNSUBSCRIBE:
		delete(c.permits, cmd.GetUnsubscribe().GetConsumerId())
		return success(cmd.GetUnsubscribe().GetRequestId())
	}
	return nil
}

// write sends what read queued and, for every consumer with permits, MESSAGE frames each
// carrying the replayed entry under a new entry id (the client would drop a repeated id as a
// duplicate of one it has acked but not yet flushed).
func (c *nullConn) write() {
	defer c.close()
	const chunk = 1 << 20 // bytes of MESSAGE frames built per write
	var buf []byte
	for {
		c.mu.Lock()
		for !c.closed && len(c.out) == 0 && !c.hasPermits() {
			c.cond.Wait()
		}
		if c.closed {
			c.mu.Unlock()
			return
		}
		buf, c.out = c.out, buf[:0]
		var err error
		for id, p := range c.permits {
			for ; p > 0 && len(buf) < chunk && err == nil; p -= c.nb.entryMsgs {
				c.entryID++
				buf, err = wire.AppendCommand(buf, &pb.BaseCommand{Type: pb.BaseCommand_MESSAGE.Enum(), Message: &pb.CommandMessage{
					ConsumerId: proto.Uint64(id),
					MessageId:  &pb.MessageIdData{LedgerId: proto.Uint64(1), EntryId: proto.Uint64(c.entryID)},
				}}, c.nb.entry)
			}
			c.permits[id] = p
		}
		c.mu.Unlock()
		if err != nil {
			return
		}
		if _, err := c.nc.Write(buf); err != nil {
			return
		}
	}
}

func (c *nullConn) hasPermits() bool {
	for _, p := range c.permits {
		if p > 0 {
			return true
		}
	}
	return false
}
