package broker_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// rawTimeout bounds every read and every official-client operation of the raw tests, so a
// broker that never answers fails the test instead of stalling it.
const rawTimeout = 5 * time.Second

// rawConn is a bare protocol client. It sends exactly the bytes a test builds, including what no
// official client would send, and reads the broker's answers one frame at a time. Its methods
// call t.Fatal, so use it from the test goroutine only.
type rawConn struct {
	t      testing.TB
	nc     net.Conn
	r      *wire.Reader
	lastID uint64
}

// rawMessage is a MESSAGE with its metadata decoded and its payload copied out of the reader.
type rawMessage struct {
	Cmd     *pb.CommandMessage
	Meta    *pb.MessageMetadata
	Payload []byte
}

// startRawBroker starts a broker with the default configuration, adjusted by edit if not nil,
// logging to the test's output, and closes it when the test ends.
func startRawBroker(t testing.TB, edit func(*broker.Config)) *broker.Broker {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	cfg.PoisonFrameBuffers = true // a buffer reused too early fails the checksums
	if edit != nil {
		edit(&cfg)
	}
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// dialRaw opens a TCP connection to b and sends nothing.
func dialRaw(t testing.TB, b *broker.Broker) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", b.Addr(), rawTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", b.Addr(), err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, r: wire.NewReader(nc, wire.MaxFrameSize(wire.DefaultMaxMessageSize))}
}

// connectRaw dials b and completes the handshake announcing clientVersion and protocolVersion.
func connectRaw(t testing.TB, b *broker.Broker, clientVersion string, protocolVersion int32) (*rawConn, *pb.CommandConnected) {
	t.Helper()
	c := dialRaw(t, b)
	got := c.request(&pb.BaseCommand{Type: pb.BaseCommand_CONNECT.Enum(), Connect: &pb.CommandConnect{
		ClientVersion: proto.String(clientVersion), ProtocolVersion: proto.Int32(protocolVersion),
	}}, pb.BaseCommand_CONNECTED)
	return c, got.GetConnected()
}

// id returns a fresh id for requests, producers and consumers.
func (c *rawConn) id() uint64 { c.lastID++; return c.lastID }

func (c *rawConn) write(p []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(rawTimeout))
	if _, err := c.nc.Write(p); err != nil {
		c.t.Fatalf("write %d bytes: %v", len(p), err)
	}
}

func (c *rawConn) send(cmd *pb.BaseCommand) {
	c.t.Helper()
	frame, err := wire.AppendCommand(nil, cmd, nil)
	if err != nil {
		c.t.Fatalf("encode %v: %v", cmd.GetType(), err)
	}
	c.write(frame)
}

// sendPayload sends cmd (a SEND) followed by a correctly checksummed meta and payload.
func (c *rawConn) sendPayload(cmd *pb.BaseCommand, meta *pb.MessageMetadata, payload []byte) {
	c.t.Helper()
	hp, err := wire.AppendPayload(nil, meta, payload)
	if err != nil {
		c.t.Fatalf("encode payload: %v", err)
	}
	frame, err := wire.AppendCommand(nil, cmd, hp)
	if err != nil {
		c.t.Fatalf("encode %v: %v", cmd.GetType(), err)
	}
	c.write(frame)
}

// next returns the next frame, answering (and skipping) the broker's keepalive PINGs as a client
// must. The frame's Payload is valid until the following read.
func (c *rawConn) next() wire.Frame {
	c.t.Helper()
	for {
		c.nc.SetReadDeadline(time.Now().Add(rawTimeout))
		f, err := c.r.Next()
		if err != nil {
			c.t.Fatalf("read frame: %v", err)
		}
		if f.Cmd.GetType() != pb.BaseCommand_PING {
			return f
		}
		c.send(&pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}})
	}
}

// expect reads the next frame and fails unless it is a typ command.
func (c *rawConn) expect(typ pb.BaseCommand_Type) *pb.BaseCommand {
	c.t.Helper()
	f := c.next()
	if f.Cmd.GetType() != typ {
		c.t.Fatalf("got %v, want %v: %v", f.Cmd.GetType(), typ, f.Cmd)
	}
	return f.Cmd
}

// request sends cmd and expects the next frame to be a want command.
func (c *rawConn) request(cmd *pb.BaseCommand, want pb.BaseCommand_Type) *pb.BaseCommand {
	c.t.Helper()
	c.send(cmd)
	return c.expect(want)
}

// expectMessage reads the next frame, which must be a MESSAGE with a valid payload.
func (c *rawConn) expectMessage() rawMessage {
	c.t.Helper()
	f := c.next()
	if f.Cmd.GetType() != pb.BaseCommand_MESSAGE {
		c.t.Fatalf("got %v, want MESSAGE: %v", f.Cmd.GetType(), f.Cmd)
	}
	meta, payload, err := wire.ParsePayload(f.Payload)
	if err != nil {
		c.t.Fatalf("MESSAGE payload: %v", err)
	}
	return rawMessage{Cmd: f.Cmd.GetMessage(), Meta: meta, Payload: bytes.Clone(payload)}
}

// expectClosed reads, ignoring any frame and answering nothing, until the broker closes the
// connection; it fails if the connection is still open after within.
func (c *rawConn) expectClosed(within time.Duration) {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(within))
	for {
		_, err := c.r.Next()
		var ne net.Error
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
			return
		case errors.As(err, &ne) && ne.Timeout():
			c.t.Fatalf("the broker kept the connection open for %v", within)
		default:
			c.t.Fatalf("read: %v (want the broker to close the connection)", err)
		}
	}
}
