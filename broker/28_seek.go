package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// SEEK by message id (inclusive: that entry is the next delivered) or by publish time (the first
// entry published at or after it). As upstream, the subscription's consumers are then closed
// (CLOSE_CONSUMER, reconnect allowed) before SUCCESS: the Go client pauses dispatch after a seek
// until it has resubscribed. An ack_set on the id (Java clients seeking inside a batch) marks
// the batch's earlier messages as already acknowledged.

func (c *conn) handleSeek(cmd *pb.CommandSeek) error {
	reqID := cmd.GetRequestId()
	cs := c.consumer(cmd.GetConsumerId())
	if cs == nil || cs.sub == nil {
		c.sendError(reqID, pb.ServerError_ConsumerNotFound, "Consumer not found")
		return nil
	}
	s := cs.sub
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	var start storage.Position
	var ackSet []int64
	switch {
	case cmd.MessageId != nil:
		id := cmd.GetMessageId()
		start = storage.Position{Ledger: int64(id.GetLedgerId()), Entry: int64(id.GetEntryId())}
		if first := t.log.First(); start.Less(first) {
			start = first
		}
		if end := t.log.Next(t.log.Last()); end.Less(start) {
			start = end
		}
		ackSet = id.GetAckSet()
	case cmd.MessagePublishTime != nil:
		start = t.log.FindByTime(int64(cmd.GetMessagePublishTime()))
	default:
		c.sendError(reqID, pb.ServerError_NotAllowedError, "SEEK needs a message id or a publish time")
		return nil
	}
	s.resetTo(start)
	if ackSet = s.boundAckSet(start, ackSet); len(ackSet) > 0 && !allZero(ackSet) {
		s.partial[start] = ackSet
	}
	// A reader's subscription waits for the reader to come back (reader_seek.go).
	s.parkOnDetach = !s.durable
	t.closeSubscriptionConsumers(s, true, "subscription was reset by a seek")
	s.parkOnDetach = false
	c.sendSuccess(reqID)
	return nil
}
