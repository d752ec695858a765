package client

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// BrokerStats is what the broker says of a consumer (CONSUMER_STATS, as the C++ client's
// getBrokerConsumerStats asks it), summed over the partitions of a partitioned topic.
type BrokerStats struct {
	MsgRateOut       float64 // messages per second delivered
	MsgThroughputOut float64 // bytes per second delivered
	MsgRateRedeliver float64
	MessageAckRate   float64
	AvailablePermits int64
	// UnackedMessages counts messages delivered and not acknowledged; upstream brokers track
	// it for Shared and Key_Shared subscriptions only.
	UnackedMessages int64
	// BacklogEntries is the subscription's backlog as the broker reports it here: entries
	// (a batch is one), not messages.
	BacklogEntries int64
}

// BrokerStats asks the broker for the consumer's stats.
func (c *Consumer) BrokerStats(ctx context.Context) (BrokerStats, error) {
	var sum BrokerStats
	for _, pc := range c.partitionList() {
		st, err := pc.brokerStats(ctx)
		if err != nil {
			return BrokerStats{}, err
		}
		sum.MsgRateOut += st.MsgRateOut
		sum.MsgThroughputOut += st.MsgThroughputOut
		sum.MsgRateRedeliver += st.MsgRateRedeliver
		sum.MessageAckRate += st.MessageAckRate
		sum.AvailablePermits += st.AvailablePermits
		sum.UnackedMessages += st.UnackedMessages
		sum.BacklogEntries += st.BacklogEntries
	}
	return sum, nil
}

func (pc *partitionConsumer) brokerStats(ctx context.Context) (BrokerStats, error) {
	var st BrokerStats
	err := pc.cl.withRetry(ctx, "consumer stats", func(ctx context.Context) error {
		resp, err := pc.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_CONSUMER_STATS.Enum(),
			ConsumerStats: &pb.CommandConsumerStats{ConsumerId: proto.Uint64(pc.id)}})
		if err != nil {
			return err
		}
		r := resp.GetConsumerStatsResponse()
		if r == nil {
			return fmt.Errorf("%w: CONSUMER_STATS answered with %v", ErrProtocol, resp.GetType())
		}
		if r.ErrorCode != nil {
			return serverError(r.GetErrorCode(), r.GetErrorMessage())
		}
		st = BrokerStats{
			MsgRateOut: r.GetMsgRateOut(), MsgThroughputOut: r.GetMsgThroughputOut(),
			MsgRateRedeliver: r.GetMsgRateRedeliver(), MessageAckRate: r.GetMessageAckRate(),
			AvailablePermits: int64(r.GetAvailablePermits()), UnackedMessages: int64(r.GetUnackedMessages()),
			BacklogEntries: int64(r.GetMsgBacklog()),
		}
		return nil
	})
	return st, err
}
