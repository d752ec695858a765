package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// GET_LAST_MESSAGE_ID → GET_LAST_MESSAGE_ID_RESPONSE: the topic's last entry (with the index of
// its last message for a batch) and the subscription's mark-delete position. An empty topic
// answers entry −1, which the Go client reads as "no messages".

func (c *conn) handleGetLastMessageID(cmd *pb.CommandGetLastMessageId) error {
	cs := c.consumer(cmd.GetConsumerId())
	if cs == nil || cs.sub == nil {
		c.sendError(cmd.GetRequestId(), pb.ServerError_ConsumerNotFound, "Consumer not found")
		return nil
	}
	t := cs.sub.topic
	var last *pb.MessageIdData
	var md storage.Position
	t.locked(func() {
		var ok bool
		if last, ok = cs.sub.compactedLastMessageID(); !ok { // compaction_read.go
			last = t.lastMessageID()
		}
		md = cs.sub.markDelete
	})
	c.send(&pb.BaseCommand{
		Type: pb.BaseCommand_GET_LAST_MESSAGE_ID_RESPONSE.Enum(),
		GetLastMessageIdResponse: &pb.CommandGetLastMessageIdResponse{
			RequestId:     cmd.RequestId,
			LastMessageId: last,
			ConsumerMarkDeletePosition: &pb.MessageIdData{
				LedgerId: ptr(uint64(md.Ledger)),
				EntryId:  ptr(uint64(md.Entry)),
			},
		},
	}, nil)
	return nil
}
