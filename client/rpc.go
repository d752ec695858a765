package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// readLoop decodes frames and dispatches them until the connection fails.
func (c *conn) readLoop(r *frameReader) {
	defer c.wg.Done()
	for {
		f, err := r.Next()
		if err != nil {
			// A payload error (bad checksum) leaves the stream aligned: the consumer answers
			// it; anything else means the stream cannot be trusted.
			if f.Cmd != nil && f.Cmd.GetType() == pb.BaseCommand_MESSAGE {
				c.lastRecv.Store(time.Now().UnixNano())
				c.badMessage(f.Cmd.GetMessage(), err, &r.mem)
				continue
			}
			if c.isClosed() {
				return
			}
			c.close(fmt.Errorf("%w: read from %s: %w", ErrClosed, c.physical, err))
			return
		}
		c.lastRecv.Store(time.Now().UnixNano())
		c.dispatch(f, &r.mem)
	}
}

func (c *conn) dispatch(f wire.Frame, mem *readerMemory) {
	cmd := f.Cmd
	switch cmd.GetType() {
	case pb.BaseCommand_PING:
		c.writeCmd(&pb.BaseCommand{Type: pb.BaseCommand_PONG.Enum(), Pong: &pb.CommandPong{}})
	case pb.BaseCommand_PONG:
	case pb.BaseCommand_MESSAGE:
		m := cmd.GetMessage()
		if h := c.consumer(m.GetConsumerId()); h != nil {
			h.message(m, f.Payload, mem) // the frame's own buffer (frameReader.Next)
		}
	case pb.BaseCommand_SEND_RECEIPT:
		if h := c.producer(cmd.GetSendReceipt().GetProducerId()); h != nil {
			h.receipt(cmd.GetSendReceipt())
		}
	case pb.BaseCommand_SEND_ERROR:
		if h := c.producer(cmd.GetSendError().GetProducerId()); h != nil {
			h.sendError(cmd.GetSendError())
		}
	case pb.BaseCommand_CLOSE_PRODUCER:
		cp := cmd.GetCloseProducer()
		c.mu.Lock()
		h := c.producers[cp.GetProducerId()]
		delete(c.producers, cp.GetProducerId())
		c.mu.Unlock()
		if h != nil {
			h.closedByBroker(cp)
		}
	case pb.BaseCommand_CLOSE_CONSUMER:
		cc := cmd.GetCloseConsumer()
		c.mu.Lock()
		h := c.consumers[cc.GetConsumerId()]
		delete(c.consumers, cc.GetConsumerId())
		c.mu.Unlock()
		if h != nil {
			h.closedByBroker(cc)
		}
	case pb.BaseCommand_ACTIVE_CONSUMER_CHANGE:
		a := cmd.GetActiveConsumerChange()
		if h := c.consumer(a.GetConsumerId()); h != nil {
			h.activeChange(a.GetIsActive())
		}
	case pb.BaseCommand_REACHED_END_OF_TOPIC:
		if h := c.consumer(cmd.GetReachedEndOfTopic().GetConsumerId()); h != nil {
			h.endOfTopic()
		}
	case pb.BaseCommand_AUTH_CHALLENGE:
		c.answerChallenge()
	case pb.BaseCommand_TOPIC_MIGRATED:
		c.log.Info("topic migrated", "to", cmd.GetTopicMigrated().GetBrokerServiceUrl())
	default:
		id, ok := responseRequestID(cmd)
		if !ok {
			c.log.Warn("ignoring unexpected command", "type", cmd.GetType())
			return
		}
		if cmd.GetType() == pb.BaseCommand_ERROR && id == wire.NoID {
			// A connection-level error (failed authentication): nothing can follow it.
			e := cmd.GetError()
			c.close(serverError(e.GetError(), e.GetMessage()))
			return
		}
		if ps := cmd.GetProducerSuccess(); ps != nil && ps.ProducerReady != nil && !ps.GetProducerReady() {
			// WaitForExclusive: queued behind another producer. The same request id is
			// answered again once this producer becomes ready; keep waiting.
			c.log.Info("producer waiting for exclusive access", "name", ps.GetProducerName())
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- cmd // buffered 1, written at most once
		}
	}
}

func (c *conn) badMessage(m *pb.CommandMessage, err error, mem *readerMemory) {
	c.log.Warn("discarding corrupt message", "consumer", m.GetConsumerId(), "err", err)
	if h := c.consumer(m.GetConsumerId()); h != nil {
		h.message(m, nil, mem)
	}
}

// request sends cmd with a fresh request id and waits for its answer. Cancelling ctx, its
// deadline, the client's OperationTimeout or the connection closing all end the wait and
// remove the pending entry. An ERROR answer becomes a *ServerError.
func (c *conn) request(ctx context.Context, cmd *pb.BaseCommand) (*pb.BaseCommand, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cl.opts.OperationTimeout)
		defer cancel()
	}
	id := c.cl.nextRequestID()
	setRequestID(cmd, id)
	ch := make(chan *pb.BaseCommand, 1)
	c.mu.Lock()
	if c.closed {
		err := c.closeErr
		c.mu.Unlock()
		return nil, err
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.writeCmd(cmd); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		if e := resp.GetError(); e != nil {
			return resp, serverError(e.GetError(), e.GetMessage())
		}
		return resp, nil
	case <-c.done:
		return nil, c.closedError()
	case <-ctx.Done():
		return nil, ctxError(ctx, cmd.GetType().String())
	}
}

// ctxError turns a finished context into ErrTimeout (deadline) or its own error (cancel).
func ctxError(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: %w", ErrTimeout, what, ctx.Err())
	}
	return fmt.Errorf("pulsar: %s: %w", what, ctx.Err())
}

// setRequestID stores id in the request id field of cmd's sub-command.
func setRequestID(cmd *pb.BaseCommand, id uint64) {
	p := proto.Uint64(id)
	switch {
	case cmd.Subscribe != nil:
		cmd.Subscribe.RequestId = p
	case cmd.Producer != nil:
		cmd.Producer.RequestId = p
	case cmd.Unsubscribe != nil:
		cmd.Unsubscribe.RequestId = p
	case cmd.CloseProducer != nil:
		cmd.CloseProducer.RequestId = p
	case cmd.CloseConsumer != nil:
		cmd.CloseConsumer.RequestId = p
	case cmd.PartitionMetadata != nil:
		cmd.PartitionMetadata.RequestId = p
	case cmd.LookupTopic != nil:
		cmd.LookupTopic.RequestId = p
	case cmd.ConsumerStats != nil:
		cmd.ConsumerStats.RequestId = p
	case cmd.Seek != nil:
		cmd.Seek.RequestId = p
	case cmd.GetLastMessageId != nil:
		cmd.GetLastMessageId.RequestId = p
	case cmd.GetTopicsOfNamespace != nil:
		cmd.GetTopicsOfNamespace.RequestId = p
	case cmd.GetSchema != nil:
		cmd.GetSchema.RequestId = p
	case cmd.GetOrCreateSchema != nil:
		cmd.GetOrCreateSchema.RequestId = p
	case cmd.Ack != nil:
		cmd.Ack.RequestId = p
	}
}

// responseRequestID returns the request id an answer carries.
func responseRequestID(cmd *pb.BaseCommand) (uint64, bool) {
	switch cmd.GetType() {
	case pb.BaseCommand_SUCCESS:
		return cmd.GetSuccess().GetRequestId(), true
	case pb.BaseCommand_ERROR:
		return cmd.GetError().GetRequestId(), true
	case pb.BaseCommand_PRODUCER_SUCCESS:
		return cmd.GetProducerSuccess().GetRequestId(), true
	case pb.BaseCommand_PARTITIONED_METADATA_RESPONSE:
		return cmd.GetPartitionMetadataResponse().GetRequestId(), true
	case pb.BaseCommand_LOOKUP_RESPONSE:
		return cmd.GetLookupTopicResponse().GetRequestId(), true
	case pb.BaseCommand_CONSUMER_STATS_RESPONSE:
		return cmd.GetConsumerStatsResponse().GetRequestId(), true
	case pb.BaseCommand_GET_LAST_MESSAGE_ID_RESPONSE:
		return cmd.GetGetLastMessageIdResponse().GetRequestId(), true
	case pb.BaseCommand_GET_TOPICS_OF_NAMESPACE_RESPONSE:
		return cmd.GetGetTopicsOfNamespaceResponse().GetRequestId(), true
	case pb.BaseCommand_GET_SCHEMA_RESPONSE:
		return cmd.GetGetSchemaResponse().GetRequestId(), true
	case pb.BaseCommand_GET_OR_CREATE_SCHEMA_RESPONSE:
		return cmd.GetGetOrCreateSchemaResponse().GetRequestId(), true
	case pb.BaseCommand_ACK_RESPONSE:
		return cmd.GetAckResponse().GetRequestId(), true
	}
	return 0, false
}
