package client

import (
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// message handles one MESSAGE: verify, decompress, unbatch, filter, then queue for the
// application (or the DLQ). Runs on the connection's reader goroutine.
func (pc *partitionConsumer) message(cmd *pb.CommandMessage, payload []byte, mem *readerMemory) {
	pc.mu.Lock()
	seeking := pc.seeking
	pc.mu.Unlock()
	if seeking {
		// Sent before the seek took effect; the resubscribe that follows resets the flow.
		return
	}
	epoch := pc.epoch.Load()
	msgs, skipped, err := pc.decode(cmd, payload, epoch, &mem.meta, mem.msgs[:0])
	if err != nil {
		pc.log.Warn("discarding undecodable message", "id", cmd.GetMessageId(), "err", err)
		pc.discard(cmd.GetMessageId())
		pc.delivered(1)
		return
	}
	if skipped > 0 {
		pc.delivered(skipped)
	}
	o := &pc.parent.opts
	out := msgs[:0]
	for _, m := range msgs {
		m.epoch = epoch
		if o.DLQ != nil && o.DLQ.MaxDeliveries > 0 && m.RedeliveryCount >= o.DLQ.MaxDeliveries && pc.parent.dlq != nil {
			pc.parent.dlq.route(m)
			pc.delivered(1)
			continue
		}
		out = append(out, m)
	}
	if o.ReceiverQueueBytes > 0 {
		pc.noteSizes(out)
	}
	pc.parent.incoming.push(out...)
	if cap(msgs) <= maxReusedMessages {
		clear(msgs) // the queue has them; the reader's list keeps none alive
		mem.msgs = msgs[:0]
	}
}

// discard acknowledges an entry the client cannot read, with validation_error, as upstream's
// clients do, so the broker does not redeliver it forever.
func (pc *partitionConsumer) discard(id *pb.MessageIdData) {
	c := pc.conn()
	if c == nil || id == nil {
		return
	}
	c.writeCmd(&pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum(), Ack: &pb.CommandAck{
		ConsumerId:      proto.Uint64(pc.id),
		AckType:         pb.CommandAck_Individual.Enum(),
		MessageId:       []*pb.MessageIdData{{LedgerId: id.LedgerId, EntryId: id.EntryId}},
		ValidationError: pb.CommandAck_ChecksumMismatch.Enum(),
	}})
}

// decode turns one entry into messages, appended to into, returning also how many of its
// messages were skipped (already acknowledged, or before a reader's start).
func (pc *partitionConsumer) decode(cmd *pb.CommandMessage, payload []byte, epoch uint64, scratch *wire.MetadataScratch, into []*Message) ([]*Message, int, error) {
	if payload == nil {
		return nil, 0, wire.ErrChecksumMismatch
	}
	// The frame's checksum was verified when it was read (a bad one leaves payload nil).
	// Into the reader's scratch: nothing of meta outlives this call, and the strings the
	// messages keep are shared with the letters before (wire.Strings).
	meta, body, err := scratch.ParseVerifiedPayload(payload)
	if err != nil {
		return nil, 0, err
	}
	if meta.GetCompression() != pb.CompressionType_NONE {
		body, err = pc.cl.codecs.decompress(meta.GetCompression(), body, int(meta.GetUncompressedSize()))
		if err != nil {
			return nil, 0, err
		}
	}
	base := idFromPB(cmd.GetMessageId(), pc.partition)
	base.BatchIndex = -1
	common := Message{
		Topic:           pc.topic,
		PublishTime:     fromMillis(meta.GetPublishTime()),
		ProducerName:    meta.GetProducerName(),
		RedeliveryCount: cmd.GetRedeliveryCount(),
		SchemaVersion:   meta.GetSchemaVersion(),
		ReplicatedFrom:  meta.GetReplicatedFrom(),
		consumer:        pc,
		schema:          pc.parent.opts.Schema,
	}
	if pc.beforeTime(common.PublishTime, epoch) {
		return nil, max(int(meta.GetNumMessagesInBatch()), 1), nil
	}
	if meta.NumMessagesInBatch == nil {
		m := common
		m.ID = base
		m.Payload = body
		m.Properties = propsFromPB(meta.GetProperties())
		m.Key = meta.GetPartitionKey()
		m.OrderingKey = string(meta.GetOrderingKey())
		m.EventTime = fromMillis(meta.GetEventTime())
		m.seq = int64(meta.GetSequenceId())
		m.SequenceID = &m.seq
		if pc.beforeStart(m.ID) {
			return nil, 1, nil
		}
		return append(into, &m), 0, nil
	}
	n := int(meta.GetNumMessagesInBatch())
	parts, err := scratch.ParseBatch(body, n)
	if err != nil {
		return nil, 0, err
	}
	ackSet := cmd.GetAckSet()
	tracker := newBatchAcks(len(parts))
	msgs := slices.Grow(into, len(parts))
	skipped := 0
	for i, bm := range parts {
		id := base
		id.BatchIndex, id.BatchSize = int32(i), int32(len(parts))
		if len(ackSet) > 0 && !bitSet(ackSet, i) {
			// Already acknowledged (a cleared bit in ack_set).
			tracker.ack(i)
			skipped++
			continue
		}
		if pc.beforeStart(id) {
			tracker.ack(i)
			skipped++
			continue
		}
		m := common
		m.ID = id
		m.Payload = bm.Payload
		sm := bm.Meta
		m.Properties = propsFromPB(sm.GetProperties())
		m.Key = sm.GetPartitionKey()
		m.OrderingKey = string(sm.GetOrderingKey())
		m.EventTime = fromMillis(sm.GetEventTime())
		m.seq = int64(meta.GetSequenceId()) + int64(i)
		if sm.SequenceId != nil {
			m.seq = int64(sm.GetSequenceId())
		}
		m.SequenceID = &m.seq
		m.batch = tracker
		msgs = append(msgs, &m)
	}
	return msgs, skipped, nil
}

func bitSet(words []int64, i int) bool {
	w := i / 64
	return w < len(words) && words[w]&(1<<(uint(i)%64)) != 0
}

// beforeStart reports whether a reader must skip id: before its start position, or at it
// when the start is exclusive.
func (pc *partitionConsumer) beforeStart(id MessageID) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pc.hasStart {
		return false
	}
	return pc.beforeStartLocked(id)
}

// beforeTime reports whether a reader that sought by time must skip a message published at
// t, received on the subscription of epoch; the first message at or after the time ends the
// filter. A message of an earlier subscription is skipped (it is stale anyway) and leaves
// the filter alone.
func (pc *partitionConsumer) beforeTime(t time.Time, epoch uint64) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.minPublish.IsZero() {
		return false
	}
	if epoch != pc.minPublishEpoch || t.Before(pc.minPublish) {
		return true
	}
	pc.minPublish = time.Time{}
	return false
}

func (pc *partitionConsumer) beforeStartLocked(id MessageID) bool {
	start := pc.startID
	if start.BatchIndex < 0 && id.BatchIndex >= 0 {
		// A start id without batch index names the whole entry.
		c := MessageID{Ledger: id.Ledger, Entry: id.Entry}.Compare(MessageID{Ledger: start.Ledger, Entry: start.Entry})
		return c < 0 || (c == 0 && !pc.startInclusive)
	}
	c := id.Compare(start)
	return c < 0 || (c == 0 && !pc.startInclusive)
}
