package broker

import (
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// ACK, individual (many ids at once) or cumulative, with batch-index ack_set when enabled
// (set bit = still unacknowledged). With a request_id (AckWithResponse) the client waits for
// ACK_RESPONSE; an empty message means success. An ACK carrying validation_error reports a
// message the client could not read: upstream logs it and acknowledges, and so do we.
//
// Only positions the subscription could have been given count: entries of the log after its
// mark-delete position. The rest (already acknowledged, trimmed, beyond the last entry, in a
// ledger the log does not have) are ignored with a debug log, as upstream's managed cursor
// ignores them, and the ACK is still answered success: there is nothing for the client to
// retry. So what a client acknowledges can never make the cursor hold more than the log has,
// whatever ids it names. An ack_set longer than the entry's batch needs is cut to it.

// cmd is the reader's until its next frame (wire.Reader.ReuseAckCommands): nothing here keeps
// it or a pointer into it (boundAckSet copies an ack set it keeps).
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
	var ignored int
	t.locked(func() {
		in := t.logSpan()
		cumulative := cmd.GetAckType() == pb.CommandAck_Cumulative
		for _, id := range cmd.GetMessageId() {
			p := storage.Position{Ledger: int64(id.GetLedgerId()), Entry: int64(id.GetEntryId())}
			if !s.markDelete.Less(p) || !in.holds(p) {
				ignored++
				continue
			}
			ackSet := s.boundAckSet(p, id.GetAckSet())
			if cumulative {
				s.ackCumulative(p, ackSet)
			} else {
				s.ackIndividual(p, ackSet)
			}
		}
		cs.lastAck = time.Now()
		s.lastAck = cs.lastAck
	})
	if ignored > 0 {
		c.log.Debug("ACK for positions the subscription was never given; ignored",
			"topic", t.full, "subscription", s.name, "ignored", ignored, "of", len(cmd.GetMessageId()))
	}
	t.signal()
	if cmd.RequestId != nil {
		c.sendAckResponse(cmd, 0, "")
	}
	return nil
}

// logSpan is what t's log holds now, to check many positions against. Called with t.mu held.
func (t *topic) logSpan() logSpan {
	sp := logSpan{first: t.log.First(), last: t.log.Last()}
	if sp.first.Ledger != sp.last.Ledger {
		// Several ledgers (segments): a position between them may name one the log does not
		// have, or an entry past a ledger's end.
		sp.ledgers = t.log.Ledgers()
	}
	return sp
}

// logSpan is the positions of a log's stored entries.
type logSpan struct {
	first, last storage.Position
	ledgers     []storage.LedgerInfo // nil when the log has one ledger
}

// holds reports whether p is a stored entry.
func (sp logSpan) holds(p storage.Position) bool {
	if p.Less(sp.first) || sp.last.Less(p) {
		return false
	}
	if sp.ledgers == nil {
		return true
	}
	for _, l := range sp.ledgers {
		if l.ID == p.Ledger {
			return p.Entry >= l.First && p.Entry < l.First+l.Entries
		}
	}
	return false
}

// boundAckSet cuts an ack_set to the words the batch at p needs (64 messages a word): a client
// cannot make the cursor keep more than the batch has. The batch's size is known from its
// delivery, else read from the log. Called with t.mu held.
func (s *subscription) boundAckSet(p storage.Position, ackSet []int64) []int64 {
	if len(ackSet) == 0 {
		return nil
	}
	var n int64
	if pe, ok := s.pending[p]; ok {
		n = pe.messages
	} else if e, ok := s.topic.log.GetHeld(p); ok {
		n = int64(e.Meta.NumMessages)
		releaseHold(e.Hold)
	}
	words := int((max(n, 1) + 63) / 64)
	// A copy: the decoded command's array would otherwise stay pinned behind a short slice.
	return slices.Clone(ackSet[:min(len(ackSet), words)])
}

func (c *conn) sendAckResponse(cmd *pb.CommandAck, code pb.ServerError, msg string) {
	r := &pb.CommandAckResponse{ConsumerId: ptr(cmd.GetConsumerId()), RequestId: ptr(cmd.GetRequestId())}
	if msg != "" {
		r.Error, r.Message = code.Enum(), &msg
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_ACK_RESPONSE.Enum(), AckResponse: r}, nil)
}
