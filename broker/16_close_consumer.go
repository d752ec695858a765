package broker

import "github.com/letterbox-dev/letterbox/client/wire/pb"

// CLOSE_CONSUMER from the client → SUCCESS; unacknowledged entries go back for redelivery (with
// the redelivery count raised on Shared/Key_Shared, as upstream). The broker's own
// CLOSE_CONSUMER is sent by conn.sendCloseConsumer.

func (c *conn) handleCloseConsumer(cmd *pb.CommandCloseConsumer) error {
	c.mu.Lock()
	cs := c.consumers[cmd.GetConsumerId()]
	delete(c.consumers, cmd.GetConsumerId())
	c.mu.Unlock()
	if cs != nil {
		cs.topic.removeConsumer(cs)
	}
	c.sendSuccess(cmd.GetRequestId())
	return nil
}
