package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// REDELIVER_UNACKNOWLEDGED_MESSAGES (negative acks). On Shared/Key_Shared the named entries are
// redelivered with their redelivery count raised; with no ids, or on Exclusive/Failover, all of
// the consumer's unacknowledged entries are (upstream rewinds the cursor). A consumer_epoch
// (Java clients) becomes the consumer's epoch, carried by the messages that follow.

func (c *conn) handleRedeliver(cmd *pb.CommandRedeliverUnacknowledgedMessages) error {
	cs := c.consumer(cmd.GetConsumerId())
	if cs == nil || cs.sub == nil {
		return nil
	}
	ids := make([]storage.Position, 0, len(cmd.GetMessageIds()))
	for _, id := range cmd.GetMessageIds() {
		ids = append(ids, storage.Position{Ledger: int64(id.GetLedgerId()), Entry: int64(id.GetEntryId())})
	}
	t := cs.sub.topic
	t.locked(func() {
		if cmd.ConsumerEpoch != nil {
			cs.epoch = ptr(cmd.GetConsumerEpoch())
		}
		cs.sub.redeliverFrom(cs, ids)
	})
	t.signal()
	return nil
}
