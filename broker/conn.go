package broker

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// conn is one client connection. Its reader goroutine decodes frames and runs the handlers; its
// writer goroutine flushes what handlers (and dispatchers of any topic) append to wbuf.
type conn struct {
	b      *Broker
	nc     net.Conn
	log    *slog.Logger
	remote string
	ip     string // what brokerMaxConnectionsPerIp counts by
	// front is the front end the connection is served as (frontend.go, in test builds): nil
	// for the broker's own listener. Set before the reader starts, or by CONNECT before
	// connected is set.
	front *frontEnd

	// connected is set once CONNECT was answered. The fields after it are written by the
	// reader goroutine before it is set and only read afterwards.
	connected       atomic.Bool
	clientVersion   string
	protocolVersion int32
	features        *pb.FeatureFlags
	connectedSince  time.Time
	auth            connAuth // the authenticated role (auth_conn.go)

	mu        sync.Mutex
	producers map[uint64]*producer
	consumers map[uint64]*consumer
	// closedProducers are the producer ids the broker closed lately (producer.go).
	closedProducers map[uint64]time.Time

	// The write queue: commands are encoded into wbuf; a large payload (a stored entry being
	// delivered) is not copied but queued by reference in wvec after the bytes before it, so
	// the writer sends it with one writev. wmark is where wbuf's not yet queued bytes start.
	// A queue longer than a chunk goes on in a fresh chunk (wchunks: the full ones, queued in
	// wvec), so a writer that falls behind never makes the queue copy itself as it grows.
	wmu     sync.Mutex
	wbuf    []byte
	wvec    [][]byte
	wholds  []storage.Holder // of the payloads queued in wvec
	wchunks []*[]byte
	wmark   int
	wclosed bool
	wsignal chan struct{}
	out     outQueue     // bytes queued, for backpressure (backpressure.go)
	pub     connThrottle // producers held by their publish rate (publish_rate.go)

	// msg is the MESSAGE being sent to one of the connection's consumers, built here by
	// consumer.sendMessage with msgMu held, so that a delivery allocates nothing. One per
	// connection, not per consumer: the command is 600 bytes of pointers, which every garbage
	// collection cycle scanned for each of 10,000 mostly idle consumers.
	msgMu sync.Mutex
	msg   messageCmd

	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	// heard is set by the reader for every frame and cleared by keepAlive as it pings: still
	// clear at the next tick, the PING went unanswered.
	heard atomic.Bool

	// sendHold is the pooled buffer of the SEND frame being handled (readLoop-owned):
	// handleSend takes it over for the log; the readLoop releases it if nobody did. sendReader
	// is the reader that frame came from, whose buffer handleSend detaches when the log keeps
	// the payload as it lies (06_send.go).
	sendHold   *wire.Buffer
	sendReader *wire.Reader
	// sendMeta is what handleSend decodes a SEND's metadata into (readLoop-owned).
	sendMeta wire.MetadataScratch
	// later are the topics whose new entries the reader is to dispatch once it has handled the
	// frames it has read (readLoop-owned; dispatchLater).
	later []*topic
}

func newConn(b *Broker, nc net.Conn) *conn {
	return &conn{
		b:         b,
		nc:        nc,
		remote:    nc.RemoteAddr().String(),
		ip:        remoteIP(nc.RemoteAddr()),
		log:       b.log.With("remote", nc.RemoteAddr().String()),
		producers: make(map[uint64]*producer),
		consumers: make(map[uint64]*consumer),
		wsignal:   make(chan struct{}, 1),
		out:       outQueue{drainedC: make(chan struct{}, 1)},
		pub:       connThrottle{resumeC: make(chan struct{}, 1)},
		done:      make(chan struct{}),
	}
}

func (c *conn) start() {
	// The broker waits for the reader on Close, and the reader, once the connection is closed,
	// for the connection's other goroutines (c.wg) before the broker forgets it: no goroutine
	// per connection only waits for the others.
	c.b.wg.Add(1)
	c.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
	go c.keepAlive()
}

// forget waits for the connection to close and for its goroutines but the reader, and has the
// broker forget it. The reader's last step: whatever ended it closed the connection, or had it
// closed (closeLater, after a panic).
func (c *conn) forget() {
	defer c.b.wg.Done()
	defer c.b.recoverPanic("forgetting a closed connection", nil)
	<-c.done
	c.wg.Wait()
	c.b.forgetConn(c)
}

// close shuts the connection once, logging why, and releases its producers and consumers.
func (c *conn) close(reason string) {
	c.closeOnce.Do(func() {
		if reason != "" {
			c.log.Info("closing connection", "reason", reason)
		}
		close(c.done)
		c.wmu.Lock()
		c.wclosed = true
		c.wmu.Unlock()
		c.nc.Close()

		c.mu.Lock()
		producers := c.producers
		consumers := c.consumers
		c.producers = map[uint64]*producer{}
		c.consumers = map[uint64]*consumer{}
		c.mu.Unlock()
		for _, p := range producers {
			p.topic.removeProducer(p)
		}
		for _, cs := range consumers {
			cs.topic.removeConsumer(cs)
		}
	})
}

func (c *conn) readLoop() {
	defer c.forget()
	defer c.b.recoverPanic("reading a command", c) // handleFrame contains the handlers' own
	r := wire.NewPooledReader(c.nc, wire.MaxFrameSize(c.b.cfg.MaxMessageSize), c.b.bufs)
	// The SEND and ACK handlers keep nothing of their command but values copied out of it
	// (06_send.go, 10_ack.go, and sendError for answers that wait in the receipt queue): every
	// SEND, and every ACK, is decoded into the same memory, where each allocated its own.
	r.ReuseSendCommands()
	r.ReuseAckCommands()
	defer func() {
		for _, t := range c.later {
			t.signal() // stored, and not dispatched yet: the topic's dispatcher does it
		}
	}()
	for {
		if len(c.later) > 0 && (!r.Ready() || len(c.later) >= maxLater) {
			c.runLater()
		}
		if !c.awaitDrain() { // a client that does not read its answers is not read either
			return
		}
		if !c.awaitUnthrottled() { // nor one whose producers are over their publish rate
			return
		}
		f, err := r.Next()
		if err != nil {
			if f.Cmd != nil && f.Cmd.GetType() == pb.BaseCommand_SEND && hasBody(f.Cmd) && c.connected.Load() {
				// Only the payload is bad; the stream is still aligned.
				c.sendChecksumError(f.Cmd.GetSend(), err)
				continue
			}
			switch {
			case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
				c.close("")
			default:
				c.close("bad frame: " + err.Error())
			}
			return
		}
		c.heard.Store(true)
		if f.Cmd.GetType() == pb.BaseCommand_SEND {
			// A pooled payload is stored as it lies, not copied; another is detached only for
			// a log that keeps it (06_send.go).
			c.sendHold, c.sendReader = r.DetachPooled(), r
		}
		ok := c.handleFrame(f)
		if c.sendHold != nil {
			c.sendHold.Release() // the SEND was refused or dropped
			c.sendHold = nil
		}
		if !ok {
			return
		}
	}
}

// dispatchLater has the reader run t's dispatcher before it waits for more to read, or after
// maxLater topics. The SENDs a read brought are then dispatched in one round per topic, on the
// reader's goroutine: no hand-off to the topic's dispatcher per SEND, and the writer finds the
// receipts and the MESSAGEs they led to in its queue together, for one writev where the
// hand-off made two. Called on the reader's goroutine.
func (c *conn) dispatchLater(t *topic) {
	if !slices.Contains(c.later, t) {
		c.later = append(c.later, t)
	}
}

// maxLater bounds the topics a reader puts off dispatching: a connection with producers on
// many topics dispatches each after this many.
const maxLater = 16

// runLater runs the dispatchers dispatchLater put off.
func (c *conn) runLater() {
	for i, t := range c.later {
		if wake := t.dispatchRound(); !wake.IsZero() {
			t.wakeAfter(wake) // something is due later
		}
		c.later[i] = nil
	}
	c.later = c.later[:0]
}

// handleFrame runs the handler for one frame; false means the connection was closed. A panic
// in a handler closes this connection only (panic.go).
func (c *conn) handleFrame(f wire.Frame) (ok bool) {
	cmd := f.Cmd
	defer func() {
		if r := recover(); r != nil {
			c.b.contain(r, "handling "+cmd.GetType().String(), c)
			ok = false
		}
	}()
	v := c.b.verdict(Inbound, cmd)
	if v.Delay > 0 {
		select {
		case <-time.After(v.Delay):
		case <-c.done:
			return false
		}
	}
	switch {
	case v.Disconnect:
		c.close("interceptor disconnected the connection")
		return false
	case v.Drop:
		return true
	case v.Fail != nil:
		c.failCommand(cmd, *v.Fail, "failed by interceptor")
		return true
	}
	if !c.connected.Load() && cmd.GetType() != pb.BaseCommand_CONNECT {
		c.close("command " + cmd.GetType().String() + " before CONNECT")
		return false
	}
	if err := c.dispatch(cmd, f.Payload); err != nil {
		c.close(err.Error())
		return false
	}
	return true
}

// errProtocol closes the connection: the peer sent something no client may send.
type errProtocol string

func (e errProtocol) Error() string { return string(e) }

func (c *conn) dispatch(cmd *pb.BaseCommand, payload []byte) error {
	if !hasBody(cmd) {
		// As upstream's decoder (checkArgument(cmd.hasX())): the handlers may rely on it.
		return errProtocol("command " + cmd.GetType().String() + " without its body")
	}
	h, ok := commands[cmd.GetType()]
	if !ok {
		return errProtocol("unsupported command " + cmd.GetType().String())
	}
	return h.handle(c, cmd, payload)
}

// hasBody reports whether cmd carries the message its type names: BaseCommand's field for each
// type has the type's number.
func hasBody(cmd *pb.BaseCommand) bool {
	m := cmd.ProtoReflect()
	fd := m.Descriptor().Fields().ByNumber(protowire.Number(cmd.GetType()))
	return fd != nil && m.Has(fd)
}

// send queues cmd (and a payload for MESSAGE) for the writer. It never blocks on the network,
// and it is done with cmd when it returns: the caller may reuse it.
func (c *conn) send(cmd *pb.BaseCommand, payload []byte) { c.sendHeld(cmd, payload, nil) }

// sendHeld is send for a payload in a reusable buffer the caller holds once (hold, nil if it
// is not one): the connection takes the hold over and releases it once the payload is written,
// copied into the write buffer, or dropped.
func (c *conn) sendHeld(cmd *pb.BaseCommand, payload []byte, hold storage.Holder) {
	defer func() {
		if r := recover(); r != nil {
			panic(c.blame(r)) // panic.go: whoever recovers closes this connection too
		}
	}()
	if v := c.b.verdict(Outbound, cmd); v != (Verdict{}) {
		switch {
		case v.Disconnect:
			releaseHold(hold)
			c.b.closeLater(c, "interceptor disconnected the connection")
			return
		case v.Drop:
			releaseHold(hold)
			return
		case v.Delay > 0:
			// The caller may build its next command in the same memory once send returns
			// (consumer.sendMessage, receiptQueue): what waits is a copy.
			cmd := proto.Clone(cmd).(*pb.BaseCommand)
			time.AfterFunc(v.Delay, func() {
				defer c.b.recoverPanic("sending a delayed command", c)
				c.enqueue(cmd, payload, hold)
			})
			return
		}
	}
	c.enqueue(cmd, payload, hold)
}

func releaseHold(h storage.Holder) {
	if h != nil {
		h.Release()
	}
}

func (c *conn) enqueue(cmd *pb.BaseCommand, payload []byte, hold storage.Holder) {
	c.wmu.Lock()
	if c.wclosed {
		c.wmu.Unlock()
		releaseHold(hold)
		return
	}
	var err error
	need := maxHeaderSize
	if len(payload) < refPayloadSize {
		need += len(payload) // copied
	}
	if len(c.wbuf) >= writeChunk/2 && cap(c.wbuf)-len(c.wbuf) < need {
		c.nextChunk()
	}
	before := len(c.wbuf)
	if len(payload) >= refPayloadSize {
		c.wbuf, err = wire.AppendCommandHeader(c.wbuf, cmd, len(payload))
		if err == nil {
			c.wvec = append(c.wvec, c.wbuf[c.wmark:], payload)
			c.wmark = len(c.wbuf)
			c.queuedOut(len(payload))
			if hold != nil {
				c.wholds = append(c.wholds, hold) // released once the writer has written it
				hold = nil
			}
		}
	} else {
		c.wbuf, err = wire.AppendCommand(c.wbuf, cmd, payload)
	}
	c.queuedOut(len(c.wbuf) - before)
	c.wmu.Unlock()
	releaseHold(hold) // copied, or not encoded
	if err != nil {
		// Only a handler bug can produce an unencodable command; say which.
		c.log.Error("cannot encode command", "type", cmd.GetType().String(), "err", err)
		return
	}
	select {
	case c.wsignal <- struct{}{}:
	default:
	}
}

// refPayloadSize is the payload size from which the writer sends a payload from where it lies
// instead of copying it into the write buffer.
const refPayloadSize = 4 << 10

// maxHeaderSize is room enough for a frame's header and command but a rare large one (a
// command that does not fit grows the chunk, which is then not pooled again).
const maxHeaderSize = 512

// nextChunk queues wbuf's bytes as they are and starts a pooled chunk, once wbuf holds half a
// chunk or more: below that a queue grows as a slice does, so that an idle connection keeps
// only the little buffer its traffic needed. Called with wmu held.
func (c *conn) nextChunk() {
	if len(c.wbuf) > c.wmark {
		c.wvec = append(c.wvec, c.wbuf[c.wmark:])
	}
	full := c.wbuf
	c.wchunks = append(c.wchunks, &full)
	c.wbuf, c.wmark = c.b.chunks.get(), 0
}

func (c *conn) writeLoop() {
	defer c.wg.Done()
	defer c.b.recoverPanic("writing", c)
	var spare []byte
	var spareVec [][]byte
	var spareHolds []storage.Holder
	var spareChunks []*[]byte
	for {
		select {
		case <-c.done:
			return
		case <-c.wsignal:
		}
		c.wmu.Lock()
		buf, vec, holds, chunks := c.wbuf, c.wvec, c.wholds, c.wchunks
		if len(buf) > c.wmark {
			vec = append(vec, buf[c.wmark:])
		}
		c.wbuf, c.wvec, c.wholds, c.wchunks, c.wmark = spare[:0], spareVec[:0], spareHolds[:0], spareChunks[:0], 0
		c.wmu.Unlock()
		if len(vec) == 0 {
			spare, spareVec, spareHolds, spareChunks = buf, vec, holds, chunks
			continue
		}
		nb := net.Buffers(vec)
		n, err := nb.WriteTo(c.nc)
		for _, h := range holds {
			h.Release()
		}
		if err != nil {
			c.close("write failed: " + err.Error())
			return
		}
		c.wroteOut(int(n)) // backpressure.go
		for _, ch := range chunks {
			c.b.chunks.put(ch)
		}
		clear(chunks)
		clear(holds)
		clear(vec) // drop the references to delivered payloads
		// The newest buffer stays this writer's spare unless a large command grew it.
		if cap(buf) > 2*writeChunk {
			buf = nil
		}
		spare, spareVec, spareHolds, spareChunks = buf, vec[:0], holds[:0], chunks[:0]
	}
}

// keepAlive pings the client every KeepAliveInterval and, as upstream's PulsarHandler does,
// closes the connection when nothing at all arrived between a PING and the next tick. A rule
// of elapsed time instead (nothing for a whole interval) closed healthy connections: a client
// that answered a PING at once and was otherwise idle had been silent for the interval less
// its round trip, and a tick late by more than that round trip, as ticks of a busy broker are,
// found it silent for longer. A connection that has not completed CONNECT within one interval
// is closed too.
func (c *conn) keepAlive() {
	defer c.wg.Done()
	defer c.b.recoverPanic("sending a keepalive", c)
	ticks, stop := c.keepAliveTicks()
	defer stop()
	pinged := false
	for {
		select {
		case <-c.done:
			return
		case <-ticks:
		}
		if !c.connected.Load() {
			c.close("no CONNECT within the keepalive interval")
			return
		}
		// A connection paused for its producers' publish rate has the answer waiting unread
		// (publish_rate.go), as upstream does not enforce the timeout on a channel whose
		// auto-read it turned off. One the broker stopped reading because it reads nothing
		// of what it is sent (backpressure.go) is closed: a client that reads nothing at all
		// is not waited for.
		answered := c.heard.Swap(false)
		if pinged && !answered && !c.throttled() {
			c.close("keepalive: no response to PING")
			return
		}
		pinged = true
		c.send(&pb.BaseCommand{Type: pb.BaseCommand_PING.Enum(), Ping: &pb.CommandPing{}}, nil)
	}
}

// keepAliveTicks is the ticker of keepAlive, and its stop.
func (c *conn) keepAliveTicks() (<-chan time.Time, func()) {
	if c.b.cfg.keepAliveTicks != nil {
		return c.b.cfg.keepAliveTicks()
	}
	t := time.NewTicker(c.b.cfg.KeepAliveInterval)
	return t.C, t.Stop
}

func (c *conn) sendError(requestID uint64, code pb.ServerError, msg string) {
	c.send(&pb.BaseCommand{
		Type:  pb.BaseCommand_ERROR.Enum(),
		Error: &pb.CommandError{RequestId: &requestID, Error: code.Enum(), Message: &msg},
	}, nil)
}

func (c *conn) sendSuccess(requestID uint64) {
	c.send(&pb.BaseCommand{
		Type:    pb.BaseCommand_SUCCESS.Enum(),
		Success: &pb.CommandSuccess{RequestId: &requestID},
	}, nil)
}

func (c *conn) sendChecksumError(send *pb.CommandSend, err error) {
	c.log.Warn("SEND with a bad payload", "producer_id", send.GetProducerId(), "err", err)
	c.mu.Lock()
	p := c.producers[send.GetProducerId()]
	c.mu.Unlock()
	if p == nil {
		c.send(sendError(send, pb.ServerError_ChecksumError, err.Error()), nil)
		return
	}
	p.fail(send, pb.ServerError_ChecksumError, err.Error())
}

// isGoClient reports a client whose version string says it is the official Go client, which
// drops its connection on commands it does not know (REACHED_END_OF_TOPIC among them).
func (c *conn) isGoClient() bool { return strings.HasPrefix(c.clientVersion, "Pulsar-Go-") }

func ptr[T any](v T) *T { return &v }
