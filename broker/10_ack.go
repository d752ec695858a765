package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// ACK, individual (many ids at once) or cumulative, with batch-index ack_set when enabled
// (set bit = still unacknowledged). With a request_id (AckWithResponse) the client waits for
// ACK_RESPONSE; an empty message means success. An ACK carrying validation_error reports a
// message the client could not read: upstream logs it and acknowledges, and so do we.

func (c *conn) handleAck(cmd *pb.CommandAck) error {
	cs := c.consumer(cmd.GetConsumerId())
	if cs == nil || cs.sub == nil {
		if cmd.RequestId != nil {
			c.sendAckResponse(cmd, pb.ServerError_ConsumerNotFound, "Consumer not found")
		}
		return nil
	}
	if cmd.ValidationError != nil {
		c.log.Warn("client could not read a message", "consumer", cs.name, "error", cmd.GetValidationError().String())
	}
	s := cs.sub
	t := s.topic
	t.mu.Lock()
	for _, id := range cmd.GetMessageId() {
		p := storage.Position{Ledger: int64(id.GetLedgerId()), Entry: int64(id.GetEntryId())}
		if cmd.GetAckType() == pb.CommandAck_Cumulative {
			s.ackCumulative(p, id.GetAckSet())
		} else {
			s.ackIndividual(p, id.GetAckSet())
		}
	}
	cs.lastAck = time.Now()
	s.lastAck = cs.lastAck
	t.mu.Unlock()
	t.signal()
	if cmd.RequestId != nil {
		c.sendAckResponse(cmd, 0, "")
	}
	return nil
}

func (c *conn) sendAckResponse(cmd *pb.CommandAck, code pb.ServerError, msg string) {
	r := &pb.CommandAckResponse{ConsumerId: cmd.ConsumerId, RequestId: cmd.RequestId}
	if msg != "" {
		r.Error, r.Message = code.Enum(), &msg
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_ACK_RESPONSE.Enum(), AckResponse: r}, nil)
}
