package broker

import "github.com/letterbox-dev/letterbox/client/wire/pb"

// CLOSE_PRODUCER from the client → SUCCESS (also for an id we no longer know, so a client whose
// producer the broker already closed does not wait). The broker's own CLOSE_PRODUCER is sent by
// conn.sendCloseProducer.

func (c *conn) handleCloseProducer(cmd *pb.CommandCloseProducer) error {
	c.mu.Lock()
	p := c.producers[cmd.GetProducerId()]
	delete(c.producers, cmd.GetProducerId())
	c.mu.Unlock()
	if p != nil {
		p.topic.removeProducer(p)
	}
	c.sendSuccess(cmd.GetRequestId())
	return nil
}
