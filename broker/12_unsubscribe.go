package broker

import (
	"slices"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// UNSUBSCRIBE deletes the consumer's subscription → SUCCESS. Without force it fails with
// ConsumerBusy while other consumers are attached; with force (the Go client always sets it)
// they are closed for good first.

func (c *conn) handleUnsubscribe(cmd *pb.CommandUnsubscribe) error {
	reqID := cmd.GetRequestId()
	cs := c.consumer(cmd.GetConsumerId())
	if cs == nil || cs.sub == nil {
		c.sendError(reqID, pb.ServerError_ConsumerNotFound, "Consumer not found")
		return nil
	}
	s := cs.sub
	t := s.topic
	busy := false
	t.locked(func() {
		if len(s.consumers) > 1 && !cmd.GetForce() {
			busy = true
			return
		}
		for _, other := range slices.Clone(s.consumers) {
			if other != cs {
				t.detach(other)
				other.conn.forgetConsumer(other)
				other.conn.sendCloseConsumer(other.id, false, "subscription "+s.name+" was deleted")
			}
		}
		t.detach(cs)
		t.removeSubscription(s)
	})
	if busy {
		c.sendError(reqID, pb.ServerError_ConsumerBusy, "Subscription has other connected consumers")
		return nil
	}
	c.forgetConsumer(cs)
	c.sendSuccess(reqID)
	return nil
}
