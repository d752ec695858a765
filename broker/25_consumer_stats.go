package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// CONSUMER_STATS → CONSUMER_STATS_RESPONSE with what the broker knows of that consumer: the
// same figures as the consumer's entry in the admin topic stats (rates from the same sampler,
// which the first request starts, so that one's rates are zero). msgBacklog counts entries, as
// upstream's does; msgRateExpired is the subscription's, as upstream's.

func (c *conn) handleConsumerStats(cmd *pb.CommandConsumerStats) error {
	reqID := cmd.GetRequestId()
	resp := &pb.CommandConsumerStatsResponse{RequestId: &reqID}
	cs := c.consumer(cmd.GetConsumerId())
	if cs == nil || cs.sub == nil {
		resp.ErrorCode = pb.ServerError_ConsumerNotFound.Enum()
		resp.ErrorMessage = ptr("Consumer not found")
	} else {
		t := cs.sub.topic
		c.b.startSampler()
		now := time.Now()
		t.locked(func() {
			resp.ConsumerName = &cs.name
			resp.AvailablePermits = ptr(uint64(max(cs.permits, 0)))
			resp.UnackedMessages = ptr(uint64(max(cs.unacked, 0)))
			resp.Address = &c.remote
			resp.ConnectedSince = ptr(cs.since.UTC().Format(time.RFC3339Nano))
			resp.Type = ptr(cs.sub.subType.String())
			r := c.b.rateOf(cs, cs.counters(), now)
			resp.MsgRateOut, resp.MsgThroughputOut, resp.MsgRateRedeliver = &r.msgs, &r.bytes, &r.redeliver
			resp.MessageAckRate = &r.acks
			resp.MsgRateExpired = ptr(c.b.rateOf(cs.sub, cs.sub.counters(), now).expired)
			resp.MsgBacklog = ptr(uint64(cs.sub.backlogEntries()))
		})
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_CONSUMER_STATS_RESPONSE.Enum(), ConsumerStatsResponse: resp}, nil)
	return nil
}
