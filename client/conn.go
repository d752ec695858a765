package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// conn is one connection to a broker. It owns three goroutines, stopped by close: the reader
// (which dispatches every incoming command), the writer (the only one that writes to the
// socket), and keepalive. Nothing on a conn blocks on the network except those goroutines:
// writes append to a buffer that the writer drains, so a reader dispatching to a producer or
// consumer never waits for the socket.
type conn struct {
	cl       *Client
	log      *slog.Logger
	logical  string // broker URL this connection stands for
	physical string // URL actually dialled (the service URL when proxying)
	nc       net.Conn

	maxMessageSize  int
	protocolVersion int32
	serverVersion   string

	// What the writer goroutine writes next, in order: wvec, then wbuf from wmark. Small
	// writes are copied into wbuf; a large one (writeByReference) joins wvec as it is, after
	// the piece of wbuf before it.
	wmu      sync.Mutex
	wbuf     []byte
	wvec     [][]byte
	wmark    int
	wsig     chan struct{}
	spare    []byte   // the writer's other buffer
	spareVec [][]byte // and vector

	mu        sync.Mutex
	pending   map[uint64]chan *pb.BaseCommand
	producers map[uint64]producerHandler
	consumers map[uint64]consumerHandler
	closed    bool
	closeErr  error

	done     chan struct{}
	wg       sync.WaitGroup
	lastRecv atomic.Int64

	// sent is the auth data this connection last presented (CONNECT or AUTH_RESPONSE): an
	// AUTH_CHALLENGE says the broker found it expired.
	sent atomic.Pointer[string]
}

// producerHandler receives what the broker sends to one producer. Methods run on the
// connection's reader goroutine and must not block. A receipt is the reader's until its next
// frame (wire.Scratch): copy what must outlive the call.
type producerHandler interface {
	receipt(*pb.CommandSendReceipt)
	sendError(*pb.CommandSendError)
	closedByBroker(*pb.CommandCloseProducer)
	connectionClosed(*conn)
}

// consumerHandler receives what the broker sends to one consumer; same rules as above, a
// MESSAGE's command too (its payload is the handler's).
type consumerHandler interface {
	// message runs on the reader goroutine, which owns mem.
	message(cmd *pb.CommandMessage, payload []byte, mem *readerMemory)
	closedByBroker(*pb.CommandCloseConsumer)
	activeChange(bool)
	endOfTopic()
	connectionClosed(*conn)
}

// dial connects to physical (standing for logical) and completes the CONNECT handshake.
func dial(ctx context.Context, cl *Client, logical, physical string) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, cl.opts.ConnectionTimeout)
	defer cancel()
	pu, err := parseServiceURL(physical)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", pu.hostport)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConnect, physical, err)
	}
	if pu.tls {
		tc, err := cl.tlsConfig(pu.host)
		if err != nil {
			nc.Close()
			return nil, err
		}
		tlsConn := tls.Client(nc, tc)
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("%w: %s: tls: %w", ErrConnect, physical, err)
		}
		nc = tlsConn
	}
	c := &conn{
		cl:             cl,
		log:            cl.log.With("broker", logical),
		logical:        logical,
		physical:       physical,
		nc:             nc,
		maxMessageSize: wire.DefaultMaxMessageSize,
		wsig:           make(chan struct{}, 1),
		pending:        make(map[uint64]chan *pb.BaseCommand),
		producers:      make(map[uint64]producerHandler),
		consumers:      make(map[uint64]consumerHandler),
		done:           make(chan struct{}),
	}
	r, err := c.handshake(ctx)
	if err != nil {
		nc.Close()
		return nil, err
	}
	c.lastRecv.Store(time.Now().UnixNano())
	c.wg.Add(3)
	go c.readLoop(r)
	go c.writeLoop()
	go c.keepalive()
	return c, nil
}

func (c *conn) handshake(ctx context.Context) (*frameReader, error) {
	if dl, ok := ctx.Deadline(); ok {
		c.nc.SetDeadline(dl)
		defer c.nc.SetDeadline(time.Time{})
	}
	// The deadline alone does not notice cancellation.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Now()) })
	defer stop()

	method, data, err := c.cl.credentials(ctx, "")
	if err != nil {
		return nil, err
	}
	sent := string(data)
	c.sent.Store(&sent)
	connect := &pb.CommandConnect{
		ClientVersion:   proto.String(c.cl.clientVersion()),
		ProtocolVersion: proto.Int32(int32(pb.ProtocolVersion_v21)),
		AuthMethodName:  proto.String(method),
		AuthData:        data,
		FeatureFlags: &pb.FeatureFlags{
			SupportsAuthRefresh: proto.Bool(true),
			SupportsGetPartitionedMetadataWithoutAutoCreation: proto.Bool(true),
		},
	}
	if c.logical != c.physical {
		lu, err := parseServiceURL(c.logical)
		if err != nil {
			return nil, err
		}
		connect.ProxyToBrokerUrl = proto.String(lu.hostport)
	}
	buf, err := wire.AppendCommand(nil, &pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: connect}, nil)
	if err != nil {
		return nil, err
	}
	if _, err := c.nc.Write(buf); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConnect, c.physical, err)
	}
	r := newFrameReader(c.nc, wire.MaxFrameSize(wire.DefaultMaxMessageSize))
	for {
		f, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %s: handshake: %w", ErrTimeout, c.physical, ctx.Err())
			}
			return nil, fmt.Errorf("%w: %s: handshake: %w", ErrConnect, c.physical, err)
		}
		switch f.Cmd.GetType() {
		case pb.BaseCommand_CONNECTED:
			cd := f.Cmd.GetConnected()
			c.serverVersion = cd.GetServerVersion()
			c.protocolVersion = cd.GetProtocolVersion()
			if n := cd.GetMaxMessageSize(); n > 0 {
				c.maxMessageSize = int(n)
			}
			r.maxFrame = wire.MaxFrameSize(c.maxMessageSize)
			return r, nil
		case pb.BaseCommand_ERROR:
			e := f.Cmd.GetError()
			return nil, serverError(e.GetError(), e.GetMessage())
		case pb.BaseCommand_AUTH_CHALLENGE:
			if _, err := c.nc.Write(c.authResponse(ctx)); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrConnect, c.physical, err)
			}
		default:
			return nil, fmt.Errorf("%w: %s answered CONNECT with %v", ErrProtocol, c.physical, f.Cmd.GetType())
		}
	}
}

// answerChallenge answers an AUTH_CHALLENGE that came after the handshake on a goroutine of
// its own: a token source may need a round trip to its issuer, and the reader must not wait
// for it. The goroutine belongs to the connection: it ends with it, or after OperationTimeout.
func (c *conn) answerChallenge() {
	c.wg.Add(1) // the reader, which calls this, keeps the group above zero
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), c.cl.opts.OperationTimeout)
		defer cancel()
		go func() { // ends with this call: cancel runs on return
			select {
			case <-c.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		c.write(c.authResponse(ctx))
	}()
}

// authResponse is the AUTH_RESPONSE to a challenge: fresh credentials. When there are none,
// it answers empty, and the broker closes the connection, whose reconnect tries again.
func (c *conn) authResponse(ctx context.Context) []byte {
	method, data, err := c.cl.credentials(ctx, *c.sent.Load())
	if err != nil {
		c.log.Warn("cannot refresh credentials", "err", err)
	}
	if data == nil {
		data = []byte{}
	}
	sent := string(data)
	c.sent.Store(&sent)
	buf, _ := wire.AppendCommand(nil, &pb.BaseCommand{
		Type: pb.BaseCommand_AUTH_RESPONSE.Enum(),
		AuthResponse: &pb.CommandAuthResponse{
			ClientVersion:   proto.String(c.cl.clientVersion()),
			ProtocolVersion: proto.Int32(int32(pb.ProtocolVersion_v21)),
			Response:        &pb.AuthData{AuthMethodName: proto.String(method), AuthData: data},
		},
	}, nil)
	return buf
}

// writeByReference is the size from which write queues a frame as it is rather than a copy:
// a producer's batches, which it keeps unchanged until their receipts anyway (sendOp.frame),
// and which were copied whole into the write buffer, a kilobyte a message of a replay.
const writeByReference = 16 << 10

// write queues b for the writer goroutine. It never blocks on the network. b must not change
// until it is written: every caller hands over either a new buffer or a SEND frame it keeps,
// unchanged, until the frame's receipt.
func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	if c.isClosed() {
		c.wmu.Unlock()
		return c.closedError()
	}
	if len(b) >= writeByReference {
		if len(c.wbuf) > c.wmark {
			c.wvec = append(c.wvec, c.wbuf[c.wmark:])
			c.wmark = len(c.wbuf)
		}
		c.wvec = append(c.wvec, b)
	} else {
		c.wbuf = append(c.wbuf, b...)
	}
	c.wmu.Unlock()
	select {
	case c.wsig <- struct{}{}:
	default:
	}
	return nil
}

// writeCmd queues a command without payload.
func (c *conn) writeCmd(cmd *pb.BaseCommand) error {
	buf, err := wire.AppendCommand(nil, cmd, nil)
	if err != nil {
		return err
	}
	return c.write(buf)
}

func (c *conn) writeLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.wsig:
		}
		c.wmu.Lock()
		buf, vec := c.wbuf, c.wvec
		if len(buf) > c.wmark {
			vec = append(vec, buf[c.wmark:])
		}
		if len(vec) == 0 {
			c.wmu.Unlock()
			continue
		}
		c.wbuf, c.wvec, c.wmark, c.spare, c.spareVec = c.spare[:0], c.spareVec[:0], 0, nil, nil
		c.wmu.Unlock()
		nb := net.Buffers(vec)
		if _, err := nb.WriteTo(c.nc); err != nil {
			c.close(fmt.Errorf("%w: write to %s: %w", ErrClosed, c.physical, err))
			return
		}
		if cap(buf) > 4<<20 {
			buf = nil // do not keep a huge buffer around
		}
		clear(vec) // frames written: the vector keeps none of them alive
		c.spare, c.spareVec = buf[:0], vec[:0]
	}
}

func (c *conn) keepalive() {
	defer c.wg.Done()
	iv := c.cl.opts.KeepAliveInterval
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, c.lastRecv.Load())) > 2*iv {
			c.close(fmt.Errorf("%w: %s: stale connection, nothing received for %v", ErrClosed, c.physical, 2*iv))
			return
		}
		c.writeCmd(&pb.BaseCommand{Type: pb.BaseCommand_PING.Enum(), Ping: &pb.CommandPing{}})
	}
}

func (c *conn) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *conn) closedError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeErr != nil {
		return c.closeErr
	}
	return ErrClosed
}

// close closes the connection once, fails its pending requests and tells every registered
// producer and consumer, which then reconnect on their own goroutines.
func (c *conn) close(why error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if why == nil {
		why = ErrClosed
	}
	c.closeErr = why
	producers, consumers := c.producers, c.consumers
	c.producers, c.consumers = map[uint64]producerHandler{}, map[uint64]consumerHandler{}
	c.wmu.Lock()
	close(c.done)
	c.wmu.Unlock()
	c.mu.Unlock()
	c.nc.Close()
	c.cl.pool.forget(c)
	if !errors.Is(why, errClientClosing) {
		c.log.Info("connection closed", "why", why)
	}
	for _, p := range producers {
		p.connectionClosed(c)
	}
	for _, h := range consumers {
		h.connectionClosed(c)
	}
}

// errClientClosing marks connections closed by Client.Close, which need no log line.
var errClientClosing = fmt.Errorf("%w: client closing", ErrClosed)

// wait blocks until the connection's goroutines have stopped (after close).
func (c *conn) wait() { c.wg.Wait() }

func (c *conn) addProducer(id uint64, h producerHandler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.closeErr
	}
	c.producers[id] = h
	return nil
}

func (c *conn) removeProducer(id uint64, h producerHandler) {
	c.mu.Lock()
	if c.producers[id] == h {
		delete(c.producers, id)
	}
	c.mu.Unlock()
}

func (c *conn) addConsumer(id uint64, h consumerHandler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.closeErr
	}
	c.consumers[id] = h
	return nil
}

func (c *conn) removeConsumer(id uint64, h consumerHandler) {
	c.mu.Lock()
	if c.consumers[id] == h {
		delete(c.consumers, id)
	}
	c.mu.Unlock()
}

func (c *conn) producer(id uint64) producerHandler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.producers[id]
}

func (c *conn) consumer(id uint64) consumerHandler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.consumers[id]
}
