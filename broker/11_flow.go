package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// FLOW adds permits to a consumer; permits count messages, so a batch entry uses as many as it
// holds. A FLOW for an unknown consumer is ignored (it may have just been closed).

func (c *conn) handleFlow(cmd *pb.CommandFlow) error {
	cs := c.consumer(cmd.GetConsumerId())
	if cs == nil || cs.sub == nil {
		return nil
	}
	t := cs.sub.topic
	t.locked(func() {
		cs.permits += int64(cmd.GetMessagePermits())
		cs.lastFlow = time.Now()
	})
	t.signal()
	return nil
}
