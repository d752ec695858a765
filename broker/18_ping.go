package broker

import "github.com/letterbox-dev/letterbox/client/wire/pb"

// PING → PONG. The broker's own PINGs come from conn.keepAlive; a PONG needs no handler beyond
// the receive time every frame records.

func (c *conn) handlePing() error {
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}}, nil)
	return nil
}
